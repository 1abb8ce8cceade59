"""``fastnotebook demo``: the main job end to end on the bundled samples.

Ingests the samples, embeds them with the configured model (the offline
default unless ``FASTNOTEBOOK_EMBEDDING_PROVIDER`` says otherwise), and runs
a few searches whose words differ from the documents'. In a checkout of the
repository the samples are ``samples/`` and the README, and the database is
``target/demo`` (ignored by git, removed by ``make clean``); in an installed
package they are the small set shipped with it (``demo_samples``: the pages
the searches look for, and the Markdown guides) and the database is
``demo`` in the user's data folder. Either way it is not the user's
database: the demo never touches a real notebook. A second run finds
everything unchanged and only searches again.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from fastnotebook.app.answers import source_paths
from fastnotebook.app.cli.database import run_db
from fastnotebook.app.cli.errors import CliError, positive_int, require_model_packages
from fastnotebook.app.cli.hits import hits_text
from fastnotebook.app.cli.pipeline_commands import EXIT_INTERRUPTED, run_embed
from fastnotebook.app.cli.summaries import ingest_summary
from fastnotebook.app.database import Database, DatabaseSettings
from fastnotebook.app.database.location import DATA_DIR_ENV, default_data_dir
from fastnotebook.app.pipeline import EmbedOptions, ingest

__all__ = ["QUERIES", "add_command"]

REPOSITORY = Path(__file__).resolve().parents[4]
PACKAGED_SAMPLES = Path(__file__).resolve().parent / "demo_samples"
QUERIES = (
    "start another program and capture what it prints",
    "pack several files into one compressed archive",
    "make a password that nobody can guess",
    "show which lines differ between two versions of a text",
    "keep the smallest item at hand while adding new ones",
)


def in_checkout() -> bool:
    """Whether this module runs from a checkout of the repository (with its samples)."""
    return (REPOSITORY / "pyproject.toml").is_file() and (REPOSITORY / "samples").is_dir()


def default_paths() -> list[Path]:
    """What the demo ingests when given no paths."""
    if in_checkout():
        return [REPOSITORY / "samples", REPOSITORY / "README.md"]
    return [PACKAGED_SAMPLES]


def demo_data_dir() -> Path:
    """The demo's own database folder (never the user's database)."""
    if in_checkout():
        return REPOSITORY / "target" / "demo"
    return default_data_dir({k: v for k, v in os.environ.items() if k != DATA_DIR_ENV}) / "demo"


def cmd_demo(args: argparse.Namespace) -> int:
    paths = args.paths or default_paths()
    missing = [str(p) for p in paths if not Path(p).exists()]
    if missing:
        raise CliError(f"not found: {', '.join(missing)}")
    require_model_packages()
    data_dir = Path(args.data_dir) if args.data_dir else demo_data_dir()
    settings = DatabaseSettings(
        DatabaseSettings.embedded_url(data_dir), full_text_search=args.full_text
    )

    async def work(db: Database) -> int:
        from fastnotebook.app.domain import vector_search

        print(f"database: {data_dir}\n")
        print(ingest_summary(await ingest(paths, db, progress=not args.quiet)) + "\n")
        code = await run_embed(EmbedOptions(), args.quiet)
        if code == EXIT_INTERRUPTED:
            return code
        for query in args.query or QUERIES:
            hits = await vector_search(query, args.k)
            print(f'\nsearch "{query}"')
            print(hits_text(hits, await source_paths(db, hits), k=args.k))
        return code

    return run_db(work, settings)


def add_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = sub.add_parser("demo", help="ingest and embed the bundled samples, then search them")
    demo.add_argument(
        "paths",
        nargs="*",
        help="files or folders (default: samples/ and README.md in a checkout, else the "
        "samples shipped in the package)",
    )
    demo.add_argument(
        "--data-dir",
        help="database folder (default: target/demo in a checkout, else demo in the "
        "user's data folder)",
    )
    demo.add_argument("--query", action="append", help="a search to run (repeatable)")
    demo.add_argument(
        "-k", type=positive_int, default=3, help="sources (or notes) per search (default 3)"
    )
    demo.add_argument(
        "--full-text",
        action="store_true",
        help="also build the BM25 full-text indexes (several times slower)",
    )
    demo.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    demo.set_defaults(run=cmd_demo)
