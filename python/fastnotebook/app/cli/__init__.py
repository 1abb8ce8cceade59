"""The fastnotebook command line.

ingest PATH...   files and folders in, sources out
embed            (re-)embed what changed, through the staged pipeline
search "query"   vector search over what is stored
chunk FILE       the chunks of one file
demo             all of the above on the bundled samples
bench            the chunking benchmark
serve            the context API over HTTP
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from loguru import logger

from fastnotebook.app.cli import demo, pipeline_commands, tools
from fastnotebook.errors import OpenNotebookError
from fastnotebook.open_notebook import patch as open_notebook_patch

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fastnotebook",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    pipeline_commands.add_commands(sub)
    tools.add_commands(sub)
    demo.add_command(sub)
    open_notebook_patch.add_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logger.remove()
    if args.verbose:
        logger.add(sys.stderr, level="DEBUG")
    else:
        quiet = getattr(args, "quiet", False)
        logger.add(sys.stderr, level="WARNING" if quiet else "INFO")
    try:
        code: int = args.run(args)
    except (OpenNotebookError, ValueError) as e:
        # Expected failures (a database in use, a missing model, a model whose
        # vectors do not fit the stored ones): the message, not a traceback.
        print(f"fastnotebook {args.command}: {e}", file=sys.stderr)
        return 1
    return code
