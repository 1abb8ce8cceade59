"""Benchmark of the bulk pipeline (``fastnotebook ingest`` + ``embed``).

    python benches/bench_pipeline.py [--mb 20] [--original-mb 0] [--sample-mb 0.25]
        [--rounds 3] [--vector-index none|live] [--open-notebook SRC]
        [--out bench-results] [--docs FILE]

Runs, each in its own process (so that each reports its own peak memory) on
its own on-disk embedded database (SurrealKV):

1. the whole corpus (at least ``--mb`` MB: the shared corpus, or the one
   ``fastnotebook.bench.corpus`` builds, repeated with a variant line until
   large enough) with the zero-cost fake model (``fastnotebook-fake``, 384
   dimensions): ``ingest`` then ``embed``, chunks/s of everything that is not
   the model, database writes included;
2. the floor: the same chunks (the same texts, the fake model's vectors,
   one record id per document), encoded before the clock starts, sent as
   ``INSERT INTO <schemaless table> $rows RETURN NONE`` requests of as
   many rows as the writer groups (``EmbedOptions.write_rows``) straight to
   the engine, one at a time: the engine's own insert rate for these rows
   from one writer; and the same with two requests in flight, as the
   pipeline's writer sends them (``EmbedOptions.write_lanes``), which keeps
   the engine on two cores;
3. the original's per-source path on the same corpus (or, with
   ``--original-mb``, on its first MB, for a quicker run), with Open
   Notebook's typed chunk table (and, as Open Notebook,
   no vector index): for each source ``chunk_text``, then per chunk
   ``generate_embedding`` and one ``CREATE`` that returns the row;
4. a sample (``--sample-mb``, 0 to skip) with the real default model
   (``fastnotebook-onnx``): documents/s, MB/s, and where the wall time goes
   (model, database, and ours: reading, chunking, hashing, pooling);
5. with ``--open-notebook SRC`` (default: ``FASTNOTEBOOK_OPEN_NOTEBOOK_SRC``),
   ``embed`` of the first ``--open-notebook-mb`` MB on a database created by
   that Open Notebook checkout's own migrations (its typed chunk table and
   its BM25 index on chunk content, live);
6. with ``--full-text-mb``, the pipeline on a small sample with fastnotebook's
   full-text (BM25) indexes, to show what they cost;
7. re-embedding: run 1, then every record embedded again (``embed
   --rebuild all``, the work a change of model gives: each record's old
   chunks found and deleted, new ones written) and searched; that second
   ``embed`` and search are what is measured (one round).

Runs 1-3 (both floors) are repeated ``--rounds`` times, alternating (the machines are
shared and noisy): each ratio is taken within a round, and the median
round's figures and the ratios' median and range are reported.

``--vector-index none`` (the default) runs the pipeline without the HNSW
index (search is exact); ``live`` defines it on the first write, as
``embed`` does by default. Results: a table on stdout, the ratios to the
floor and to the original, ``pipeline.json`` and ``pipeline.md`` in
``--out``; ``--docs FILE`` rewrites the section between
``<!-- write-path:begin -->`` and ``<!-- write-path:end -->`` of FILE.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SUFFIX = {"html": ".html", "markdown": ".md", "plain": ".txt"}


def build_corpus(folder: Path, megabytes: float, corpus_dir: str | None) -> tuple[int, int]:
    """Write at least ``megabytes`` MB of documents into ``folder``: the
    corpus once, then copies with a first line that makes each text new."""
    from fastnotebook.bench import corpus

    docs = corpus.load(Path(corpus_dir)).documents if corpus_dir else corpus.default().documents
    folder.mkdir(parents=True)
    written = files = 0
    copy = 0
    while written < megabytes * 1e6:
        for i, doc in enumerate(docs):
            text = doc.text if copy == 0 else f"Copy {copy} of document {i}.\n\n{doc.text}"
            path = folder / f"c{copy}" / f"{i:05d}{SUFFIX[doc.kind]}"
            path.parent.mkdir(exist_ok=True)
            data = text.encode("utf-8", "surrogateescape")
            path.write_bytes(data)
            written += len(data)
            files += 1
            if written >= megabytes * 1e6:
                break
        copy += 1
    return files, written


def sample_corpus(source: Path, folder: Path, megabytes: float) -> None:
    """The first files of each kind under ``source`` until ``megabytes`` MB."""
    files = sorted(p for p in source.rglob("*") if p.is_file())
    by_kind: dict[str, list[Path]] = {}
    for path in files:
        by_kind.setdefault(path.suffix, []).append(path)
    folder.mkdir(parents=True)
    size = 0.0
    while size < megabytes * 1e6 and any(by_kind.values()):
        for paths in by_kind.values():
            if paths and size < megabytes * 1e6:
                path = paths.pop(0)
                (folder / path.name).write_bytes(path.read_bytes())
                size += path.stat().st_size


# --- the runs, each in a child process --------------------------------------


def _quiet_logs() -> None:
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _open(data_dir: Path, full_text: bool) -> Any:
    from fastnotebook.app.database import DatabaseSettings, open_database, set_database

    settings = DatabaseSettings(DatabaseSettings.embedded_url(data_dir), full_text_search=full_text)
    db = await open_database(settings)
    set_database(db)
    return db


def _store_mb(data_dir: Path) -> float:
    return sum(p.stat().st_size for p in data_dir.rglob("*") if p.is_file()) / 1e6


# A write transaction: (chunk rows, start, end), perf_counter seconds.
Group = tuple[int, float, float]


def _timed_groups() -> list[Group]:
    """Record every write transaction the pipeline runs."""
    from fastnotebook.app.pipeline import stages, writer

    groups: list[Group] = []

    async def execute(db: Any, prepared: writer.Prepared, lane: int = 0) -> None:
        start = time.perf_counter()
        await writer.execute(db, prepared, lane)
        groups.append((len(prepared.ids), start, time.perf_counter()))

    stages.execute = execute  # type: ignore[assignment]
    return groups


def busy_rate(groups: list[Group]) -> float:
    """Rows a second of the time some of ``groups`` ran (transactions in
    flight together count their shared time once)."""
    rows = sum(r for r, _, _ in groups)
    seconds, reached = 0.0, float("-inf")
    for _, start, end in sorted(groups, key=lambda g: g[1]):
        seconds += max(0.0, end - max(start, reached))
        reached = max(reached, end)
    return rows / seconds if seconds else 0.0


def _growth(groups: list[Group]) -> dict[str, float]:
    """Write rows/s over the first and the last fifth of the groups."""
    fifth = max(1, len(groups) // 5)
    return {"first_rows_s": busy_rate(groups[:fifth]), "last_rows_s": busy_rate(groups[-fifth:])}


async def run_pipeline(
    corpus: Path, data_dir: Path, full_text: bool, vector_index: bool, again: bool = False
) -> dict[str, Any]:
    """ingest, embed and the first search; ``again``: then every record
    embedded once more (as after a change of model: each record's old
    chunks deleted, new ones written) and searched, which is what is
    measured."""
    from fastnotebook.app.domain import vector_search
    from fastnotebook.app.pipeline import EmbedOptions, ingest
    from fastnotebook.app.pipeline.stages import embed

    async def searchable() -> float:
        # The first search after a run: exact search's cache is current
        # (the writer's journal), an ANN search needs the index.
        start = time.perf_counter()
        await vector_search([1.0] + [0.0] * 383, 5, mode="ann" if vector_index else "exact")
        return time.perf_counter() - start

    groups = _timed_groups()
    db = await _open(data_dir, full_text)
    ingested = await ingest([corpus], db)
    report = await embed(EmbedOptions(vector_index=vector_index), db)
    ready = await searchable()
    if again:
        groups.clear()
        report = await embed(EmbedOptions(vector_index=vector_index, rebuild="all"), db)
        ready = await searchable()
    await db.close()
    counts = report.counts["source"]
    return {
        **_growth(groups),
        "write_rows_s": busy_rate(groups),
        "store_mb": _store_mb(data_dir),
        "documents": counts.embedded,
        "chunks": counts.chunks,
        "bytes": counts.bytes,
        **({} if again else {"ingest_seconds": ingested.seconds}),
        "ingest_stages": dict(ingested.clock.seconds),
        "embed_seconds": report.seconds,
        "ready_seconds": ready,
        "embed_stages": dict(report.clock.seconds),
        "model": report.model,
    }


# Open Notebook's chunk table (its migration 1): typed fields on a SCHEMAFULL
# table, so that the engine checks every number of every vector.
TYPED_CHUNKS = """
DEFINE TABLE OVERWRITE source_embedding SCHEMAFULL;
DEFINE FIELD OVERWRITE source ON TABLE source_embedding TYPE record<source>;
DEFINE FIELD OVERWRITE order ON TABLE source_embedding TYPE int;
DEFINE FIELD OVERWRITE content ON TABLE source_embedding TYPE string;
DEFINE FIELD OVERWRITE embedding ON TABLE source_embedding TYPE array<float>;
"""


async def run_original(corpus: Path, data_dir: Path) -> dict[str, Any]:
    """Open Notebook's way, record by record: chunk_text, then per chunk
    generate_embedding and one CREATE (which returns the row)."""
    from fastnotebook.app.database import ensure_record_id, repo_create
    from fastnotebook.app.pipeline import ingest
    from fastnotebook.chunking import chunk_text
    from fastnotebook.embedding import generate_embedding

    db = await _open(data_dir, False)
    await db.query_all(TYPED_CHUNKS)
    await ingest([corpus], db)
    sources = await db.query("SELECT id, asset.file_path AS path FROM source;")
    start = time.perf_counter()
    chunks = size = 0
    stages = {"load": 0.0, "chunk": 0.0, "model": 0.0, "write": 0.0}
    for source in sources:
        t0 = time.perf_counter()
        [text] = await db.query("SELECT VALUE full_text FROM $id;", {"id": source["id"]})
        t1 = time.perf_counter()
        pieces = chunk_text(text, file_path=source["path"])
        t2 = time.perf_counter()
        stages["load"] += t1 - t0
        stages["chunk"] += t2 - t1
        for order, piece in enumerate(pieces):
            t3 = time.perf_counter()
            vector = await generate_embedding(piece)
            t4 = time.perf_counter()
            await repo_create(
                "source_embedding",
                {
                    "source": ensure_record_id(source["id"]),
                    "order": order,
                    "content": piece,
                    "embedding": vector,
                },
            )
            stages["model"] += t4 - t3
            stages["write"] += time.perf_counter() - t4
            chunks += 1
        size += len(text.encode("utf-8"))
    seconds = time.perf_counter() - start
    await db.close()
    return {
        "documents": len(sources),
        "chunks": chunks,
        "bytes": size,
        "embed_seconds": seconds,
        "embed_stages": stages,
        "write_rows_s": chunks / stages["write"] if stages["write"] else 0.0,
        "store_mb": _store_mb(data_dir),
    }


def _documents(corpus: Path) -> list[tuple[str, str]]:
    """(path, text) of every file of ``corpus``, as ingest reads them."""
    from fastnotebook.app.pipeline.documents import discover, read_document

    found = discover([corpus])
    return [(str(p), read_document(p).text) for p in found.files]


def floor_requests(chunked: list[list[str]]) -> list[tuple[int, Any]]:
    """The pipeline's rows for ``chunked`` (one record id per document, the
    fake model's vectors), encoded as ``INSERT`` requests into a schemaless
    table of as many rows as the writer groups: (rows, request) each."""
    from fastnotebook._core import encode_chunk_rows
    from fastnotebook.app.database import RecordID
    from fastnotebook.app.database.encoded import Encoded, encode_value, query_request
    from fastnotebook.app.pipeline import EmbedOptions
    from fastnotebook.app.pipeline.fake_model import hash_vectors

    group_rows = EmbedOptions().write_rows
    requests = []
    owners: list[bytes] = []
    counts: list[int] = []
    texts: list[str] = []
    for i, chunks in enumerate(chunked):
        owners.append(encode_value(RecordID("source", i)))
        counts.append(len(chunks))
        texts += chunks
        if len(texts) >= group_rows or i == len(chunked) - 1:
            data = encode_chunk_rows(owners, counts, texts, hash_vectors(texts, 384))
            sql = "INSERT INTO floor_rows $rows RETURN NONE;"
            requests.append((len(texts), query_request(sql, {"rows": Encoded(data)})))
            owners, counts, texts = [], [], []
    return requests


async def send_floor(
    data_dir: Path, requests: list[tuple[int, Any]], in_flight: int
) -> tuple[float, list[Group]]:
    """Sends ``requests`` straight to the engine of a fresh database in
    ``data_dir``, ``in_flight`` at a time: the seconds it took, and each
    request's (rows, start, end)."""
    from fastnotebook.app.database import Database, DatabaseSettings

    settings = DatabaseSettings(DatabaseSettings.embedded_url(data_dir), auto_migrate=False)
    db = await Database(settings).open()
    # Defined before the clock, as the pipeline's tables are: two first
    # inserts into an undefined table both define it, and one fails.
    await db.query("DEFINE TABLE floor_rows SCHEMALESS;")
    groups: list[Group] = []
    slots = asyncio.Semaphore(in_flight)

    async def send(rows: int, request: Any) -> None:
        async with slots:
            t0 = time.perf_counter()
            response = await db._conn._send(request, "query", bypass=True)
            groups.append((rows, t0, time.perf_counter()))
        if any(s.get("status") != "OK" for s in response["result"]):
            raise SystemExit(f"floor insert failed: {response['result']}")

    start = time.perf_counter()
    await asyncio.gather(*(send(rows, request) for rows, request in requests))
    seconds = time.perf_counter() - start
    await db.close()
    return seconds, groups


