"""Failure signatures of determinism, seeding and reproducibility settings, from live round 190 of issue 45: torch's
deterministic-algorithms alert for an op with no deterministic implementation, cuBLAS's demand for a workspace
setting under the same mode, a seed torch cannot hold, an RNG state of the wrong type given back to torch, something
other than a torch.Generator passed as a generator, random_split's lengths that do not add up, and a DataLoader
worker_init_fn that does not take the worker id. Each pattern is the wording of the torch code that prints it
(aten/src/ATen/Context.cpp, torch/random.py, torch/utils/data/dataset.py and _utils/worker.py, the Python argument
parser's refusal), never one log's. sigdata.py places this table at the head of its own; every one is deterministic:
a restart meets the same error."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

SEEDING_SIGNATURES: tuple[Signature, ...] = (
    # ATen's Context::alertNotDeterministic (aten/src/ATen/Context.cpp): "<op> does not have a deterministic
    # implementation, but you set 'torch.use_deterministic_algorithms(True)'. ..." (torch 1.8+; the warn_only variant,
    # "... (True, warn_only=True)'", is a warning and does not match). CPU ops alert too (max_unpooling2d/3d).
    _sig("deterministic-op-unsupported",
         r"\b\w+ does not have a deterministic implementation, but you set "
         r"'torch\.use_deterministic_algorithms\(True\)'",
         "torch.use_deterministic_algorithms(True) is on, and the model calls an operation that torch has no "
         "deterministic implementation of on this device (the message names it: max_unpool, a CUDA index_add or "
         "scatter_add backward, histc, an adaptive or unpooling kernel...), so torch refuses it rather than run it "
         "nondeterministically.",
         "Keep determinism and avoid the operation (max_unpool2d -> nn.Upsample/interpolate or a ConvTranspose2d; "
         "another layer for the op named), or let it run while warning: torch.use_deterministic_algorithms(True, "
         "warn_only=True), or turn the mode off around that call only (torch.use_deterministic_algorithms(False) "
         "before it, True after). A restart fails the same way.", retry=False),
    # ATen's CuBLAS check under the same mode (aten/src/ATen/Context.cpp, alertCuBLASConfigNotDeterministic):
    # "Deterministic behavior was enabled with either `torch.use_deterministic_algorithms(True)` or
    # `at::Context::setDeterministicAlgorithms(true)`, but this operation is not deterministic because it uses CuBLAS
    # and you have CUDA >= 10.2. To enable deterministic behavior in this case, you must set an environment variable
    # before running your PyTorch application: CUBLAS_WORKSPACE_CONFIG=:4096:8 or CUBLAS_WORKSPACE_CONFIG=:16:8."
    _sig("deterministic-cublas-workspace",
         r"\bthis operation is not deterministic because it uses CuBLAS and you have CUDA >= 10\.2",
         "torch.use_deterministic_algorithms(True) is on and a matrix multiply runs through cuBLAS, which is "
         "deterministic only with a fixed workspace configuration: CUBLAS_WORKSPACE_CONFIG is not set in the rank's "
         "environment (or was set after CUDA started, from inside the script).",
         "Set CUBLAS_WORKSPACE_CONFIG=:4096:8 (or :16:8) in every rank's environment before torch initialises CUDA: "
         "export it in the job script or the launcher's environment, or os.environ[...] at the very top of the script "
         "before any CUDA call. A restart without it fails the same way.", retry=False),
    # torch.manual_seed / Generator.manual_seed (torch/random.py, _manual_seed_impl, then the C++ argument unpacking):
    # "Overflow when unpacking long long" (ValueError in torch 2.x, RuntimeError "... unpacking long" in 1.x) on a
    # seed above 64 bits; only where the call above it is a manual_seed.
    _sig("seed-out-of-range",
         r"\bmanual_seed\([^\n]{0,300}\n(?:[^\n^]{0,100}\^[^\n]{0,300}\n)?[^\n]{0,80}?"
         r"(?P<ev>(?:ValueError|RuntimeError): Overflow when unpacking long(?: long)?)\b",
         "torch.manual_seed (or a Generator's manual_seed) was given a number that does not fit in 64 bits: a seed "
         "derived from a hash digest taken whole (int(sha256(...).hexdigest(), 16)), a timestamp multiplied up, or "
         "seeds combined by multiplication; torch keeps a 64-bit seed.",
         "Reduce the seed into range before seeding, e.g. seed % 2**63 (or the digest's first 8 bytes: "
         "int(hexdigest[:16], 16) % 2**63), and derive per-rank or per-worker seeds by adding small offsets to it. A "
         "restart fails the same way.", retry=False),
    # torch.set_rng_state / Generator.set_state (torch/random.py, torch/csrc/Generator.cpp): "RNG state must be a
    # torch.ByteTensor" (torch 1.x and 2.x), the state given back as another dtype.
    _sig("rng-state-wrong-type", r"\bRNG state must be a torch\.ByteTensor\b",
         "An RNG state given back to torch (torch.set_rng_state, a Generator's set_state, torch.cuda.set_rng_state) "
         "is not the uint8 ByteTensor torch.get_rng_state() returned: the state was kept as a list (JSON, YAML) and "
         "rebuilt with torch.tensor(...), which makes int64, or was cast or converted (.float(), .tolist(), numpy) on "
         "its way through the checkpoint.",
         "Keep the state as the tensor it is (torch.save it with the checkpoint), or rebuild it with its dtype: "
         "torch.set_rng_state(torch.tensor(state_list, dtype=torch.uint8)); for a state moved to a device on load, "
         "pass state.cpu(). A restart fails the same way.", retry=False),
    # torch's Python argument parser (torch/csrc/utils/python_arg_parser.cpp) refusing a random function's generator
    # argument of another type: "random_() received an invalid combination of arguments - got (generator=int, ), but
    # expected one of: ... torch.Generator generator ..." (the DataLoader's base seed, dataloader.py; RandomSampler's
    # and random_split's randperm; a script's own torch.randn(..., generator=seed)).
    _sig("dataloader-generator-not-generator",
         r"\b\w+\(\) received an invalid combination of arguments - got \([^\n]{0,200}?\bgenerator=(?!Generator\b)"
         r"(?:int|str|float|numpy\.\w+|NoneType|list|tuple|dict)\b",
         "A generator= argument (the DataLoader's, a sampler's, random_split's or a random function's) was given a "
         "seed or another object instead of a torch.Generator: torch draws from the generator itself and needs the "
         "Generator object.",
         "Pass a seeded torch.Generator: g = torch.Generator(); g.manual_seed(SEED); DataLoader(..., generator=g) "
         "(likewise random_split(..., generator=torch.Generator().manual_seed(SEED))), or leave generator out and "
         "seed with torch.manual_seed(SEED). A restart fails the same way.", retry=False),
    # torch.utils.data.random_split (torch/utils/data/dataset.py): "Sum of input lengths does not equal the length of
    # the input dataset!" (torch 1.x and 2.x), lengths given as counts that do not add up.
    _sig("random-split-lengths", r"\bSum of input lengths does not equal the length of the input dataset!",
         "random_split was given lengths that do not add up to the dataset's length: counts computed as "
         "int(0.9 * n) and int(0.1 * n) each round down and lose an example, or the lengths were computed for "
         "another dataset size (before filtering, for another split).",
         "Compute the last length as the rest (train = int(0.9 * n); random_split(ds, [train, n - train], ...)), or "
         "pass fractions that sum to 1 (random_split(ds, [0.9, 0.1], generator=...), torch 1.13+), with a seeded "
         "generator so every rank draws the same split. A restart fails the same way.", retry=False),
    # The DataLoader worker calling the worker_init_fn with the worker's id (torch/utils/data/_utils/worker.py,
    # _worker_loop: `init_fn(worker_id)`), the function defined with no parameter or with more than one required.
    _sig("worker-init-fn-signature",
         r"\bin _worker_loop\n[^\n]{0,100}\binit_fn\(worker_id\)\n[^\n]{0,80}?(?P<ev>TypeError: [\w.<>]+\(\) (?:takes 0 "
         r"positional arguments but 1 was given|missing \d+ required positional arguments?: [^\n]{0,120}))",
         "The DataLoader's worker_init_fn does not take the one argument each worker calls it with, the worker's id "
         "(worker_init_fn(worker_id)): it was defined with no parameter, or with more than one required.",
         "Define it with one parameter: def seed_worker(worker_id): ... (worker_seed = torch.initial_seed() % 2**32); "
         "bind any other values with functools.partial(fn, rank=rank) at module level. A restart fails the same "
         "way.", retry=False),
)
