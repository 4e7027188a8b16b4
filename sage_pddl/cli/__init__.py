"""The `sage-pddl` command line: a thin layer that parses arguments and calls the library.

One module per command group, each with a `register(add_command)` function:

* `pddl_commands`: check, gate, fmt, domains, problem (PDDL only);
* `run_commands`: plan, run, thor-server, demo (planners, LLM backends, environments);
* `bench_commands`: bench, report;
* `tools_commands`: collect, induce, export, solve.

`common` holds what they share (exit codes, output, argument resolution); imports run one way,
from here to the groups to `common`. Every error the library raises for bad input is a
`SageError`: it is printed like a compiler diagnostic (`file:line:col: error: ...`) and the
command exits 2. `--json` prints a machine-readable result on stdout (documented in README.md).
"""
from __future__ import annotations

import argparse
import gc
import logging
import sys
from collections.abc import Sequence

from ..pddl.errors import SageError
from . import bench_commands, pddl_commands, run_commands, tools_commands
from .common import (
    EXIT_CODES_HELP,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    Handler,
    VerdictExit,
    console,
    debug_enabled,
)

GROUPS = (pddl_commands, run_commands, bench_commands, tools_commands)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sage-pddl",
        description="PDDL-centric LLM task planning: parse, gate, plan, execute, evaluate.",
        epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add_command(name: str, handler: Handler, help: str,
                    domains: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        if domains:
            p.add_argument("--domains-dir", action="append", metavar="DIR",
                           help="extra folder of drop-in .pddl domains (repeatable; also "
                                "SAGE_PDDL_DOMAINS)")
        p.set_defaults(handler=handler)
        return p

    for group in GROUPS:
        group.register(add_command)
    return parser


def _version() -> str:
    from .. import __version__  # start-up time: imported when the command runs

    return f"sage-pddl {__version__}"


class _StderrWarnings(logging.Handler):
    """The library's logged warnings (a task without a goal, ...) as `warning: ...` lines on
    the stderr of the moment (so a test's captured stream sees them too)."""

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(f"warning: {record.getMessage()}\n")


def _show_warnings() -> None:
    library = logging.getLogger("sage_pddl")
    if not any(isinstance(h, _StderrWarnings) for h in library.handlers):
        handler = _StderrWarnings(logging.WARNING)
        library.addHandler(handler)


def diagnostic(error: SageError) -> str:
    """An error as the compiler-like line the README promises: `file:line:col: error: ...` for
    located errors (they render so), `error: ...` for the others."""
    text = str(error)
    first = text.split("\n", 1)[0]
    return text if first.startswith("error:") or ": error: " in first else f"error: {text}"


def main(argv: Sequence[str] | None = None, *, whole_process: bool = False) -> int:
    """Run one command; `whole_process`: the command is all this process does (`run`), so it
    may tune what only the process's own (the garbage collector: `bench`)."""
    _show_warnings()
    parser = build_parser()
    args = parser.parse_args(argv)
    args.whole_process = whole_process
    # the words of the command line, for a command that prints how to run it again (bench)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_INPUT
    try:
        code: int = handler(args)
        return code
    except SageError as exc:
        console(stderr=True).print(diagnostic(exc), markup=False)
        return EXIT_INPUT
    except KeyboardInterrupt:
        console(stderr=True).print("interrupted", markup=False)
        return EXIT_INTERRUPTED
    except VerdictExit as cut_short:
        return cut_short.code
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # the environment (permissions, a full disk), not a bug
        where = f": {exc.filename}" if exc.filename else ""
        console(stderr=True).print(f"error: {exc.strerror or exc}{where}", markup=False)
        return EXIT_INPUT
    except Exception as exc:  # a bug, not bad input: say so plainly, keep the trace on request
        if debug_enabled():
            raise
        console(stderr=True).print(
            f"internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in sage-pddl; run again with SAGE_PDDL_DEBUG=1 for the traceback "
            "and report it.", markup=False)
        return EXIT_INTERNAL


def run() -> int:
    """The process's entry (`sage-pddl`, `python -m sage_pddl`): `main`, after which what the
    command made is left to the process's exit. The interpreter's last full collection would
    walk every object still alive (a benchmark's tasks, gates and memories) only to free memory
    that the exit frees anyway; frozen (`gc.freeze`), they are not walked. In-process callers
    (tests, a library) call `main`, which leaves the collector alone."""
    code = main(whole_process=True)
    gc.freeze()
    return code


__all__ = ["build_parser", "main", "run"]