async def run_floor(corpus: Path, data_dir: Path, in_flight: int = 1) -> dict[str, Any]:
    """The engine's own insert rate for the pipeline's rows: encoded before
    the clock starts, ``INSERT`` into a schemaless table with no index, in
    groups of the pipeline's size, ``in_flight`` requests at a time."""
    from fastnotebook.chunking import chunk_texts

    documents = _documents(corpus)
    chunked = chunk_texts([t for _, t in documents], file_paths=[p for p, _ in documents])
    seconds, groups = await send_floor(data_dir, floor_requests(chunked), in_flight)
    chunks = sum(r for r, _, _ in groups)
    return {
        **_growth(groups),
        "documents": len(documents),
        "chunks": chunks,
        "bytes": sum(len(t.encode("utf-8", "surrogatepass")) for _, t in documents),
        "embed_seconds": seconds,
        "embed_stages": {"write": seconds},
        "write_rows_s": chunks / seconds,
        "store_mb": _store_mb(data_dir),
    }


async def run_open_notebook(corpus: Path, data_dir: Path, src: Path) -> dict[str, Any]:
    """``embed`` on a database made by Open Notebook's own migrations."""
    from fastnotebook.app.database import Database, DatabaseSettings, open_notebook_db
    from fastnotebook.app.pipeline import EmbedOptions
    from fastnotebook.app.pipeline.stages import embed

    groups = _timed_groups()
    settings = DatabaseSettings(DatabaseSettings.embedded_url(data_dir), auto_migrate=False)
    db = await Database(settings).open()
    await open_notebook_db.apply_migrations(db, src)
    await open_notebook_db.add_sources(db, _documents(corpus))
    report = await embed(EmbedOptions(kinds=("source",)), db)
    await db.close()
    counts = report.counts["source"]
    return {
        **_growth(groups),
        "write_rows_s": busy_rate(groups),
        "store_mb": _store_mb(data_dir),
        "documents": counts.embedded,
        "chunks": counts.chunks,
        "bytes": counts.bytes,
        "embed_seconds": report.seconds,
        "embed_stages": dict(report.clock.seconds),
        "model": report.model,
    }


