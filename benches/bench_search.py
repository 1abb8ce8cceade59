"""Benchmark: vector search latency and recall, exact (core) against HNSW.

    python benches/bench_search.py [--matrix-rows 10000 100000 1000000]
        [--db-rows 10000] [--real-chunks 1000] [--queries 50] [--cli-runs 5]
        [--docs docs/performance.md] [--scaling docs/SCALING.md]

Four parts, each printed as it finishes:

1. The core's exact search (``_core.cosine_top_k``, k = 40: the chunks a
   search of 10 hits asks for) over synthetic float32 matrices of 384
   dimensions, each size in a child process: p50/p95 per query and the
   child's peak memory (ru_maxrss) with the matrix in memory.
2. A fresh on-disk database with ``--db-rows`` synthetic 384-dimension
   chunks (loaded without an index, in transactions of 500 rows), then the
   HNSW index defined after the load: load and index-build seconds; reading
   the snapshot of the vectors (a stale cache's cost) and loading it from
   the cache folder (a new process's cost); p50/p95 of the Python call
   ``vector_search(vector, 10, mode=...)`` for exact and ann.
3. ``fastnotebook search`` as a user runs it (a new process each time: the
   interpreter, the query's embedding by the zero-cost fake model, the
   database opened) on that database, ``--exact`` and ``--ann``.
4. Real vectors: ``--real-chunks`` chunks of the shared corpus (Markdown)
   embedded by the default offline model (all-MiniLM-L6-v2, 384
   dimensions); two databases, one with the HNSW index live during the load
   and one with it built after; recall@10 of each index against the exact
   top 10, over queries that are held-out chunks; the latencies of the
   three ways.

``--docs``/``--scaling`` rewrite the text between ``<!-- search:begin -->``
and ``<!-- search:end -->`` in those files with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("FASTNOTEBOOK_CORPUS", ROOT.parent / "shared" / "corpus"))
DIM = 384
K_CHUNKS = 40
BEGIN, END = "<!-- search:begin -->", "<!-- search:end -->"


def percentiles(seconds: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return statistics.median(ms), p95


def unit_rows(rng: np.random.Generator, rows: int) -> np.ndarray:
    matrix = rng.standard_normal((rows, DIM), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


# -- 1. the core over a matrix -------------------------------------------------


def matrix_case(rows: int, queries: int) -> dict[str, Any]:
    """Run in a child: time the core's search over ``rows`` synthetic rows."""
    from fastnotebook import _core

    rng = np.random.default_rng(rows)
    matrix = np.empty((rows, DIM), dtype=np.float32)
    for start in range(0, rows, 100_000):  # bounded temporaries
        end = min(rows, start + 100_000)
        matrix[start:end] = unit_rows(rng, end - start)
    t = time.perf_counter()
    norms = _core.row_norms(matrix)
    norms_s = time.perf_counter() - t
    times = []
    for _ in range(queries):
        query = unit_rows(rng, 1)[0]
        t = time.perf_counter()
        _core.cosine_top_k(matrix, norms, query, K_CHUNKS)
        times.append(time.perf_counter() - t)
    p50, p95 = percentiles(times)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"rows": rows, "p50": p50, "p95": p95, "norms_s": norms_s, "peak_mb": peak}


def run_matrix_cases(sizes: list[int], queries: int) -> list[dict[str, Any]]:
    results = []
    for rows in sizes:
        out = subprocess.run(
            [sys.executable, __file__, "--matrix-case", str(rows), "--queries", str(queries)],
            capture_output=True,
            text=True,
            check=True,
        )
        result = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"core exact, {rows:>9,} rows: p50 {result['p50']:.1f} ms, p95 {result['p95']:.1f} ms, "
            f"norms {result['norms_s']:.2f} s, peak memory {result['peak_mb']:.0f} MB",
            flush=True,
        )
        results.append(result)
    return results


# -- 2. the database with synthetic vectors -----------------------------------


