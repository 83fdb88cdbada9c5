"""Failure signatures from the threads of model repositories whose users fine-tune on several GPUs (round 28 of issue
45: ChatGLM, GLM-4, Qwen, their Chinese-language issues): a fine-tuning script written for an older Python refused by
Python 3.11's dataclasses, and a process killed while transformers loads a checkpoint's shards into host memory. Each
pattern is the wording of the component that prints it (CPython's Lib/dataclasses.py, transformers' modeling_utils.py
progress bar, the shell's and torch elastic's report of a SIGKILL), never one log's. sigmessages.py places this table
with PyTorch's own (sigtorch.py), before the training stack's and the last resorts: more specific than a Python error's
type and than a bare kill (`killed`, which restarts once). The real logs they are measured on are
tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig

MODEL_SIGNATURES: tuple[Signature, ...] = (
    # CPython's dataclasses (Lib/dataclasses.py, _get_field): "mutable default {type(f.default)} for field {f.name} is
    # not allowed: use default_factory". Up to 3.10 it is raised only for a list, dict or set default; since 3.11
    # (python/cpython e029c53, bpo-44674) for any default whose class is unhashable, such as an instance of another
    # dataclass (a TrainingArguments): code that imported on 3.10 fails at import on 3.11+. A list/dict/set default
    # is the code's own mistake on every Python and is left to the exception's type.
    _sig("python-too-new", r"ValueError: mutable default <class '(?!(?:list|dict|set)')[\w.]+'> for field \w+ is not "
         r"allowed: use default_factory",
         "The code was written for Python 3.10 or older and runs on Python 3.11+: since 3.11 a dataclass field's "
         "default must be hashable, so a default that is an instance of another class (a dataclass such as "
         "TrainingArguments) is refused when the module is imported.",
         "Run it with the Python version the code was written for (3.10), or change that field to "
         "field(default_factory=...) in the file the traceback names; every rank fails the same way until then.",
         retry=False),
    # transformers' from_pretrained shows a progress bar "Loading checkpoint shards:  NN%|...| i/n" (modeling_utils.py,
    # logging.tqdm(..., desc="Loading checkpoint shards")) while it reads the shards into host memory; a bar cut
    # before 100% on the same line as the shell's "Killed" or torch elastic's "failed (exitcode: -9)" is a SIGKILL
    # while the weights filled RAM: the kernel's OOM killer.
    _sig("memcg-oom", then(r"Loading checkpoint shards:\s+[1-9]?\d%", r"\bKilled\b|\(exitcode: -9\)"),
         "A process was killed while loading the model's checkpoint shards into host memory: the machine (or the "
         "container's or batch job's memory limit) has less free RAM than the weights need, times the number of "
         "processes on the node that load them at once, and the kernel's OOM killer stopped it.",
         "Give the node more host memory or load less at once: fewer processes per node, a quantized or smaller "
         "model, low_cpu_mem_usage=True, loading straight onto the GPU (device_map to the rank's GPU), or ZeRO-3's "
         "zero.Init; `free -g` while it loads shows it. A restart runs out of memory the same way.", retry=False),
)
