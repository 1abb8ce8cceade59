"""``fastnotebook search`` answered by the process that holds the database,
before the rest of the command line is imported.

While ``fastnotebook serve`` holds an on-disk database
(``fastnotebook.app.database.holder``), a search costs it milliseconds; the
command's own start (the interpreter, the command line, the SDK: half a
second) would be most of the wait. ``answer_search`` reads the search's
arguments with the command's own definitions (``options``), asks the holder
(``holder_client``) and prints its answer, importing neither the database
nor the models. A refusal is said as the command line says it; anything
else (no holder, a mistake in the arguments, ``--help``, an answer this
version cannot print) is left to the whole command line, which says what
is wrong as for any other command.
"""

from __future__ import annotations

import argparse
import sys

from fastnotebook.app.cli.errors import EXIT_FAILED, CliError, one_line
from fastnotebook.app.cli.hits import render_answer
from fastnotebook.app.cli.holder_client import ask_holder
from fastnotebook.app.cli.options import (
    add_search_arguments,
    database_options,
    search_request,
    use_data_dir,
)
from fastnotebook.app.database.location import database_url

TYPE_CHECKING = False  # as typing's, without importing it

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import NoReturn

__all__ = ["answer_search"]


_WHERE = "fastnotebook search"


class _NotHere(Exception):
    """The arguments are for the whole command line to judge."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _NotHere(message)


def answer_search(argv: Sequence[str]) -> int | None:
    """Run ``fastnotebook`` with ``argv`` if it is a search that the
    holder of the database answers or refuses: the exit code, else None
    (nothing was printed)."""
    if not argv or argv[0] != "search":
        return None
    parser = _Parser(add_help=False, parents=[database_options()])
    add_search_arguments(parser)
    try:
        args = parser.parse_args(argv[1:])
    except _NotHere:
        return None
    if not args.query.strip():
        return None
    use_data_dir(args)
    try:
        url = database_url()
    except (OSError, RuntimeError, ValueError):  # a folder that cannot be resolved
        return None
    body = search_request(args)
    try:
        answer = ask_holder(url, body)
    except CliError as e:  # the holder's reason, as the command line says it
        print(f"{_WHERE}: {one_line(e)}", file=sys.stderr)
        return e.code
    if answer is None:
        return None
    try:
        text = render_answer(answer, args.query, args.k, as_json=args.json)
    except (KeyError, TypeError, ValueError):  # not an answer this version prints
        return None
    try:
        print(text)
    except BrokenPipeError:
        raise  # ``launch`` ends quietly
    except (OSError, ValueError) as e:  # a full disk, an encoding without the text's letters
        print(f"{_WHERE}: {one_line(e)}", file=sys.stderr)
        return EXIT_FAILED
    return 0