async def load(db: Any, vectors: np.ndarray, texts: list[str] | None = None) -> float:
    """Write ``vectors`` as chunks of sources of 10 rows, 500 rows a transaction."""
    from fastnotebook.app.database import RecordID

    rows = len(vectors)
    sources = [RecordID("source", f"s{i}") for i in range((rows + 9) // 10)]
    await db.query_all(
        "FOR $s IN $ids { CREATE $s SET title = $s.id() RETURN NONE; };", {"ids": sources}
    )
    t = time.perf_counter()
    for start in range(0, rows, 500):
        batch = [
            {
                "source": sources[i // 10],
                "order": i % 10,
                "content": texts[i] if texts else f"chunk {i}",
                "embedding": vectors[i].tolist(),
            }
            for i in range(start, min(rows, start + 500))
        ]
        await db.query_all(
            "BEGIN TRANSACTION; INSERT INTO source_embedding $rows RETURN NONE; "
            "COMMIT TRANSACTION;",
            {"rows": batch},
        )
    return time.perf_counter() - t


async def timed_searches(vectors: np.ndarray, mode: str) -> tuple[float, float]:
    from fastnotebook.app.domain import vector_search

    times = []
    for vector in vectors:
        t = time.perf_counter()
        await vector_search(vector.tolist(), 10, minimum_score=-1.0, mode=mode)  # type: ignore[arg-type]
        times.append(time.perf_counter() - t)
    return percentiles(times)


async def database_case(rows: int, queries: int, folder: Path) -> dict[str, Any]:
    from fastnotebook.app.database import DatabaseSettings, open_database, set_database
    from fastnotebook.app.database.schema import ensure_vector_indexes
    from fastnotebook.app.database.vector_cache import _snapshots, read_snapshot, vector_snapshot

    rng = np.random.default_rng(rows + 1)
    settings = DatabaseSettings(DatabaseSettings.embedded_url(folder), full_text_search=False)
    db = await open_database(settings)
    set_database(db)
    result: dict[str, Any] = {"rows": rows}
    try:
        result["load_s"] = await load(db, unit_rows(rng, rows))
        t = time.perf_counter()
        await ensure_vector_indexes(DIM, db)
        result["index_s"] = time.perf_counter() - t
        t = time.perf_counter()
        await read_snapshot(db, DIM)
        result["read_s"] = time.perf_counter() - t
        await vector_snapshot(db, DIM)  # writes the cache folder
        _snapshots.pop(db, None)
        t = time.perf_counter()
        await vector_snapshot(db, DIM, read=False)
        result["file_s"] = time.perf_counter() - t
        probes = unit_rows(rng, queries)
        result["exact"] = await timed_searches(probes, "exact")
        result["ann"] = await timed_searches(probes, "ann")
    finally:
        set_database(None)
        await db.close()
    print(
        f"database, {rows:,} synthetic rows: load {result['load_s']:.1f} s, HNSW built after "
        f"load {result['index_s']:.1f} s, snapshot read {result['read_s']:.1f} s, cache file "
        f"load {result['file_s'] * 1000:.0f} ms; Python call p50/p95 exact "
        f"{result['exact'][0]:.1f}/{result['exact'][1]:.1f} ms, ann "
        f"{result['ann'][0]:.1f}/{result['ann'][1]:.1f} ms",
        flush=True,
    )
    return result


def cli_case(folder: Path, runs: int) -> dict[str, tuple[float, float]]:
    environment = {
        **os.environ,
        "FASTNOTEBOOK_EMBEDDING_PROVIDER": "fastnotebook-fake",
        "FASTNOTEBOOK_EMBEDDING_CONFIG": json.dumps({"dimension": DIM}),
        "FASTNOTEBOOK_FULL_TEXT_SEARCH": "0",
    }
    environment.pop("SURREAL_URL", None)
    result = {}
    for flag in ("--exact", "--ann"):
        times = []
        for i in range(runs):
            command = [sys.executable, "-m", "fastnotebook", "search", f"query {i}", flag]
            t = time.perf_counter()
            subprocess.run(
                [*command, "--data-dir", str(folder)],
                env=environment,
                capture_output=True,
                check=True,
            )
            times.append(time.perf_counter() - t)
        result[flag] = percentiles(times)
        print(
            f"fastnotebook search {flag}: p50 {result[flag][0]:.0f} ms, "
            f"p95 {result[flag][1]:.0f} ms (a new process each)",
            flush=True,
        )
    return result


# -- 4. real vectors -------------------------------------------------------------


def corpus_chunks(count: int) -> list[str]:
    from fastnotebook.chunking import chunk_text

    chunks: list[str] = []
    for path in sorted((CORPUS / "md").iterdir()):
        text = path.read_text(encoding="utf-8", errors="replace")
        chunks += [c for c in chunk_text(text, file_path=path) if c.strip()][:30]
        if len(chunks) >= count:
            break
    return chunks[:count]


async def real_case(chunks: int, queries: int, folder: Path) -> dict[str, Any]:
    from fastnotebook.ai import local_models, model_manager
    from fastnotebook.app.database import DatabaseSettings, open_database, set_database
    from fastnotebook.app.database.schema import ensure_vector_indexes
    from fastnotebook.app.database.vector_cache import vector_snapshot
    from fastnotebook.embedding import generate_embeddings

    texts = corpus_chunks(chunks + queries)
    held_out, stored = (
        texts[::10][:queries],
        [t for i, t in enumerate(texts) if i % 10 or i >= 10 * queries],
    )
    model_manager.configure_embedding_model(
        local_models.ONNX_PROVIDER, local_models.ONNX_MODEL_NAME
    )
    try:
        t = time.perf_counter()
        vectors = np.asarray(await generate_embeddings(stored), dtype=np.float32)
        probes = np.asarray(await generate_embeddings(held_out), dtype=np.float32)
        embed_s = time.perf_counter() - t
    finally:
        model_manager.reset()
    result: dict[str, Any] = {"chunks": len(stored), "queries": len(probes), "embed_s": embed_s}
    for how in ("live", "after"):
        settings = DatabaseSettings(
            DatabaseSettings.embedded_url(folder / how), full_text_search=False
        )
        db = await open_database(settings)
        set_database(db)
        try:
            t = time.perf_counter()
            if how == "live":
                await ensure_vector_indexes(DIM, db)
            await load(db, vectors, stored)
            if how == "after":
                await ensure_vector_indexes(DIM, db)
            load_s = time.perf_counter() - t
            snapshot = await vector_snapshot(db, DIM)
            assert snapshot is not None
            table = snapshot.tables["source_embedding"]
            recalls = []
            for probe in probes:
                exact = {rid for rid, _ in table.top_k(probe, 10)}
                rows = await db.query(
                    "SELECT id FROM source_embedding WHERE embedding <|10,40|> $q;",
                    {"q": probe.tolist()},
                )
                recalls.append(len(exact & {str(r["id"]) for r in rows}) / 10)
            result[how] = {
                "load_s": load_s,
                "recall": sum(recalls) / len(recalls),
                "min_recall": min(recalls),
                "ann": await timed_searches(probes, "ann"),
                "exact": await timed_searches(probes, "exact"),
            }
        finally:
            set_database(None)
            await db.close()
        r = result[how]
        print(
            f"real vectors ({len(stored)} MiniLM chunks), HNSW {how}: load+index "
            f"{r['load_s']:.1f} s, recall@10 {r['recall']:.3f} (min {r['min_recall']:.1f}); "
            f"Python call p50/p95 ann {r['ann'][0]:.1f}/{r['ann'][1]:.1f} ms, exact "
            f"{r['exact'][0]:.1f}/{r['exact'][1]:.1f} ms",
            flush=True,
        )
    return result


# -- report -----------------------------------------------------------------------


def report(
    matrix: list[dict[str, Any]],
    database: dict[str, Any] | None,
    cli: dict[str, tuple[float, float]] | None,
    real: dict[str, Any] | None,
) -> str:
    lines = [
        "| case | p50 | p95 | notes |",
        "|---|---:|---:|---|",
    ]
    for m in matrix:
        lines.append(
            f"| core exact, {m['rows']:,} rows (synthetic) | {m['p50']:.1f} ms | {m['p95']:.1f} ms "
            f"| peak memory {m['peak_mb']:,.0f} MB; norms once {m['norms_s']:.2f} s |"
        )
    if database:
        n = f"{database['rows']:,}"
        lines.append(
            f"| `vector_search` exact, {n} rows (synthetic) | {database['exact'][0]:.1f} ms "
            f"| {database['exact'][1]:.1f} ms | cache current |"
        )
        lines.append(
            f"| `vector_search` ann (HNSW built after load), {n} rows | "
            f"{database['ann'][0]:.1f} ms | {database['ann'][1]:.1f} ms | |"
        )
    if cli:
        for flag, (p50, p95) in cli.items():
            lines.append(
                f"| `fastnotebook search {flag}`, {database['rows']:,} rows | {p50:.0f} ms "  # type: ignore[index]
                f"| {p95:.0f} ms | a new process: interpreter, fake model, database open |"
            )
    if real:
        for how in ("live", "after"):
            r = real[how]
            lines.append(
                f"| `vector_search` ann, HNSW {how}, {real['chunks']:,} MiniLM chunks | "
                f"{r['ann'][0]:.1f} ms | {r['ann'][1]:.1f} ms | recall@10 {r['recall']:.3f} "
                f"(lowest {r['min_recall']:.1f}) over {real['queries']} queries |"
            )
        r = real["after"]
        lines.append(
            f"| `vector_search` exact, {real['chunks']:,} MiniLM chunks | {r['exact'][0]:.1f} ms "
            f"| {r['exact'][1]:.1f} ms | recall 1 by definition |"
        )
    text = "\n".join(lines)
    if database:
        text += (
            f"\n\nCosts around the search ({database['rows']:,} synthetic rows, on-disk database): "
            f"load {database['load_s']:.1f} s without an index; HNSW built after the load "
            f"{database['index_s']:.1f} s; reading the snapshot from the database (what a stale "
            f"cache costs) {database['read_s']:.1f} s; loading it from the cache folder "
            f"{database['file_s'] * 1000:.0f} ms."
        )
    if real:
        text += (
            f"\nReal vectors: load with HNSW live {real['live']['load_s']:.1f} s, "
            f"load then build {real['after']['load_s']:.1f} s ({real['chunks']:,} chunks)."
        )
    return text


def write_between_markers(path: Path, text: str) -> None:
    content = path.read_text(encoding="utf-8")
    if BEGIN not in content or END not in content:
        raise SystemExit(f"{path}: no {BEGIN} ... {END} section to fill")
    head, rest = content.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}", encoding="utf-8")
    print(f"wrote the figures into {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matrix-rows", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--db-rows", type=int, default=10_000, help="0: skip parts 2 and 3")
    parser.add_argument("--real-chunks", type=int, default=1000, help="0: skip part 4")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--cli-runs", type=int, default=5)
    parser.add_argument("--docs", type=Path)
    parser.add_argument("--scaling", type=Path)
    parser.add_argument("--matrix-case", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.matrix_case:
        print(json.dumps(matrix_case(args.matrix_case, args.queries)))
        return
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}", flush=True)
    matrix = run_matrix_cases(args.matrix_rows, args.queries)
    database = cli = real = None
    with tempfile.TemporaryDirectory(prefix="fn-search-bench-") as tmp:
        if args.db_rows:
            folder = Path(tmp) / "synthetic"
            database = asyncio.run(database_case(args.db_rows, args.queries, folder))
            if args.cli_runs:
                cli = cli_case(folder, args.cli_runs)
        if args.real_chunks and (CORPUS / "md").is_dir():
            real = asyncio.run(real_case(args.real_chunks, min(args.queries, 50), Path(tmp)))
    text = report(matrix, database, cli, real)
    text += (
        f"\n\n(`python benches/bench_search.py`, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f} at the end.)"
    )
    print(text)
    for target in (args.docs, args.scaling):
        if target is not None:
            write_between_markers(target, text)


if __name__ == "__main__":
    main()
