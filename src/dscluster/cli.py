"""The `dscluster` command line: one parser, verbs registered by modules in `dscluster.commands`.

Typed errors (DsclusterError) are caught here, once, and printed as message + fix with a non-zero,
stable exit code; the traceback goes to the log file, and to the terminal only with --debug.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import traceback

from dscluster import __version__
from dscluster.errors import DsclusterError, ExitCode, from_os_error, os_error_names_path
from dscluster.i18n import gettext, tr
from dscluster.paths import log_file

# Each module defines `register(subparsers)`; its parsers set `func=callable(args) -> int`.
# Keep the order: it is the order of `dscluster --help`.
COMMAND_MODULES: tuple[str, ...] = (
    "dscluster.commands.demo",
    "dscluster.commands.data",
    "dscluster.commands.init",
    "dscluster.commands.config",
    "dscluster.commands.node",
    "dscluster.commands.sim",
    "dscluster.commands.doctor",
    "dscluster.commands.metrics",
    "dscluster.commands.up",
    "dscluster.commands.image",
    "dscluster.commands.lab",
    "dscluster.commands.user",
    "dscluster.commands.hub",
    "dscluster.commands.launch",
    "dscluster.commands.runs",
    "dscluster.commands.queue",
    "dscluster.commands.stacks",
    "dscluster.commands.explain",
)


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on bad arguments; keep that, but point at --help for the verb."""

    def _parse_optional(self, arg_string):
        """A word with a space that is not one of our options is a value, never an option: argparse's own
        rule, applied before its prefix matching, so `--launcher_args '-mca btl_tcp_if_include eth1'` is
        one value (as DeepSpeed's runner takes it) and not launch's `-m` with `ca ...` glued on."""
        if " " in arg_string and arg_string[:1] in self.prefix_chars and \
                arg_string.split("=", 1)[0] not in self._option_string_actions:
            return None
        return super()._parse_optional(arg_string)

    def error(self, message: str) -> None:  # noqa: D401
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: {tr('error')}: {message}\n  {tr('fix')}: {self.prog} --help\n")
        raise SystemExit(ExitCode.USAGE)


def build_parser() -> argparse.ArgumentParser:
    # argparse words its own messages through gettext at call time: route them to the one catalog.
    argparse._ = gettext
    parser = _Parser(prog="dscluster", description=tr("Multi-node DeepSpeed training, set up, checked, supervised and watched."))
    parser.add_argument("--version", action="version", version=f"dscluster {__version__}",
                        help=tr("show program's version number and exit"))
    parser.add_argument("--debug", action="store_true", help=tr("show tracebacks and debug logging"))
    sub = parser.add_subparsers(dest="verb", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    _accept_debug_everywhere(parser)
    return parser


def _innermost_parser(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The parser of the deepest verb named in argv (`dscluster sim up ...` -> the `sim up` parser)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for i, token in enumerate(argv):
                if token in action.choices:
                    return _innermost_parser(action.choices[token], argv[i + 1:])
    return parser


def _accept_debug_everywhere(parser: argparse.ArgumentParser) -> None:
    """`dscluster --debug doctor` and `dscluster sim up 3 --debug` both work. SUPPRESS as the default,
    so a nested parser never resets a --debug given before the verb."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                if "--debug" not in child._option_string_actions:
                    child.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
                _accept_debug_everywhere(child)


def _setup_logging(debug: bool) -> bool:
    """Console at WARNING (DEBUG with --debug), everything to the log file. False when the file is unwritable."""
    path = log_file()
    handlers: list[logging.Handler] = []
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(path, encoding="utf-8"))
    except OSError:
        pass  # an unwritable home must not stop the CLI; messages still reach the terminal
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.DEBUG if debug else logging.WARNING)
    handlers.append(console)
    logging.basicConfig(level=logging.DEBUG, handlers=handlers,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", force=True)
    return len(handlers) == 2


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    debug = os.environ.get("DSCLUSTER_DEBUG") == "1"
    logged = _setup_logging(debug)
    try:
        parser = build_parser()
        args, extra = parser.parse_known_args(argv)
        if extra:
            # Name the innermost verb's own --help (`dscluster data prepare --help`) in the usage error.
            _innermost_parser(parser, argv).error(tr("unrecognized arguments: {args}", args=" ".join(extra)))
        # Parsed, not searched for in argv: a `--debug` meant for the user's training script stays theirs.
        if getattr(args, "debug", False) and not debug:
            debug = True
            logged = _setup_logging(debug)
        if not getattr(args, "func", None):
            parser.print_help()
            return ExitCode.USAGE if args.verb is None and argv else ExitCode.OK
        return int(args.func(args) or 0)
    except DsclusterError as err:
        return _report(err, debug)
    except KeyboardInterrupt:
        print(tr("interrupted"), file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        # `dscluster ... | head` closed our stdout: not an error. Point stdout at devnull so the
        # interpreter's final flush does not raise a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.OK
    except OSError as err:
        if not os_error_names_path(err):
            return _unexpected(err, debug, logged)
        # The environment (a folder's owner, a full disk, a missing file), not a bug: the path and the fix.
        return _report(from_os_error(err), debug)
    except Exception as err:  # noqa: BLE001 - the one boundary: a bug must still not dump a traceback
        return _unexpected(err, debug, logged)


def _report(err: DsclusterError, debug: bool) -> int:
    """A typed error: its message and fix line, its stable exit code; the traceback to the log (and with
    --debug to the terminal)."""
    logging.getLogger("dscluster").debug("error", exc_info=True)
    if debug:
        traceback.print_exc()
    print(f"{tr('error')}: {err.message}", file=sys.stderr)
    if err.hint:
        print(f"  {tr('fix')}: {err.hint}", file=sys.stderr)
    return int(err.exit_code)


def _unexpected(err: BaseException, debug: bool, logged: bool) -> int:
    """A bug: its type and text, where its traceback is; raised again with --debug."""
    logging.getLogger("dscluster").debug("unexpected error", exc_info=True)  # file only
    if debug:
        raise err
    print(f"{tr('error')}: {type(err).__name__}: {err}", file=sys.stderr)
    if logged:
        print("  " + tr("traceback written to {path}", path=log_file()), file=sys.stderr)
    print("  " + tr("run again with --debug to see the traceback"), file=sys.stderr)
    return ExitCode.FAILURE


if __name__ == "__main__":
    sys.exit(main())
