"""How dscluster starts Python on the controller: never importing from the directory it starts in.

`python -m MOD` and `python -c CODE` put the current directory first on sys.path. The supervisor's
DeepSpeed runner must start in the run's working directory (DeepSpeed's pdsh runner sends its
`os.path.abspath('.')` to the nodes as the ranks' `cd`), and that directory is often on shared
storage where the node user (every rank, every notebook) can write: a `base64.py` dropped there would
be imported by the launching user's Python. Safe-path mode (`-P`, Python 3.11+) keeps the directory
off sys.path while PYTHONPATH and site-packages stay as the user set them; on 3.10 a short `-c`
bootstrap removes the entry itself before importing anything and runs the module with runpy.
The user's own script is not started this way: it runs on the nodes, as the node user, with its
directory on sys.path as Python normally does.
"""

from __future__ import annotations

import sys

# Only builtin modules (sys) are imported before the unsafe first sys.path entry is gone.
_RUN_MODULE = ("import sys; del sys.path[0]; import runpy; "
               "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)")


def module_argv(python: str, module: str, *, unbuffered: bool = False,
                version: tuple[int, int] | None = None) -> list[str]:
    """argv for `python -m module` without the current directory on sys.path. `python` is assumed to
    be this interpreter's version (dscluster launches with its own interpreter) unless `version` says."""
    flags = ["-u"] if unbuffered else []
    if (version or sys.version_info[:2]) >= (3, 11):
        return [python, *flags, "-P", "-m", module]
    return [python, *flags, "-c", _RUN_MODULE, module]


# The same bootstrap, also setting sys.executable: DeepSpeed's multi-node runners put sys.executable into
# every node's command line, so a runner started here for nodes with another interpreter path (the node
# image's, seen from a controller outside the containers) must report that path instead.
_RUN_MODULE_FOR = ("import sys; del sys.path[0]; sys.executable = sys.argv.pop(1); import runpy; "
                   "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)")


def module_argv_for(python: str, module: str, executable: str, *, unbuffered: bool = False) -> list[str]:
    """argv for `python -m module` (safe path, as module_argv) with `sys.executable` = `executable`."""
    return [python, *(["-u"] if unbuffered else []), "-c", _RUN_MODULE_FOR, executable, module]
