"""Failure signatures of the storage a run saves to (round 34 of issue 45: checkpoints and caches on shared and network
file systems): ranks that move or delete the same checkpoint directory at once, a file removed on NFS while still
open, and a file system that does not implement the file locks a writer takes; session 28: a storage I/O error on a
named file, a stale NFS file handle and a FUSE mount whose daemon is gone. Each pattern is the wording of the
component that prints it, never one log's: CPython's OSError text (Objects/exceptions.c, OSError_str: "[Errno N]
strerror: 'src' -> 'dst'" for a failed os.rename/os.replace/os.renames), the Linux NFS client's name for a deleted file
still open (fs/nfs/unlink.c, nfs_sillyrename: ".nfs" and 24 hex digits), tensorstore's file kvstore ("Failed to acquire
lock on file: ... [OS error: ...]", file_key_value_store.cc, its words as the corpus log prints them) and HDF5's sec2
driver ("unable to lock file, errno = N, error message = '...'", H5FDsec2.c, from memory: not read in this session),
the C library's EIO, ESTALE and ENOTCONN (strerror: "Input/output error", in any language strerror.py has; "Stale file
handle", glibc before 2.18 "Stale NFS file handle"; "Transport endpoint is not connected") on a named path, in
CPython's "[Errno N] TEXT: 'PATH'" or a C program's "PATH: TEXT"; never a socket's ENOTCONN, which names no path.
sigmessages.py places this table beside the model repositories' (sigmodels.py): before the last resorts, whose
"No such file or directory" would say a file is missing when another rank moved it. The real logs they are measured
on are tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig
from dscluster.strerror import EIO

# A C program's absolute path before the C library's error text (coreutils' "cp: error reading '/x': TEXT", tar's
# "tar: /x: TEXT", any language's quotes), the path without a colon.
_C_PATH = r"(?:^|[\s:])['\"‘「`]?/[^\n'\"’」:]{1,200}['\"’」]?: "
# Review 108: paths with no storage under them, before their leading slash: the kernel's own files (/proc, /sys) and
# device nodes other than disks (/dev/nvidia-uvm, a serial port /dev/ttyUSB0, /dev/shm's memory), whose EIO and ESTALE
# are a driver's or the kernel's answer; for ESTALE also the container engines' overlay storage (/var/lib/docker,
# /var/lib/containers), where overlayfs verifying its layers answers so.
_KERNEL_FILES = r"/(?:proc|sys)/|/dev/(?!sd|hd|vd|xvd|nvme|md|dm-|mapper/|disk/|loop)"
_LAYERS = r"/var/lib/(?:docker|containers)/"
_NOT_KERNEL = f"(?!{_KERNEL_FILES})"
_NOT_KERNEL_OR_LAYER = f"(?!{_KERNEL_FILES}|{_LAYERS})"
# A checkpoint's file or directory (what a save writes last), as the rename's destination names it.
_CKPT = r"(?:checkpoint|ckpt|\.pth?\b|\.pth\.tar|\.safetensors|\.bin\b)"


def _c_path(not_under: str) -> str:
    """_C_PATH for a path not under what `not_under` (a lookahead before the leading slash) excludes."""
    return r"(?:^|[\s:])['\"‘「`]?" + not_under + r"/[^\n'\"’」:]{1,200}['\"’」]?: "


STORAGE_SIGNATURES: tuple[Signature, ...] = (
    # A save that writes a temporary name and renames it (transformers' Trainer: tmp-checkpoint-N -> checkpoint-N in
    # 4.36's _save_checkpoint, os.renames in 4.49's; timm's tmp.pth.tar -> last.pth.tar) fails in the second process
    # to rename: the source is gone (ENOENT) or the destination is already there (ENOTEMPTY, EEXIST). A checkpoint
    # directory that rmtree finds refilled (ENOTEMPTY: another rank still writes into it), or emptied under it (an
    # entry gone between rmtree's listing and its unlink, _rmtree_safe_fd's FileNotFoundError), or, under rank
    # prefixes, already removed by another rank, is the same race. rmtree's FileNotFoundError from its first lstat,
    # with no rank prefix, is a path that was never there (file-missing). Round 185 (live): the temporary name may end
    # the file's name too (torch.save(state, path + ".tmp"), then os.replace onto path: 'last.pt.tmp' -> 'last.pt').
    _sig("ckpt-save-race",
         r"\[Errno (?:2|17|39)\] [^\n:]{0,40}: '(?:[^'\n]*[/\\])?[^'/\\\n]*?(?<![a-z])(?:tmp|temp(?!l)|staging)"
         r"[^'/\\\n]*' -> "
         r"'[^'\n]*" + _CKPT + r"|"
         r"\[Errno 39\] Directory not empty: '[^'\n]*(?:checkpoint|ckpt)|"
         r"\bin _rmtree_(?:safe_fd|unsafe)\b(?:\n[^\n]*){0,6}?\n[^\n]*?FileNotFoundError: \[Errno 2\]|"
         r"\[rank\d+\]:? +File \"[^\"\n]*shutil\.py\", line \d+, in rmtree\b(?:[^\n]{0,300}?|(?:\n[^\n]*){0,8}?\n[^\n]*?)"
         r"FileNotFoundError: \[Errno 2\]",
         "Several processes saved, moved or deleted the same checkpoint at once: each rank (or each node's rank 0) "
         "renamed the temporary checkpoint to its final name, or removed an old checkpoint directory, so the ones "
         "that came second found it gone or already replaced. It happens where every rank runs the checkpoint's file "
         "operations on storage they share (transformers 4.36.0's and 4.49's Trainer, a script's own save, rotation "
         "or --overwrite).",
         "Let one process do a checkpoint's file operations (rank 0 only, then a barrier before the others go on; "
         "the Trainer's save_on_each_node only with node-local disks), or upgrade the library whose release does it "
         "from every rank (transformers 4.36.1+; 4.49's own fix); remove the leftover tmp-checkpoint directory, then "
         "resume from the last complete checkpoint.", retry=False),
    # Round 185 (live): shutil.rmtree's own first lstat of the path (Lib/shutil.py rmtree: `orig_st = os.lstat(path,
    # dir_fd=dir_fd)`, its error passed to onerror/onexc and raised from rmtree's frame) finding no such path: the
    # directory to delete is not there. Only rmtree's frame as the last one before the error: an entry gone under
    # _rmtree_safe_fd is ckpt-save-race's (above), a copytree's or os.remove's FileNotFoundError another cause.
    _sig("rmtree-dir-gone",
         r"[/\\]shutil\.py\", line \d+, in rmtree\n(?:(?![^\n]*\bFile \")[^\n]*\n){0,4}?[^\n]*?"
         r"FileNotFoundError: \[Errno 2\]",
         "shutil.rmtree was asked to delete a directory that is not there. In a distributed run this is most often "
         "another rank (or another process) that deleted it first: every rank runs the same cleanup of a shared "
         "directory (temporary shards, an old cache or checkpoint), and all but the first find it gone; otherwise "
         "the directory was never created on this node.",
         "Delete a shared directory from one rank only (rank 0, after a barrier so that no rank still reads it), or "
         "pass ignore_errors=True (shutil.rmtree(path, ignore_errors=True)) where it may already be gone. A restart "
         "runs the same cleanup again.", retry=False),
    # Round 185 (live): SQLite's SQLITE_BUSY (sqlite3ErrStr: "database is locked"), as Python's sqlite3 raises it
    # (Modules/_sqlite/util.c _pysqlite_seterror: sqlite3.OperationalError) once its busy timeout (5 s by default)
    # has passed, and as the ORMs over it re-raise it (SQLAlchemy's "(sqlite3.OperationalError) database is locked",
    # peewee's and Django's OperationalError). Not SQLITE_LOCKED's "database table is locked" (one connection's own
    # statements), nor "unable to open database file" or "attempt to write a readonly database".
    _sig("sqlite-database-locked",
         r"\bOperationalError\)?:? (?:\(sqlite3\.OperationalError\) )?database is locked\b",
         "Several processes write to the same SQLite database file at once: SQLite lets one writer hold the file at a "
         "time, and a writer that waits longer than the busy timeout (5 s by default in Python's sqlite3) fails with "
         "'database is locked'. In a distributed run every rank opens the same database (a feature or data cache, an "
         "Optuna or MLflow store on sqlite) and writes in long transactions; on a network file system SQLite's locks "
         "may not work at all.",
         "Write the database from one rank only (rank 0 builds it, a barrier, then the others open it read-only), or "
         "give each rank its own file (cache_rank0.db, cache_rank1.db, ...); keep transactions short (commit every "
         "batch) and raise the timeout (sqlite3.connect(path, timeout=60)); keep SQLite files on a node-local disk, "
         "or use a database server for a store many processes write. A restart meets the same contention.",
         retry=False),
    _sig("nfs-open-file", r"\[Errno 16\] Device or resource busy: '[^'\n]*\.nfs[0-9a-f]{16,}|"
         r"\.nfs[0-9a-f]{16,}'?: Device or resource busy",
         "A file still held open (by this process, a DataLoader worker, a writer thread or another node) was deleted "
         "on an NFS mount: the NFS client keeps it as .nfsXXXX until the last holder closes it, and that file cannot "
         "be removed meanwhile, so removing its directory failed.",
         "Close the files before their directory is removed (stop the workers or writers holding them first), or "
         "keep temporary files on a node-local disk (TMPDIR=/tmp or a local scratch path, not the NFS home); the "
         ".nfs file goes away when the last process holding it exits.", retry=False),
    # Python's fcntl.flock/lockf line of the traceback, then the OSError under it; the rest of that line stops at the
    # next flock( (`[^\n]*` tried every one of a line's calls to its end: quadratic, review 53).
    _sig("fs-lock-unsupported", then(r"Failed to acquire lock on file", r"Function not implemented|No locks available") +
         r"|"
         r"unable to lock file, errno = (?:37|38)\b|"
         r"fcntl\.(?:flock|lockf)\((?:(?!fcntl\.(?:flock|lockf)\()[^\n])*\n[^\n]*(?:\[Errno 3[78]\]|Function not "
         r"implemented|No locks available)",
         "The file system the run writes to does not support file locks: a network file system (NFS without its "
         "lock service, Lustre mounted without flock, a FUSE or object-store mount) answers the writer's lock with "
         "'Function not implemented' (ENOSYS) or 'No locks available' (ENOLCK). The same save works on a local disk.",
         "Write checkpoints and caches to storage that supports locks (a node-local disk, or the shared file system "
         "mounted with locking: Lustre's flock option, NFS with its lock service), or turn the library's locking off "
         "where it offers that (HDF5_USE_FILE_LOCKING=FALSE); a restart fails the same way.", retry=False),
    # ESTALE: the NFS client's handle for a file or directory the server no longer has (replaced or removed from
    # another node, or the export failed over). No restart offered: the same race, or the stale mount, meets it again.
    # Review 108: not on /proc's entries (moby/moby#7303: "Cannot stat file /proc/67/fd/11: Stale NFS file handle", a
    # process gone) nor a container engine's overlay layers (podman-container-tools/podman#5816).
    _sig("nfs-stale-handle", r"\[Errno 116\] Stale (?:NFS )?file handle(?!: '(?:" + _KERNEL_FILES + "|" + _LAYERS +
         "))|" + _c_path(_NOT_KERNEL_OR_LAYER) + r"Stale (?:NFS )?file handle\b",
         "A file or directory on an NFS mount was replaced or removed on the server, or from another node, while this "
         "node still held it (a stale file handle): a checkpoint or cache directory deleted and re-created by another "
         "node, a compile cache on the shared mount (Triton's, torch extensions') written by several nodes at once, or "
         "the export remounted or failed over.",
         "Let one node do a checkpoint's or a cache's file operations (rank 0, then a barrier), and point compile "
         "caches at a node-local directory (TRITON_CACHE_DIR, TORCH_EXTENSIONS_DIR); if the mount itself is "
         "stale (`ls` on it fails on that node), remount it there (umount -l, then mount); then restart the run.",
         retry=False),
    # ENOTCONN on a path: a FUSE file system (s3fs, gcsfuse, blobfuse2, sshfs, JuiceFS, goofys) whose daemon exited
    # answers every access so until it is unmounted. A socket's ENOTCONN names no path and is not read here.
    _sig("fuse-mount-gone", r"\[Errno 107\] Transport endpoint is not connected: '|" + _C_PATH +
         r"Transport endpoint is not connected",
         "A FUSE mount the run reads or writes (s3fs, gcsfuse, blobfuse, sshfs, JuiceFS and the like) lost its daemon on "
         "that node: every access answers 'Transport endpoint is not connected' (ENOTCONN) until it is mounted again.",
         "On that node unmount it (fusermount -u PATH, or umount -l PATH) and mount it again; read why its daemon exited "
         "(its own log; the kernel's OOM killer often takes it: dmesg), then restart the run. A restart before the "
         "remount fails the same way.", retry=False),
    # Round 132: ENAMETOOLONG, a path component longer than the file system allows (255 bytes on ext4, xfs, NFS; fewer
    # on eCryptfs), in CPython's words ("[Errno 36] File name too long: 'PATH'", errno 63 on macOS) and the C library's
    # strerror ("File name too long") as a C program prints it after the path, which may itself be longer than _C_PATH reads. A name the code builds from its settings: DeepSpeed-Chat's
    # data cache named after every dataset, the model path and the options (DeepSpeedExamples#272).
    _sig("file-name-too-long", r"\bFile name too long\b",
         "A file could not be created or opened because its name is longer than the file system allows (255 bytes per "
         "name on ext4, xfs and NFS, fewer on an encrypted home directory; ENAMETOOLONG): a name the code builds from "
         "the run's settings (a data cache named after every dataset, the model path and the options, a checkpoint or "
         "swap file named after its contents) grew past it.",
         "Shorten what the name is built from (fewer or shorter dataset names, a shorter model or output path), or use "
         "a release of the tool that hashes such names (DeepSpeed-Chat's data cache, DeepSpeed's ZeRO-3 swap files "
         "since 0.13.3); keep caches on a plain local file system rather than an encrypted home. A restart builds the "
         "same name.", retry=False),
    # Round 142: DeepSpeed-Chat's data cache (dschat/utils/data/data_utils.py, earlier training/utils/data/) under
    # --data_output_path (default /tmp/data_files/, made with os.makedirs(exist_ok=True)): the shuffle indices it
    # np.save()s as f"{output_path}/{dataset_name}_seed{seed}_{split_name}_{data_split}_{split_i}.npy" and the datasets
    # it torch.save()s as traindata_/evaldata_ + a hash (Python's hash(), later sha256) + ".pt", refused: CPython's
    # EACCES on either, or torch's writer (caffe2/serialize/inline_container.cc: "File NAME cannot be opened.").
    # Not a missing file there (ENOENT: another node's or rank's cache, DeepSpeedExamples#558, #787): another cause.
    _sig("dschat-data-cache-unwritable",
         r"\[Errno 13\] [^\n:]{1,60}: '[^'\n]{0,400}?(?:_seed\d+_(?:train|eval)_\d+(?:,\d+)*_\d+\.npy|"
         r"/(?:train|eval)data_(?:-?\d+|[0-9a-f]{64})\.pt)'|"
         r"\bFile [^\n]{0,400}?/(?:train|eval)data_(?:-?\d+|[0-9a-f]{64})\.pt cannot be opened",
         "DeepSpeed-Chat could not write its data cache (the shuffle indices and tokenized datasets it keeps under "
         "--data_output_path, by default /tmp/data_files/): the directory is not this user's, most often a "
         "/tmp/data_files/ that another user's (or root's) DeepSpeed-Chat run made on the same machine.",
         "Pass --data_output_path a directory of your own on each node's local disk (the training scripts' main.py "
         "takes it), or have the other directory removed; then launch again. A restart is refused the same way.",
         retry=False),
    # EIO on a named file: CPython's "[Errno 5] Input/output error: 'PATH'" (not a bare one: print() to a terminal
    # that went away raises it too) and a C program's "'PATH': Input/output error" in any language.
    # Review 108: not a device node's or the kernel's file (a GPU pod's "OSError [Errno 5] Input/output error:
    # '/dev/nvidia-uvm'", pyserial's '/dev/ttyS11'): no storage under them.
    _sig("storage-io-error", r"\[Errno 5\] Input/output error: '" + _NOT_KERNEL + r"|" + _c_path(_NOT_KERNEL) +
         "(?:" + EIO + ")",
         "The storage answered a read or write of a file with an I/O error (EIO): a failing disk, a network file system "
         "whose server dropped or timed out (a soft NFS mount, Lustre or a FUSE mount losing its server), or on some "
         "network file systems a full disk.",
         "On that node read the kernel's log (dmesg: disk or NFS/Lustre errors) and check the mount and its free space "
         "(`df -h PATH`); move the run's files to healthy storage, then restart it.", retry=False),
)