def child(args: argparse.Namespace) -> None:
    _quiet_logs()
    from fastnotebook.ai import model_manager
    from fastnotebook.app.pipeline import fake_model

    if args.model == "fake":
        model_manager.configure_embedding_model(fake_model.FAKE_PROVIDER, config={"dimension": 384})
    corpus, data_dir = Path(args.corpus), Path(args.data_dir)
    if args.run == "original":
        result = asyncio.run(run_original(corpus, data_dir))
    elif args.run in ("floor", "floor-2"):
        result = asyncio.run(run_floor(corpus, data_dir, 2 if args.run == "floor-2" else 1))
    elif args.run == "open-notebook":
        result = asyncio.run(run_open_notebook(corpus, data_dir, Path(args.open_notebook)))
    else:
        vector_index = args.vector_index == "live"
        again = args.run == "re-embed"
        result = asyncio.run(run_pipeline(corpus, data_dir, args.full_text, vector_index, again))
    result["peak_mb"] = _peak_mb()
    print(json.dumps(result))


def spawn(
    run: str, model: str, corpus: Path, data_dir: Path, args: argparse.Namespace, full_text: bool
) -> Any:
    command = [sys.executable, __file__, "--child", run, "--model", model]
    command += ["--corpus", str(corpus), "--data-dir", str(data_dir)]
    command += ["--vector-index", args.vector_index]
    if args.open_notebook:
        command += ["--open-notebook", args.open_notebook]
    if full_text:
        command.append("--full-text")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SURREAL_", "FASTNOTEBOOK_"))}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{run} run failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- report -------------------------------------------------------------------

