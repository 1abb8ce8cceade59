"""``ingest``, ``embed`` and ``search``: the commands that work on the database."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from fastnotebook.app.cli.summaries import embed_summary, hits_text, ingest_summary
from fastnotebook.app.database import (
    Database,
    DatabaseSettings,
    RecordID,
    ensure_record_id,
    open_database,
    set_database,
)
from fastnotebook.app.database.settings import DATA_DIR_ENV
from fastnotebook.app.pipeline import KINDS, EmbedOptions, embed, ingest
from fastnotebook.app.pipeline.state import Kind

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "add_commands",
    "run_embed",
    "search_paths",
    "with_database",
]

EXIT_FAILED = 1
EXIT_INTERRUPTED = 130  # as a shell reports a process stopped by Ctrl-C


async def with_database(
    work: Callable[[Database], Awaitable[int]], settings: DatabaseSettings | None = None
) -> int:
    """Open the database (the environment's unless ``settings``), make it
    current for ``work``, close it afterwards."""
    db = await open_database(settings)
    previous = set_database(db)
    try:
        return await work(db)
    finally:
        set_database(previous)
        await db.close()


def _use_data_dir(args: argparse.Namespace) -> None:
    """``--data-dir`` wins over ``FASTNOTEBOOK_DATA_DIR`` (and ``SURREAL_URL``)."""
    if args.data_dir:
        os.environ[DATA_DIR_ENV] = args.data_dir
        os.environ.pop("SURREAL_URL", None)


def _stop_on_ctrl_c() -> asyncio.Event:
    """An event set by the first Ctrl-C; the second one aborts."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()

    def interrupted() -> None:
        if stop.is_set():
            if task is not None:
                task.cancel()
            return
        stop.set()
        print("\nstopping after the batch in flight (Ctrl-C again to abort)", file=sys.stderr)

    loop.add_signal_handler(signal.SIGINT, interrupted)
    return stop


async def run_embed(options: EmbedOptions, quiet: bool) -> int:
    """Embed with the current database; print the summary; the exit code."""
    stop = _stop_on_ctrl_c()
    report = await embed(options, stop=stop, progress=not quiet)
    if not quiet:
        print(embed_summary(report))
    elif report.failures:
        for what, why in report.failures:
            print(f"failed: {what}: {why}", file=sys.stderr)
    if report.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FAILED if report.failures else 0


def cmd_ingest(args: argparse.Namespace) -> int:
    async def work(db: Database) -> int:
        report = await ingest(args.paths, db, progress=not args.quiet)
        if not args.quiet:
            print(ingest_summary(report))
        for what, why in report.failures if args.quiet else []:
            print(f"failed: {what}: {why}", file=sys.stderr)
        return EXIT_FAILED if report.failures or report.missing else 0

    _use_data_dir(args)
    try:
        return asyncio.run(with_database(work))
    except KeyboardInterrupt:
        # Each batch of sources is one transaction: nothing is half-written.
        print("\ninterrupted: run `fastnotebook ingest` again to finish", file=sys.stderr)
        return EXIT_INTERRUPTED


def _kinds(args: argparse.Namespace) -> tuple[Kind, ...]:
    chosen = {"source": args.sources, "source_insight": args.insights, "note": args.notes}
    picked = tuple(kind for kind in KINDS if chosen[kind])
    return picked or KINDS


def cmd_embed(args: argparse.Namespace) -> int:
    options = EmbedOptions(kinds=_kinds(args), rebuild=args.rebuild, batch_size=args.batch_size)

    async def work(db: Database) -> int:
        return await run_embed(options, args.quiet)

    _use_data_dir(args)
    try:
        return asyncio.run(with_database(work))
    except asyncio.CancelledError:
        print("aborted: run `fastnotebook embed` again to finish", file=sys.stderr)
        return EXIT_INTERRUPTED


async def search_paths(db: Database, hits: Sequence[dict[str, Any]]) -> dict[str, str]:
    """The file paths of the sources among ``hits``, by source id."""
    ids: list[RecordID] = [
        ensure_record_id(str(h["parent_id"]))
        for h in hits
        if str(h["parent_id"]).startswith("source:")
    ]
    if not ids:
        return {}
    rows = await db.query("SELECT id, asset.file_path AS path FROM $ids;", {"ids": ids})
    return {str(row["id"]): row["path"] for row in rows or [] if row.get("path")}


def cmd_search(args: argparse.Namespace) -> int:
    from fastnotebook.app.domain import vector_search

    async def work(db: Database) -> int:
        hits = await vector_search(args.query, args.k, minimum_score=args.min_score)
        if args.json:
            json.dump(hits, sys.stdout, ensure_ascii=False, indent=2, default=str)
            print()
        else:
            print(hits_text(hits, await search_paths(db, hits)))
        return 0

    _use_data_dir(args)
    return asyncio.run(with_database(work))


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir", help=f"database folder (default: ${DATA_DIR_ENV} or the user's)"
    )
    common.add_argument("-q", "--quiet", action="store_true", help="no progress or summary")

    ingest_cmd = sub.add_parser(
        "ingest", parents=[common], help="create or update sources from files and folders"
    )
    ingest_cmd.add_argument("paths", nargs="+", help="files or folders (searched recursively)")
    ingest_cmd.set_defaults(run=cmd_ingest)

    embed_cmd = sub.add_parser(
        "embed", parents=[common], help="embed what changed (sources, insights, notes)"
    )
    embed_cmd.add_argument(
        "--rebuild",
        choices=["existing", "all"],
        help="re-embed what has vectors (existing) or everything (all), changed or not",
    )
    embed_cmd.add_argument("--sources", action="store_true", help="only sources (combinable)")
    embed_cmd.add_argument("--insights", action="store_true", help="only insights (combinable)")
    embed_cmd.add_argument("--notes", action="store_true", help="only notes (combinable)")
    embed_cmd.add_argument(
        "--batch-size", type=int, default=0, help="chunks per model call (default: 50)"
    )
    embed_cmd.set_defaults(run=cmd_embed)

    search_cmd = sub.add_parser("search", parents=[common], help="vector search, ranked hits")
    search_cmd.add_argument("query")
    search_cmd.add_argument("-k", type=int, default=5, help="number of hits (default 5)")
    search_cmd.add_argument(
        "--min-score", type=float, default=0.2, help="lowest similarity shown (default 0.2)"
    )
    search_cmd.add_argument("--json", action="store_true", help="machine-readable output")
    search_cmd.set_defaults(run=cmd_search)
