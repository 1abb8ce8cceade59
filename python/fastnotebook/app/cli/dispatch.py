"""The fastnotebook command line.

  ingest PATH...       files and folders in, sources out (--prune: drop vanished files)
  embed                (re-)embed what changed, through the staged pipeline
  search "query"       vector search over what is stored
  sources list|remove  what is stored, and removing sources
  chunk FILE           the chunks of one file
  notes ...            Markdown vaults: import, export, audit, search, qdrant-export
  demo                 all of the above on the bundled samples
  bench, eval, serve   the chunking benchmark, retrieval quality, the HTTP API
  patch-open-notebook  swap fastnotebook's modules into an Open Notebook tree

Errors are one line on stderr; exit codes: 0 done, 1 failed, 2 wrong
command or option, 130 interrupted. --debug shows tracebacks.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import traceback
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any, NoReturn, cast

from loguru import logger

from fastnotebook.app.cli import tools
from fastnotebook.app.cli.errors import (
    EXIT_FAILED,
    EXIT_USAGE,
    CliError,
    closed_pipe,
    interrupted,
    missing_app_message,
    one_line,
)
from fastnotebook.errors import OpenNotebookError
from fastnotebook.open_notebook import patch as open_notebook_patch

try:
    from fastnotebook.app.cli import demo, notes_commands, pipeline_commands
except ModuleNotFoundError as e:  # installed without the app extra
    _missing_app: ModuleNotFoundError | None = e
else:
    _missing_app = None

# The commands that need the database (the app extra), as listed in --help
# when it is not installed.
_APP_COMMANDS = ("ingest", "embed", "search", "sources", "notes", "demo")

__all__ = ["build_parser", "main"]

_ARGUMENT = re.compile(r"^argument ([^:]+): ")


class _Parser(argparse.ArgumentParser):
    """argparse, with a mistake reported as one line (and exit code 2)."""

    def error(self, message: str) -> NoReturn:
        # "argument -k/--k: must be ..." -> "-k/--k must be ..."
        match = _ARGUMENT.match(message)
        if match:
            rest = message[match.end() :]
            message = f"{match.group(1)}{' ' if rest.startswith('must') else ': '}{rest}"
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def package_version() -> str:
    try:
        return version("fastnotebook")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="fastnotebook",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"fastnotebook {package_version()}")
    parser.add_argument("-v", "--verbose", action="store_true", help="show debug logging")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", required=True, metavar="COMMAND"),
    )
    if _missing_app is None:
        pipeline_commands.add_commands(sub)
        notes_commands.add_command(sub)
        demo.add_command(sub)
    else:
        needs = missing_app_message(_missing_app)
        for name in _APP_COMMANDS:
            # --help works and names the extra; other arguments are taken as
            # they come (see main) and the command says what to install.
            placeholder = sub.add_parser(
                name,
                help="needs the app extra: pip install 'fastnotebook[app]'",
                description=f"fastnotebook {name}: {needs}.",
                usage=f"fastnotebook {name} ... (needs the app extra)",
            )
            placeholder.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            placeholder.set_defaults(run=_needs_app, placeholder=placeholder)
    tools.add_commands(sub)
    open_notebook_patch.add_command(sub)
    return parser


def _needs_app(args: argparse.Namespace) -> int:
    assert _missing_app is not None
    end = args.rest.index("--") if "--" in args.rest else len(args.rest)
    if {"-h", "--help"} & set(args.rest[:end]):  # `sources list --help`
        args.placeholder.print_help()
        return 0
    raise CliError(missing_app_message(_missing_app))


def _debug_first(argv: Sequence[str]) -> list[str]:
    """``--debug`` is accepted after the command too (before any ``--``)."""
    args = list(argv)
    end = args.index("--") if "--" in args else len(args)
    if "--debug" not in args[:end]:
        return args
    return ["--debug", *(a for a in args[:end] if a != "--debug"), *args[end:]]


def _log_format(record: Any) -> str:
    """Plain lines; warnings and errors say so."""
    level = record["level"]
    return ("" if level.no < 30 else f"{level.name.lower()}: ") + "{message}\n"


def _command(args: argparse.Namespace) -> str:
    action = getattr(args, "action", None)
    return f"fastnotebook {args.command}" + (f" {action}" if action else "")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit code. Errors are one line on stderr."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(_debug_first(sys.argv[1:] if argv is None else argv))
    if unknown and getattr(args, "run", None) is not _needs_app:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    logger.remove()
    if args.verbose:
        logger.add(sys.stderr, level="DEBUG")
    else:
        quiet = getattr(args, "quiet", False)
        logger.add(sys.stderr, level="WARNING" if quiet else "INFO", format=_log_format)
    where = _command(args)
    try:
        code: int = args.run(args)
    except BrokenPipeError:
        return closed_pipe()
    except KeyboardInterrupt:
        return interrupted(where)
    except CliError as e:
        if args.debug:
            traceback.print_exc()
        print(f"{where}: {one_line(e)}", file=sys.stderr)
        return e.code
    except (OpenNotebookError, ValueError, OSError, asyncio.CancelledError) as e:
        # Expected failures (a database in use, a bad setting, a model whose
        # vectors do not fit the stored ones): the message, not a traceback.
        if args.debug:
            traceback.print_exc()
        print(f"{where}: {one_line(e)}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as e:
        if args.debug:
            traceback.print_exc()
        print(
            f"{where}: unexpected {type(e).__name__}: {one_line(e)} "
            "(run again with --debug for the traceback, and report it)",
            file=sys.stderr,
        )
        return EXIT_FAILED
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return closed_pipe()
    return code
