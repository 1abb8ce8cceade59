"""Options that commands share: those of every command that opens the
database (``--data-dir``, ``--quiet``), the folder they choose, and the
arguments of ``search``, which ``search_route`` reads too, before the rest
of the command line is imported."""

from __future__ import annotations

import argparse
import os

from fastnotebook.app.cli.errors import positive_int
from fastnotebook.app.database.location import DATA_DIR_ENV

__all__ = [
    "add_search_arguments",
    "database_options",
    "search_request",
    "similarity",
    "use_data_dir",
]


def database_options() -> argparse.ArgumentParser:
    """The options of every command that opens the database (a parent parser)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir", help=f"database folder (default: ${DATA_DIR_ENV} or the user's)"
    )
    common.add_argument("-q", "--quiet", action="store_true", help="no progress or summary")
    return common


def use_data_dir(args: argparse.Namespace) -> None:
    """``--data-dir`` wins over ``FASTNOTEBOOK_DATA_DIR`` (and ``SURREAL_URL``)."""
    if args.data_dir:
        os.environ[DATA_DIR_ENV] = args.data_dir
        os.environ.pop("SURREAL_URL", None)


def similarity(raw: str) -> float:
    """An argparse type: a cosine similarity, from -1 to 1."""
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {raw!r}") from None
    if not -1.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between -1 and 1, got {value}")
    return value


def add_search_arguments(search: argparse.ArgumentParser) -> None:
    """The arguments of ``fastnotebook search`` (its parent parser gives
    the database options)."""
    search.add_argument("query", help="the words to search for")
    search.add_argument(
        "-k",
        "--k",
        type=positive_int,
        default=5,
        help="how many sources (or notes) to show, each with its matching chunks (default 5)",
    )
    search.add_argument(
        "--min-score",
        type=similarity,
        default=0.2,
        help="lowest cosine similarity shown, -1 to 1 (default 0.2)",
    )
    search.add_argument("--json", action="store_true", help="machine-readable output")
    how = search.add_mutually_exclusive_group()
    how.add_argument(
        "--exact",
        dest="mode",
        action="store_const",
        const="exact",
        help="compare the query with every stored vector (reads them into the cache beside "
        "the database first if it is not current)",
    )
    how.add_argument(
        "--ann",
        dest="mode",
        action="store_const",
        const="ann",
        help="ask the database's approximate (HNSW) index",
    )
    search.set_defaults(mode="auto")


def search_request(args: argparse.Namespace) -> dict[str, object]:
    """The body of ``POST /search`` (``SearchRequest``) for ``search``'s arguments."""
    return {"query": args.query, "k": args.k, "min_score": args.min_score, "mode": args.mode}
