"""``ingest``, ``embed``, ``search`` and ``sources``: the commands that work
on the database. Only ``ingest`` (and ``demo``) create a database; the
others fail, naming the folder, where there is none."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from fastnotebook.app.cli.database import run_db
from fastnotebook.app.cli.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    CliError,
    positive_int,
    require_model_packages,
    text_encoding,
)
from fastnotebook.app.cli.hits import render_answer
from fastnotebook.app.cli.options import (
    add_search_arguments,
    database_options,
    search_request,
    use_data_dir,
)
from fastnotebook.app.cli.ray_commands import add_ray_arguments
from fastnotebook.app.cli.summaries import (
    embed_summary,
    ingest_summary,
    sources_table,
)
from fastnotebook.app.database import Database, DatabaseSettings
from fastnotebook.app.pipeline import KINDS, EmbedOptions, embed, ingest
from fastnotebook.app.pipeline.sources import list_sources, remove_sources, resolve_sources
from fastnotebook.app.pipeline.state import Kind

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "add_commands",
    "run_embed",
]


def _non_negative_int(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {raw!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _timeout(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {raw!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 3600, got {value}")
    return value


def _seconds(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {raw!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {value}")
    return value


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
    if options.kinds == KINDS and not options.rebuild:
        await _embed_vault_chunks(quiet)
    return EXIT_FAILED if report.failures else 0


async def _embed_vault_chunks(quiet: bool) -> None:
    """The chunks of an imported note vault that have no vector yet
    (``fastnotebook notes import --no-embed``): embedded too."""
    from fastnotebook.app.database import get_database
    from fastnotebook.app.vault.store import embed_missing

    done, due = await embed_missing(await get_database(), progress=not quiet)
    if due and not quiet:
        print(f"vault chunks: embedded {done} of {due} without a vector")


def cmd_ingest(args: argparse.Namespace) -> int:
    # lexists: a symlink loop or a broken link is there (and skipped by ingest).
    missing = [p for p in args.paths if not os.path.lexists(Path(p).expanduser())]
    if missing and not args.prune:
        raise CliError(
            f"not found: {', '.join(missing)} (check the path; to remove the sources "
            "of files that are gone, add --prune)"
        )

    async def work(db: Database) -> int:
        report = await ingest(
            args.paths, db, progress=not args.quiet, prune=args.prune, encoding=args.encoding
        )
        if not args.quiet:
            print(ingest_summary(report))
        for what, why in report.failures if args.quiet else []:
            print(f"failed: {what}: {why}", file=sys.stderr)
        return EXIT_FAILED if report.failures or report.missing else 0

    use_data_dir(args)
    try:
        return run_db(work)
    except KeyboardInterrupt:
        # Each batch of sources is one transaction: nothing is half-written.
        print("\ninterrupted: run `fastnotebook ingest` again to finish", file=sys.stderr)
        return EXIT_INTERRUPTED


def _kinds(args: argparse.Namespace) -> tuple[Kind, ...]:
    chosen = {"source": args.sources, "source_insight": args.insights, "note": args.notes}
    picked = tuple(kind for kind in KINDS if chosen[kind])
    return picked or KINDS


def cmd_embed(args: argparse.Namespace) -> int:
    if args.engine == "ray":
        if args.stage_after is not None:
            raise CliError("--stage-after applies to the local engine (Ray does not stage)", code=2)
        from fastnotebook.app.cli.ray_commands import cmd_embed_ray

        require_model_packages()
        return cmd_embed_ray(args, _kinds(args))
    if args.address or args.input or args.parquet:
        raise CliError("--address, --input and --parquet need --engine ray", code=2)
    options = EmbedOptions(
        kinds=_kinds(args),
        rebuild=args.rebuild,
        batch_size=args.batch_size,
        concurrency=args.concurrency,
        timeout=args.timeout,
        vector_index=args.vector_index,
        stage_after=EmbedOptions.stage_after if args.stage_after is None else args.stage_after,
    )

    async def work(db: Database) -> int:
        return await run_embed(options, args.quiet)

    use_data_dir(args)
    require_model_packages()
    try:
        return run_db(work, create=False)
    except asyncio.CancelledError:
        print("aborted: run `fastnotebook embed` again to finish", file=sys.stderr)
        return EXIT_INTERRUPTED


def cmd_search(args: argparse.Namespace) -> int:
    from fastnotebook.app.answers import search_answer
    from fastnotebook.app.cli.holder_client import ask_holder

    if not args.query.strip():
        raise CliError("the query is empty: give the words to search for", code=2)
    use_data_dir(args)
    # A process that holds the database (``serve``) answers without the
    # database being opened here.
    body = search_request(args)
    answer = ask_holder(DatabaseSettings.from_env().url, body)
    if answer is None:
        require_model_packages()

        async def work(db: Database) -> int:
            nonlocal answer
            answer = await search_answer(db, args.query, args.k, args.min_score, args.mode)
            return 0

        run_db(work, create=False)
    assert answer is not None
    print(render_answer(answer, args.query, args.k, as_json=args.json))
    return 0


def cmd_sources_list(args: argparse.Namespace) -> int:
    async def work(db: Database) -> int:
        sources = await list_sources(db)
        if args.json:
            json.dump([s.as_dict() for s in sources], sys.stdout, ensure_ascii=False, indent=2)
            print()
        else:
            print(sources_table(sources))
        return 0

    use_data_dir(args)
    return run_db(work, create=False)


def cmd_sources_remove(args: argparse.Namespace) -> int:
    async def work(db: Database) -> int:
        ids, unknown = await resolve_sources(db, args.sources)
        if unknown:
            raise CliError(
                f"no source {', '.join(unknown)} (`fastnotebook sources list` shows the ids "
                "and paths); nothing was removed"
            )
        await remove_sources(db, ids)
        if not args.quiet:
            noun = "source" if len(ids) == 1 else "sources"
            print(f"removed {len(ids)} {noun} with their chunks, vectors and state")
        return 0

    use_data_dir(args)
    return run_db(work, create=False)


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    common = database_options()

    ingest_cmd = sub.add_parser(
        "ingest", parents=[common], help="create or update sources from files and folders"
    )
    ingest_cmd.add_argument("paths", nargs="+", help="files or folders (searched recursively)")
    ingest_cmd.add_argument(
        "--prune",
        action="store_true",
        help="also remove the sources under these paths whose files are gone",
    )
    ingest_cmd.add_argument(
        "--encoding",
        type=text_encoding,
        help="encoding of the files that are not UTF-8 (default: detected, with a warning)",
    )
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
        "--batch-size",
        type=_non_negative_int,
        default=0,
        help="chunks per model call (default 0: EMBEDDING_BATCH_SIZE, 50)",
    )
    embed_cmd.add_argument(
        "--concurrency",
        type=positive_int,
        default=0,
        help="model calls in flight (default: 1 for a model on this machine, 8 for an HTTP "
        "provider); lowered by itself while the provider answers 429/503",
    )
    embed_cmd.add_argument(
        "--timeout",
        type=_timeout,
        default=None,
        help="seconds per HTTP request to the provider (default: the provider's, 60); "
        "a batch that times out is split in halves",
    )
    embed_cmd.add_argument(
        "--vector-index",
        action="store_true",
        help="define the database's HNSW vector indexes (for `search --ann`) and keep them "
        "current; costs about 10 ms a chunk to build, where exact search needs none",
    )
    embed_cmd.add_argument(
        "--stage-after",
        type=_seconds,
        metavar="SECONDS",
        help="keep the finished batches of a large file once it has been this long in the "
        "model, so that an interrupted run resumes inside it (default 5; 0: from its first "
        "batch)",
    )
    add_ray_arguments(embed_cmd)
    embed_cmd.set_defaults(run=cmd_embed)

    search_cmd = sub.add_parser(
        "search",
        parents=[common],
        help="vector search, ranked hits",
        description="Vector search over the embedded sources, insights and notes. Hits are "
        "grouped: a source appears once, with its matching chunks under it, so -k 5 gives at "
        "most 5 sources (and notes), each with one or more chunks. By default the nearest "
        "vectors are found exactly (every stored vector compared, from a cache beside the "
        "database that is read again whenever the database changed) while that is the "
        "faster way, and by the database's HNSW index otherwise; --exact or --ann choose. "
        "While `fastnotebook serve` holds the database, the server answers.",
    )
    add_search_arguments(search_cmd)
    search_cmd.set_defaults(run=cmd_search)

    sources_cmd = sub.add_parser(
        "sources", help="list or remove sources (with their chunks, vectors and state)"
    )
    sources_sub = sources_cmd.add_subparsers(dest="action", required=True, metavar="ACTION")
    list_cmd = sources_sub.add_parser(
        "list", parents=[common], help="every source: id, path, size, chunks, state"
    )
    list_cmd.add_argument("--json", action="store_true", help="machine-readable output")
    list_cmd.set_defaults(run=cmd_sources_list)
    remove_cmd = sources_sub.add_parser(
        "remove",
        parents=[common],
        help="remove sources by id or file path, with their chunks, vectors and state",
    )
    remove_cmd.add_argument(
        "sources", nargs="+", metavar="ID|PATH", help="a source id (source:...) or a file path"
    )
    remove_cmd.set_defaults(run=cmd_sources_remove)
