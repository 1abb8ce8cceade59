"""The ``fastnotebook`` program: a search answered by the process that
holds the database, else one command of ``fastnotebook.app.cli.dispatch``; then
an immediate exit."""

from __future__ import annotations

import os
import sys

from fastnotebook.app.cli.errors import EXIT_PIPE, closed_pipe, interrupted

TYPE_CHECKING = False  # as typing's, without importing it

if TYPE_CHECKING:
    from typing import NoReturn

__all__ = ["exit_now", "run"]


def run() -> NoReturn:
    """Run the command of ``sys.argv``, then exit at once.

    ``fastnotebook search`` is first offered to the process that holds the
    database (``search_route``), before the command line and the database
    are imported (half a second, against tens of milliseconds for the
    whole answer).

    The embedded database (the ``surrealdb`` package's native module) keeps
    tokio worker threads that may still take the GIL while the interpreter
    shuts down; CPython then ends such a thread with ``pthread_exit``, and
    the forced unwind through Rust code aborts the process ("panic in a
    function that cannot unwind", exit code 134), after the command's work
    was done. Ending the process with ``os._exit`` once the output is
    flushed never starts that shutdown (docs/ROBUSTNESS.md)."""
    from fastnotebook.app.cli.search_route import answer_search

    try:
        code = answer_search(sys.argv[1:])
    except BrokenPipeError:  # `| head`, as for any command
        code = closed_pipe()
    except KeyboardInterrupt:  # waiting for the server
        code = interrupted("fastnotebook search")
    if code is None:
        try:
            from fastnotebook.app.cli.dispatch import main
        except KeyboardInterrupt:  # during the imports, before any command
            code = interrupted("fastnotebook")
        else:
            code = main()
    exit_now(code)


def exit_now(code: int) -> NoReturn:
    """Flush stdout and stderr, then end the process with ``code`` without
    the interpreter's shutdown (see ``run``)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):
            code = code or EXIT_PIPE
    os._exit(code)
