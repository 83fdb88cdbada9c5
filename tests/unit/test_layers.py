"""The layers docs/architecture.md states, kept: imports point downward, no module imports itself back.

Read from the source with `ast` (every import, those inside functions too; `if TYPE_CHECKING:` blocks
are annotations, not imports). A package not named in LAYERS (errors, i18n, paths, fsutil, explain,
sim/, deploy/ ...) may be imported from anywhere and is not checked itself.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import dscluster

SRC = Path(dscluster.__file__).parent

# Higher imports lower, never the other way (docs/architecture.md, "Layers").
LAYERS = {
    "cli": 5, "api": 5, "commands": 5, "jupyter": 5,  # views
    "runs": 4,  # the service
    "launcher": 3, "doctor": 3,  # pure builders; doctor beside them
    "cluster": 2, "node": 2,  # machines: running commands on nodes; the node-side agent
    "train": 1,  # inside the ranks
}
# The upward edges there are, each with its reason. A new one needs a reason here, or a fix.
ALLOWED = {
    ("dscluster.cluster.specparse", "dscluster.launcher"):
        "a spec's `launcher` is checked against the backends' registry (launcher/backends), whose modules "
        "import nothing above the base modules when loaded",
    ("dscluster.node.labconfig", "dscluster.jupyter"):
        "JupyterLab on a node loads the optional panel's server config when that extra is installed",
}


def module_name(path: Path) -> str:
    name = ".".join(("dscluster", *path.relative_to(SRC).with_suffix("").parts))
    return name.removesuffix(".__init__")


FILES = {module_name(p): p for p in sorted(SRC.rglob("*.py"))}
_MODULES = set(FILES)


def layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


def imports(path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, at module level) for every dscluster import of the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hidden = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
              and "TYPE_CHECKING" in ast.unparse(block.test) for n in ast.walk(block)}
    top = {id(n) for n in tree.body}
    found = []
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("dscluster"):
            # `from pkg import sub` imports the submodule `pkg.sub` when there is one, else names of `pkg`
            subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in _MODULES]
            names = [a for a in node.names if f"{node.module}.{a.name}" not in _MODULES]
            found += [(m, node.lineno, id(node) in top) for m in subs + ([node.module] if names else [])]
        elif isinstance(node, ast.Import):
            found += [(a.name, node.lineno, id(node) in top) for a in node.names if a.name.startswith("dscluster")]
    return found




def test_imports_point_downward():
    upward = []
    for module, path in FILES.items():
        here = layer(module)
        for target, line, _ in imports(path):
            there = layer(target)
            if here is None or there is None or there <= here:
                continue
            key = (module, ".".join(target.split(".")[:2]))
            if key not in ALLOWED and (module, target) not in ALLOWED:
                upward.append(f"{path.relative_to(SRC)}:{line}: {module} (layer {here}) imports {target} (layer {there})")
    assert not upward, "\n".join(upward)
    assert len(FILES) > 100 and layer("dscluster.runs.supervising.supervisor") == 4


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def _graph(top_only: bool, within: str = "dscluster") -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in FILES.items():
        if not module.startswith(within):
            continue
        graph[module] = {t for t, _, top in imports(path) if (top or not top_only) and t in FILES and t != module
                         and t.startswith(within)}
    return graph


def test_no_import_cycle_when_modules_load():
    assert not _cycles(_graph(top_only=True))
    # the check finds one when there is one
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]


def test_the_commands_import_no_command_module_back():
    """`commands/` has no helper hub that the commands import while it imports them (runview.py is shared
    and imports no command)."""
    assert not _cycles(_graph(top_only=False, within="dscluster.commands"))


# ---- a backend is its own: no generic module names one ---------------------------------------------
# The names of the launchers and schedulers that are backends (and their programs): only their backend's
# module or subpackage (launcher/backends/) says them. A generic module asks the registry instead.
BACKEND_WORDS = re.compile(r"(?:(?<![A-Za-z])|(?<=[a-z])(?=[A-Z]))(?i:slurm|srun|sbatch|salloc|squeue|mpich|mpirun|openmpi)")
# Where a backend's name belongs besides its own module, each with its reason.
MAY_NAME_BACKENDS = {
    "launcher/backends/": "the backends themselves",
    "sim/": "the simulated cluster runs a real Slurm of its own (sim up --slurm): it simulates it, and names it",
    "commands/sim.py": "the simulated cluster's command: `sim up --slurm` and what it prints of its Slurm",
}


def backend_words(text: str) -> list[tuple[int, str]]:
    """(line, token) for every identifier or string (docstrings and f-strings too; comments are not read)
    that names a backend."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in (tokenize.NAME, tokenize.STRING) or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            if BACKEND_WORDS.search(tok.string):
                found.append((tok.start[0], tok.string.splitlines()[0][:80] if tok.string.strip() else tok.string))
    return found