MODEL, DATABASE = ("model",), ("plan", "load", "write", "index")
OURS = ("read", "parse", "hash", "chunk", "pool", "prepare")


def shares(result: dict[str, Any]) -> str:
    wall = result["embed_seconds"]
    stages = result["embed_stages"]

    def busy(names: tuple[str, ...]) -> float:
        return sum(stages.get(n, 0.0) for n in names)

    return (
        f"model {100 * busy(MODEL) / wall:.1f}%, database {100 * busy(DATABASE) / wall:.1f}%, "
        f"ours {100 * busy(OURS) / wall:.2f}%"
    )


def row(name: str, result: dict[str, Any]) -> list[str]:
    mb = result["bytes"] / 1e6
    wall = result["embed_seconds"]
    return [
        name,
        f"{result['documents']:,}",
        f"{result['chunks']:,}",
        f"{mb:.1f}",
        f"{wall:.1f}",
        f"{result['documents'] / wall:.2f}",
        f"{mb / wall:.3f}",
        f"{result['peak_mb']:.0f}",
        shares(result),
    ]


def markdown(rows: list[list[str]]) -> str:
    headers = ["run", "documents", "chunks", "MB", "embed s", "docs/s", "MB/s", "peak MB"]
    headers.append("busy time (share of wall; the parts overlap)")
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


