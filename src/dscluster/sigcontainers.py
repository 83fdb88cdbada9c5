"""Failure signatures of the container runtimes a GPU job starts in, read from their own words: enroot (and pyxis,
the scheduler plugin that runs enroot for each task and prints enroot's log line by line) and the NVIDIA container
runtime's requirement check (libnvidia-container's nvidia-container-cli, under Docker, Podman, containerd or enroot's
own NVIDIA hook). sigmessages.py places them before the GPU node's signatures (sigdevices.py): the container never
started, so nothing the program would have printed is there.

Each pattern is the wording of the component that prints it, never one log's:
- enroot-switchroot.c: `err(EXIT_FAILURE, "failed to execute: %s", argv[1])` after execvp, so the C library's
  strerror follows (`: No such file or directory`);
- enroot's runtime, cache and data directories are made with `mkdir -p` (coreutils' `mkdir: cannot create directory
  'P': Permission denied`); their defaults and the paths sites set all hold `enroot`, and pyxis prefixes each line of
  enroot's log with `pyxis:`;
- libnvidia-container's requirement check: `error_setx(err, "unsatisfied condition: %s", ...)`, printed by
  nvidia-container-cli as `requirement error: unsatisfied condition: cuda>=12.8`, newer versions adding `please update
  your driver to a newer version, or use an earlier cuda container` (the toolkit's Go rewrite: `unsatisfied condition:
  %v (%v)`).
`retry=False` throughout: the same image on the same node meets the same refusal.
The real logs they are measured on are tests/data/failures (tests/unit/test_failure_corpus.py).
"""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

CONTAINER_SIGNATURES: tuple[Signature, ...] = (
    # enroot starts the container's command through the image's /bin/sh (or the shell/entrypoint asked for):
    # ENOENT from execvp means the image has no such program.
    _sig("enroot-no-shell", r"enroot-switchroot: failed to execute: [^\n:]{1,200}: No such file or directory",
         "enroot could not start the container's command: the program it executes (the image's /bin/sh, through "
         "which enroot runs every command, or the shell or entrypoint asked for) does not exist in the image. Minimal "
         "images (hello-world, distroless, scratch-based ones) have no shell.",
         "Use an image that has /bin/sh (and bash where the command asks for it), e.g. one based on ubuntu or the NGC "
         "images; or give the command's full path inside the image. Check with enroot start IMAGE ls -l /bin/sh.",
         retry=False),
    # enroot's own directories (ENROOT_RUNTIME_PATH, ENROOT_CACHE_PATH, ENROOT_DATA_PATH, ENROOT_TEMP_PATH) could not
    # be made by the job's user.
    _sig("enroot-path-denied", r"(?:pyxis|enroot)[^\n]{0,80}?mkdir: cannot create directory '[^'\n]{1,200}': "
         r"Permission denied|mkdir: cannot create directory '[^'\n]{0,200}enroot[^'\n]{0,200}': Permission denied",
         "enroot could not create one of its directories (runtime, cache or data path) as the job's user: the path "
         "enroot.conf gives (e.g. /run/enroot) is not writable by that user, so importing or starting the image "
         "fails on that node.",
         "Set per-user paths in /etc/enroot/enroot.conf on every node, e.g. ENROOT_RUNTIME_PATH "
         "/run/enroot/user-$(id -u), ENROOT_CACHE_PATH and ENROOT_DATA_PATH under a directory each user may write "
         "(or under $HOME), and create the parent directories writable (mode 1777 where they are shared); check "
         "with enroot import as that user on the node.", retry=False),
    # The image's NVIDIA_REQUIRE_CUDA (cuda>=X, driver>=N, brand=...) checked against the host's driver before start.
    _sig("container-cuda-requirement", r"unsatisfied condition: (?:cuda|driver) ?>=",
         "The NVIDIA container runtime refused to start the image: the image declares the CUDA version it needs "
         "(NVIDIA_REQUIRE_CUDA, cuda>=X) and the host's NVIDIA driver supports only an older CUDA (nvidia-smi's "
         "\"CUDA Version\").",
         "Update the NVIDIA driver on the host to one that supports that CUDA version, or use an image (tag) built for "
         "a CUDA the driver supports; the same image on every node. NVIDIA_DISABLE_REQUIRE=true skips the check, "
         "which only helps where CUDA's forward compatibility works (data-center GPUs with the image's compat "
         "libraries).", retry=False),
)