def test_no_generic_module_names_a_backend():
    offenders = []
    for path in FILES.values():
        rel = path.relative_to(SRC).as_posix()
        if any(rel.startswith(where) for where in MAY_NAME_BACKENDS):
            continue
        offenders += [f"{rel}:{line}: {tok}" for line, tok in backend_words(path.read_text(encoding="utf-8"))]
    assert not offenders, f"{len(offenders)} names of a backend outside launcher/backends/:\n" + "\n".join(offenders)
    # the check finds what it is there to find, and reads no comment
    assert backend_words('x = cfg.slurm\ny = "srun: error"\n"""Open MPI\'s mpirun."""\n# slurm\nAmbiguousRun\n') == [
        (1, "slurm"), (2, '"srun: error"'), (3, '"""Open MPI\'s mpirun."""')]
    assert backend_words("HasSlurm = OpenMPIEnv\n") == [(1, "HasSlurm"), (1, "OpenMPIEnv")]


# A backend's name becomes its `Backend` once, where the name comes in (issue 43): the functions below
# these places take the object, never a name to look up again. Each place with its reason.
RESOLVES_A_NAME = {
    "launcher/runnerflags.py": "--launcher NAME as the user wrote it, checked and resolved (check_launcher)",
    "runs/preparing/target.py": "where a run runs: --launcher, else the cluster spec's `launcher`; --local",
    "runs/records/record.py": "a run record read back: run.json keeps the backend's name (LaunchSpec.backend)",
    "launcher/plan.py": "the pure plan's request keeps the name it prints (--launcher=NAME; LaunchRequest.backend)",
    "doctor/engine.py": "doctor on a cluster spec: the spec's `launcher`, for the probe and the checks",
}
LOOKUP = re.compile(r"\bbackends\.(?:get|known)\(")


def test_a_backend_is_resolved_from_its_name_once_and_carried():
    found = {path.relative_to(SRC).as_posix() for path in FILES.values()
             if LOOKUP.search(path.read_text(encoding="utf-8"))}
    outside = {rel for rel in found if not rel.startswith("launcher/backends/")}
    assert outside <= set(RESOLVES_A_NAME), \
        f"looks a backend up by name outside the places that resolve one: {sorted(outside - set(RESOLVES_A_NAME))}"
    assert outside == set(RESOLVES_A_NAME), f"no longer resolves a name (take it off the list): " \
                                            f"{sorted(set(RESOLVES_A_NAME) - outside)}"


# ---- sizes: what one person holds in mind ---------------------------------------------------------
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
# Not yet cut (issue 29): each at most the size it has now, and it leaves this list once it fits.
OVERSIZED: dict[str, int] = {}


def sizes() -> dict[str, int]:
    """Module -> lines, module:function -> lines, for every module and function over its limit."""
    over = {}
    for path in FILES.values():
        name = path.relative_to(SRC).as_posix()
        text = path.read_text(encoding="utf-8")
        if (n := len(text.splitlines())) > MAX_MODULE_LINES:
            over[name] = n
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if (n := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES:
                    over[f"{name}:{node.name}"] = n
    return over


def test_no_module_over_400_lines_and_no_function_over_60():
    over = sizes()
    grown = {k: (n, OVERSIZED.get(k)) for k, n in over.items() if n > OVERSIZED.get(k, MAX_MODULE_LINES if ":" not in k
                                                                                     else MAX_FUNCTION_LINES)}
    assert not grown, f"over the limit (now, allowed): {grown}; cut it along its lines"
    fits = sorted(k for k in OVERSIZED if k not in over)
    assert not fits, f"these fit now: take them out of OVERSIZED: {fits}"
