"""``fastnotebook search`` answered by the process that holds the database,
before the rest of the command line is imported, and what a search prints.

While ``fastnotebook serve`` holds an on-disk database
(``fastnotebook.app.database.holder``), a search costs it milliseconds; the
command's own start (the interpreter, the command line, the SDK: half a
second) would be most of the wait. ``answer_search`` reads the search's
arguments with the command's own definitions (``options``), asks the holder
(``holder_client``) and prints its answer, importing neither the database
nor the models. Anything else (no holder, a mistake in the arguments, a
refusal, ``--help``) is left to the whole command line, which says what is
wrong as for any other command.
"""

from __future__ import annotations

import argparse
import json
import sys

from fastnotebook.app.cli.errors import CliError
from fastnotebook.app.cli.holder_client import ask_holder
from fastnotebook.app.cli.options import add_search_arguments, database_options, use_data_dir
from fastnotebook.app.database.location import database_url

TYPE_CHECKING = False  # as typing's, without importing it

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn

__all__ = ["answer_search", "counted", "hits_text", "print_answer"]


class _NotHere(Exception):
    """The arguments are for the whole command line to judge."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _NotHere(message)


def answer_search(argv: Sequence[str]) -> int | None:
    """Run ``fastnotebook`` with ``argv`` if it is a search that the
    holder of the database answers: the exit code, else None (nothing was
    printed)."""
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
    body = {"query": args.query, "k": args.k, "min_score": args.min_score, "mode": args.mode}
    try:
        answer = ask_holder(database_url(), body)
    except CliError:  # a refusal: the command line reports it
        return None
    if answer is None:
        return None
    print_answer(answer, args.query, args.k, as_json=args.json)
    return 0


def print_answer(answer: dict[str, Any], query: str, k: int, *, as_json: bool) -> None:
    """Print a search's answer (``fastnotebook.app.answers``' shape)."""
    if as_json:
        json.dump(answer["hits"], sys.stdout, ensure_ascii=False, indent=2)
        print()
        return
    print(hits_text(answer["hits"], answer["paths"], k=k))
    if not answer["hits"] and answer["vault"]:
        import shlex

        print(
            f"this database holds the note vault {answer['vault']}, which `notes search` "
            f"searches: fastnotebook notes search {shlex.quote(query)}"
        )


def hits_text(hits: Sequence[dict[str, Any]], paths: dict[str, str], k: int | None = None) -> str:
    """Ranked hits under a line that counts them as search -k does: by
    source (or note), each with its matching chunks."""
    if not hits:
        return "no hits"
    sources = sum(1 for hit in hits if str(hit["parent_id"]).startswith("source:"))
    chunks = sum(max(1, len(hit.get("matches") or [])) for hit in hits)
    found = [counted(sources, "source")] if sources else []
    if len(hits) > sources:
        found.append(counted(len(hits) - sources, "note"))
    head = f"{', '.join(found)} ({counted(chunks, 'chunk')})"
    if k is not None and len(hits) < k:
        head += f"; -k {k} asks for up to {k}: no other scored high enough"
    lines = [head]
    for rank, hit in enumerate(hits, 1):
        where = paths.get(str(hit["parent_id"])) or str(hit["id"])
        lines.append(
            f"{rank:>2}. {hit['similarity']:.3f}  {hit.get('title') or '(untitled)'}  [{where}]"
        )
        if hit.get("matches"):
            lines.append(f"      {_snippet(str(hit['matches'][0]))}")
            if len(hit["matches"]) > 1:
                lines.append(f"      (+ {counted(len(hit['matches']) - 1, 'more chunk')})")
    return "\n".join(lines)


def counted(n: int, noun: str) -> str:
    """``1 source``, ``2 sources``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _snippet(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."