FLOOR = "floor: pre-encoded INSERT, schemaless table"
FLOOR_2 = "floor, two requests in flight"
PIPELINE = "pipeline, fake model"
ORIGINAL = "original path, fake model"
OPEN_NOTEBOOK = "pipeline on Open Notebook's schema (BM25 live), fake model"
REEMBED = "re-embed: every record again, old chunks replaced, fake model"


def chunk_rate(result: dict[str, Any]) -> float:
    """Chunks a second from the files (or the stored texts) to a searchable
    store: ingest, embed and the first search where the run has them."""
    seconds = (
        result.get("ingest_seconds", 0.0)
        + result["embed_seconds"]
        + result.get("ready_seconds", 0.0)
    )
    return float(result["chunks"] / seconds)


def _seconds(result: dict[str, Any], key: str) -> str:
    return f"{result[key]:.1f}" if key in result else "-"


def write_path_section(results: dict[str, Any], args: argparse.Namespace, corpus_mb: float) -> str:
    """The write path's figures, as docs/performance.md gives them."""
    floor = results[FLOOR]
    lines = [
        f"Measured by `python benches/bench_pipeline.py --mb {args.mb:g} "
        f"--original-mb {args.original_mb:g} --rounds {args.rounds}` (`make bench`) "
        f"on a {corpus_mb:.1f} MB corpus, "
        f"vector index: {args.vector_index}, fake model (384 dimensions), on-disk "
        "SurrealKV databases, each run in its own process.",
        "",
        "| run | chunks | ingest s | embed s | first search s | chunks/s (all three) "
        "| write rows/s (first fifth - last fifth) | store MB | x floor |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        if "write_rows_s" not in r:
            continue
        growth = "(-)"
        if "first_rows_s" in r:
            growth = f"({r['first_rows_s']:,.0f} - {r['last_rows_s']:,.0f})"
        lines.append(
            f"| {name} | {r['chunks']:,} | {_seconds(r, 'ingest_seconds')} "
            f"| {r['embed_seconds']:.1f} | {_seconds(r, 'ready_seconds')} | {chunk_rate(r):,.0f} "
            f"| {r['write_rows_s']:,.0f} {growth} | {r['store_mb']:.0f} "
            f"| {chunk_rate(r) / chunk_rate(floor):.2f} |"
        )
    lines.append("")
    for line in ratio_lines(results):
        lines.append(f"- {line}")
    return "\n".join(lines)


def round_ratios(rounds: dict[str, list[dict[str, Any]]], other: str) -> list[float]:
    """The pipeline's chunks/s over ``other``'s, round by round."""
    return [
        chunk_rate(mine) / chunk_rate(theirs)
        for mine, theirs in zip(rounds[PIPELINE], rounds[other], strict=True)
    ]


def median_round(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median chunks/s (the lower middle one of an even count)."""
    ranked = sorted(results, key=chunk_rate)
    return ranked[(len(ranked) - 1) // 2]


def _spread(ratios: list[float], digits: int) -> str:
    """The median ratio, and its range when there were several rounds."""
    ordered = sorted(ratios)
    middle = ordered[(len(ordered) - 1) // 2]
    if len(ordered) == 1:
        return f"{middle:.{digits}f}x"
    return (
        f"{middle:.{digits}f}x (rounds {ordered[0]:.{digits}f}-{ordered[-1]:.{digits}f}, "
        f"median of {len(ordered)})"
    )


def ratio_lines(results: dict[str, Any]) -> list[str]:
    pipeline, floor = results[PIPELINE], results[FLOOR]
    ratios = pipeline.get("ratios", {})

    def against(other: str, key: str) -> list[float]:
        """The pipeline's ratios to ``other`` per round (or of the one run)."""
        return ratios.get(key) or [chunk_rate(pipeline) / chunk_rate(results[other])]

    to_floor = against(FLOOR, "floor")
    lines = [
        f"ingest + embed + first search: {chunk_rate(pipeline):,.0f} chunks/s "
        f"({pipeline['ingest_seconds']:.1f} s + {pipeline['embed_seconds']:.1f} s "
        f"+ {pipeline['ready_seconds']:.1f} s) against the floor's {chunk_rate(floor):,.0f} "
        f"rows/s: {_spread(to_floor, 2)} the floor",
    ]
    if FLOOR_2 in results:
        lines.append(
            f"the floor with two requests in flight (as the writer sends them): "
            f"{chunk_rate(results[FLOOR_2]):,.0f} rows/s; the pipeline "
            f"{_spread(against(FLOOR_2, 'floor_2'), 2)} that"
        )
    if ORIGINAL in results:
        lines.append(
            f"original per-chunk path: {chunk_rate(results[ORIGINAL]):,.0f} chunks/s; "
            f"the pipeline {_spread(against(ORIGINAL, 'original'), 1)}"
        )
    if REEMBED in results:
        again = results[REEMBED]
        lines.append(
            f"re-embedding every record (its old chunks found and deleted, new ones written, "
            f"as after a change of model): {chunk_rate(again):,.0f} chunks/s "
            f"({again['embed_seconds']:.1f} s + {again['ready_seconds']:.1f} s), "
            f"{chunk_rate(again) / chunk_rate(floor):.2f}x the floor (one round)"
        )
    if OPEN_NOTEBOOK in results:
        on = results[OPEN_NOTEBOOK]
        lines.append(
            f"Open Notebook's schema: {chunk_rate(on):,.0f} chunks/s "
            f"({chunk_rate(on) / chunk_rate(floor):.2f}x the floor)"
        )
    return lines


def write_docs(path: Path, section: str) -> None:
    begin, end = "<!-- write-path:begin -->", "<!-- write-path:end -->"
    text = path.read_text(encoding="utf-8")
    if begin not in text or end not in text:
        raise SystemExit(f"{path} has no {begin} ... {end} section")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{begin}\n{section}\n{end}{tail}", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=20.0, help="corpus size (default 20 MB)")
    parser.add_argument(
        "--original-mb",
        type=float,
        default=0.0,
        help="original path's sample (default 0: the whole corpus, the pipeline's chunks)",
    )
    parser.add_argument("--sample-mb", type=float, default=0.25, help="real-model sample (0: none)")
    parser.add_argument("--full-text-mb", type=float, default=0.0, help="BM25 run's sample")
    parser.add_argument("--corpus", help="folder of documents (default: shared or built)")
    parser.add_argument("--out", default="bench-results")
    parser.add_argument("--docs", help="rewrite this file's write-path section")
    parser.add_argument("--skip-original", action="store_true", help="skip run 3")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of runs 1-3 (default 3)")
    parser.add_argument("--vector-index", choices=["none", "live"], default="none")
    parser.add_argument(
        "--open-notebook",
        default=os.environ.get("FASTNOTEBOOK_OPEN_NOTEBOOK_SRC"),
        help="an Open Notebook checkout: run 5 on a database its migrations create",
    )
    parser.add_argument("--open-notebook-mb", type=float, default=2.0)
    parser.add_argument(
        "--child",
        choices=["pipeline", "re-embed", "original", "floor", "floor-2", "open-notebook"],
    )
    parser.add_argument("--model", choices=["fake", "default"], default="fake")
    parser.add_argument("--data-dir")
    parser.add_argument("--full-text", action="store_true")
    args = parser.parse_args()
    args.run = args.child
    if args.rounds < 1:
        parser.error(f"--rounds must be 1 or more, got {args.rounds}")
    if args.run:
        child(args)
        return
    with tempfile.TemporaryDirectory(prefix="fastnotebook-bench-") as tmp:
        root = Path(tmp)
        files, size = build_corpus(root / "corpus", args.mb, args.corpus)
        print(f"corpus: {files:,} files, {size / 1e6:.1f} MB", flush=True)
        runs = [
            (PIPELINE, "pipeline", "fake", root / "corpus", False),
            (FLOOR, "floor", "fake", root / "corpus", False),
            (FLOOR_2, "floor-2", "fake", root / "corpus", False),
        ]
        if not args.skip_original:
            original = root / "corpus"
            if args.original_mb:
                original = root / "original"
                sample_corpus(root / "corpus", original, args.original_mb)
            runs.append((ORIGINAL, "original", "fake", original, False))
        runs.append((REEMBED, "re-embed", "fake", root / "corpus", False))
        if args.open_notebook:
            sample_corpus(root / "corpus", root / "on-sample", args.open_notebook_mb)
            runs.append((OPEN_NOTEBOOK, "open-notebook", "fake", root / "on-sample", False))
        if args.sample_mb:
            sample_corpus(root / "corpus" / "c0", root / "sample", args.sample_mb)
            runs.append(
                ("pipeline, default model (sample)", "pipeline", "default", root / "sample", False)
            )
        if args.full_text_mb:
            sample_corpus(root / "corpus" / "c0", root / "ft-sample", args.full_text_mb)
            runs.append(
                ("pipeline, fake model, BM25 on", "pipeline", "fake", root / "ft-sample", True)
            )
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        repeated = [r for r in runs if r[0] in (PIPELINE, FLOOR, FLOOR_2, ORIGINAL)]
        rounds: dict[str, list[dict[str, Any]]] = {name: [] for name, *_ in repeated}
        schedule = [(n, r) for n in range(args.rounds) for r in repeated]
        schedule += [(0, r) for r in runs if r not in repeated]
        for n, (name, run, model, corpus, full_text) in schedule:
            print(f"running: {name} (round {n + 1}) ...", flush=True)
            data_dir = root / f"db-{n}-{runs.index((name, run, model, corpus, full_text))}"
            result = spawn(run, model, corpus, data_dir, args, full_text)
            shutil.rmtree(data_dir, ignore_errors=True)
            rounds.setdefault(name, []).append(result)
            print(f"  {shares(result)}", flush=True)
            print(f"  {json.dumps(result)}", flush=True)
    results = {name: median_round(rounds[name]) for name, *_ in runs}
    # Kept with the pipeline's run: pipeline.json stays one entry per run.
    results[PIPELINE]["ratios"] = {
        "floor": round_ratios(rounds, FLOOR),
        "floor_2": round_ratios(rounds, FLOOR_2),
        **({"original": round_ratios(rounds, ORIGINAL)} if ORIGINAL in rounds else {}),
    }
    rows = [row(name, result) for name, result in results.items()]
    text = markdown(rows)
    print("\n" + text)
    first = results[PIPELINE]
    ingest_mb_s = first["bytes"] / 1e6 / first["ingest_seconds"]
    print(f"\ningest (read, front matter, write sources): {ingest_mb_s:.1f} MB/s")
    section = write_path_section(results, args, size / 1e6)
    print("\n" + section)
    (out / "pipeline.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    (out / "pipeline.md").write_text(text + "\n\n" + section + "\n", encoding="utf-8")
    print(f"wrote {out / 'pipeline.json'}, {out / 'pipeline.md'}")
    if args.docs:
        write_docs(Path(args.docs), section)
        print(f"wrote the write-path section of {args.docs}")


if __name__ == "__main__":
    main()
