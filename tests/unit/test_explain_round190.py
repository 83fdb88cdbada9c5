"""Round 190's rules (issue 45, live: determinism, seeding and reproducibility settings; sigseeding.py): torch's
deterministic-algorithms alert for an op with no deterministic implementation and cuBLAS's workspace demand, a seed
above 64 bits under manual_seed, an RNG state given back as another dtype, a seed passed where a torch.Generator goes,
random_split's lengths that do not add up, a worker_init_fn that does not take the worker id; and a CUDA Generator on
a CPU build read as no-gpu (sigdevices.CUDA_NOT_BUILT). Each on its live case's log, second wordings, near misses."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

LIVE = Path(__file__).resolve().parents[1] / "data" / "live"

NEW = ("deterministic-op-unsupported", "deterministic-cublas-workspace", "seed-out-of-range", "rng-state-wrong-type",
       "dataloader-generator-not-generator", "random-split-lengths", "worker-init-fn-signature")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize(("case", "name"), [
    ("live-determinism-max-unpool-deterministic", "deterministic-op-unsupported"),
    ("live-determinism-seed-from-sha256", "seed-out-of-range"),
    ("live-determinism-rng-state-json-list", "rng-state-wrong-type"),
    ("live-determinism-dataloader-generator-int", "dataloader-generator-not-generator"),
    ("live-determinism-random-split-int-lengths", "random-split-lengths"),
    ("live-determinism-worker-init-no-arg", "worker-init-fn-signature"),
    ("live-determinism-cuda-generator-dataloader", "no-gpu"),
])
def test_each_case_log(case, name):
    assert sig((LIVE / case / "log.txt").read_text()) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n'


@pytest.mark.parametrize(("text", "name"), [
    # a CUDA op under the mode (torch 1.x wording of the same alert), ranks' prefixes
    ("[rank1]: " + _TB.replace("\n  ", "\n[rank1]:   ")
     + "[rank1]: RuntimeError: index_add_cuda_ does not have a deterministic implementation, but you set "
       "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this operation if that's "
       "acceptable for your application. You can also file an issue at https://github.com/pytorch/pytorch/issues to "
       "help us prioritize adding deterministic support for this operation.\n", "deterministic-op-unsupported"),
    (_TB + "RuntimeError: Deterministic behavior was enabled with either `torch.use_deterministic_algorithms(True)` or "
     "`at::Context::setDeterministicAlgorithms(true)`, but this operation is not deterministic because it uses CuBLAS "
     "and you have CUDA >= 10.2. To enable deterministic behavior in this case, you must set an environment variable "
     "before running your PyTorch application: CUBLAS_WORKSPACE_CONFIG=:4096:8 or CUBLAS_WORKSPACE_CONFIG=:16:8. For "
     "more information, go to https://docs.nvidia.com/cuda/cublas/index.html#cublasApi_reproducibility\n",
     "deterministic-cublas-workspace"),
    # torch 1.x: RuntimeError, "long"; a Generator seeded in the script itself
    (_TB + "    g.manual_seed(args.seed * 1000003 ** 4)\nRuntimeError: Overflow when unpacking long\n",
     "seed-out-of-range"),
    (_TB + '  File "/opt/venv/lib/python3.10/site-packages/torch/random.py", line 56, in set_rng_state\n'
     "    default_generator.set_state(new_state)\nTypeError: RNG state must be a torch.ByteTensor\n",
     "rng-state-wrong-type"),
    # RandomSampler's randperm given the seed (older torch, where the DataLoader does not draw its base seed first)
    (_TB + '  File "/opt/venv/lib/python3.10/site-packages/torch/utils/data/sampler.py", line 132, in __iter__\n'
     "    yield from torch.randperm(n, generator=generator).tolist()\n"
     "TypeError: randperm() received an invalid combination of arguments - got (int, generator=int), but expected "
     "one of:\n * (int n, *, torch.Generator generator, ...)\n", "dataloader-generator-not-generator"),
    # a worker_init_fn with a second required parameter
    ("TypeError: Caught TypeError in DataLoader worker process 1.\nOriginal Traceback (most recent call last):\n"
     '  File "/opt/venv/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", line 287, in _worker_loop\n'
     "    init_fn(worker_id)\nTypeError: seed_worker() missing 1 required positional argument: 'rank'\n",
     "worker-init-fn-signature"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize(("text", "name"), [
    # the warn_only variant is a warning; the run failed on something else (an all_reduce timeout here)
    ("UserWarning: max_unpooling2d_forward_out does not have a deterministic implementation, but you set "
     "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue at "
     "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support for this "
     "operation.\n" + _TB + "ValueError: could not convert string to float: 'n/a'\n", "deterministic-op-unsupported"),
    # a tensor built from a too-large Python int overflows too, with no manual_seed above it
    (_TB + "    ids = torch.tensor([hash_id], dtype=torch.long)\nRuntimeError: Overflow when unpacking long\n",
     "seed-out-of-range"),
    # a torch.Generator given with another argument wrong: not a generator mistake
    (_TB + "TypeError: randint() received an invalid combination of arguments - got (int, tuple, "
     "generator=torch._C.Generator, dtype=str), but expected one of:\n", "dataloader-generator-not-generator"),
    # a worker_init_fn that takes the id but fails inside its own body
    ("TypeError: Caught TypeError in DataLoader worker process 0.\nOriginal Traceback (most recent call last):\n"
     '  File "/opt/venv/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", line 306, in _worker_loop\n'
     "    init_fn(worker_id)\n"
     '  File "train.py", line 12, in seed_worker\n    np.random.seed(base + worker_id)\n'
     "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'\n", "worker-init-fn-signature"),
    # a collate_fn defined with no parameter: the fetcher calls it, not init_fn
    ("Original Traceback (most recent call last):\n"
     '  File "/opt/venv/lib/python3.10/site-packages/torch/utils/data/_utils/fetch.py", line 55, in fetch\n'
     "    return self.collate_fn(data)\nTypeError: collate() takes 0 positional arguments but 1 was given\n",
     "worker-init-fn-signature"),
])
def test_near_misses(text, name):
    assert sig(text) != name
