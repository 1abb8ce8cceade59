"""Benchmark: vector search latency and recall, exact (core) against HNSW.

    python benches/bench_search.py [--matrix-rows 10000 100000 1000000]
        [--db-rows 10000 100000 1000000] [--db-folder DIR] [--hnsw-max-rows 10000]
        [--real-chunks 1000] [--queries 50] [--cli-runs 5]
        [--docs docs/performance.md] [--scaling docs/SCALING.md]

Four parts, each printed as it finishes:

1. The core's exact search (``_core.cosine_top_k``, k = 40: the chunks a
   search of 10 hits asks for) over synthetic float32 matrices of 384
   dimensions, each size in a child process: p50/p95 per query with the
   sketch (``_core.sketch_rows``, checked to give the same bits) and
   without, and the child's peak memory (ru_maxrss) with the matrix in
   memory.
2. For each of ``--db-rows``, an on-disk database with that many synthetic
   384-dimension chunks (loaded without an index by the bulk pipeline's
   writer; kept in ``--db-folder`` and reused if given), then the HNSW index
   defined after the load up to ``--hnsw-max-rows`` (building it is slow
   beyond): load and index-build seconds; reading
   the snapshot of the vectors (a stale cache's cost) and loading it from
   the cache folder (a new process's cost); p50/p95 of the Python call
   ``vector_search(vector, 10, mode=...)`` for exact and (with an index)
   ann.
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
    sketch = _core.sketch_rows(matrix)
    norms_s = time.perf_counter() - t
    plain, sketched = [], []
    for _ in range(queries):
        query = unit_rows(rng, 1)[0]
        t = time.perf_counter()
        expected = _core.cosine_top_k(matrix, norms, query, K_CHUNKS)
        plain.append(time.perf_counter() - t)
        t = time.perf_counter()
        found = _core.cosine_top_k(matrix, norms, query, K_CHUNKS, sketch)
        sketched.append(time.perf_counter() - t)
        assert found[0].tolist() == expected[0].tolist()
        assert found[1].tobytes() == expected[1].tobytes()
    p50, p95 = percentiles(sketched)
    plain_p50, plain_p95 = percentiles(plain)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "rows": rows,
        "p50": p50,
        "p95": p95,
        "plain_p50": plain_p50,
        "plain_p95": plain_p95,
        "norms_s": norms_s,
        "peak_mb": peak,
    }


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
            f"core exact, {rows:>9,} rows: p50 {result['p50']:.1f} ms, p95 {result['p95']:.1f} ms "
            f"(without the sketch {result['plain_p50']:.1f}/{result['plain_p95']:.1f} ms), "
            f"norms and sketch {result['norms_s']:.2f} s, peak memory {result['peak_mb']:.0f} MB",
            flush=True,
        )
        results.append(result)
    return results


# -- 2. the database with synthetic vectors -----------------------------------


async def load(db: Any, vectors: np.ndarray, texts: list[str] | None = None) -> float:
    """Write ``vectors`` as chunks of sources of 10 rows through the bulk
    pipeline's writer, in groups of its size (``EmbedOptions.write_rows``)."""
    from fastnotebook.app.database import RecordID
    from fastnotebook.app.pipeline import EmbedOptions
    from fastnotebook.app.pipeline.state import Settings
    from fastnotebook.app.pipeline.writer import Finished, write_group

    rows = len(vectors)
    sources = [RecordID("source", f"s{i}") for i in range((rows + 9) // 10)]
    await db.query_all(
        "FOR $s IN $ids { CREATE $s SET title = $s.id() RETURN NONE; };", {"ids": sources}
    )
    settings = Settings("bench/synthetic", "bench")
    per_group = EmbedOptions().write_rows // 10
    t = time.perf_counter()
    for first in range(0, len(sources), per_group):
        group = []
        for n in range(first, min(len(sources), first + per_group)):
            span = range(10 * n, min(rows, 10 * n + 10))
            chunks = [texts[i] if texts else f"chunk {i}" for i in span]
            group.append(
                Finished(
                    sources[n],
                    "source",
                    f"h{n}",
                    0,
                    chunks,
                    list(vectors[span.start : span.stop]),
                    0,
                )
            )
        await write_group(db, group, settings)
    return time.perf_counter() - t


async def timed_searches(vectors: np.ndarray, mode: str) -> tuple[float, float]:
    from fastnotebook.app.domain import vector_search

    times = []
    for vector in vectors:
        t = time.perf_counter()
        await vector_search(vector.tolist(), 10, minimum_score=-1.0, mode=mode)  # type: ignore[arg-type]
        times.append(time.perf_counter() - t)
    return percentiles(times)


async def database_case(
    rows: int, queries: int, folder: Path, hnsw_max_rows: int
) -> dict[str, Any]:
    from fastnotebook.app.database import DatabaseSettings, open_database, set_database
    from fastnotebook.app.database.schema import ensure_vector_indexes
    from fastnotebook.app.database.vector_cache import (
        _snapshots,
        read_snapshot,
        store_changes,
        vector_snapshot,
    )

    rng = np.random.default_rng(rows + 1)
    settings = DatabaseSettings(DatabaseSettings.embedded_url(folder), full_text_search=False)
    db = await open_database(settings)
    set_database(db)
    result: dict[str, Any] = {"rows": rows, "load_s": None, "index_s": None, "ann": None}
    try:
        held = (await store_changes(db)).rows
        if held != rows:  # a kept database (--db-folder) is loaded once
            if held:
                raise SystemExit(f"{folder} holds {held} vectors, not {rows}: remove it")
            result["load_s"] = await load(db, unit_rows(rng, rows))
            if rows <= hnsw_max_rows:
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
        if (await store_changes(db)).dimension is not None:
            result["ann"] = await timed_searches(probes, "ann")
    finally:
        set_database(None)
        await db.close()
    print(f"database, {rows:,} synthetic rows: {result}", flush=True)
    return result


# Started from this (large) process, a child's peak memory would count this
# process's pages from before its exec: a small process in between starts it.
_PEAK = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
errors = child.stderr.read()
_, status, usage = os.wait4(child.pid, 0)
if os.waitstatus_to_exitcode(status):
    sys.exit(errors.decode(errors="replace"))
print(usage.ru_maxrss)
"""


def peak_memory(command: list[str], environment: dict[str, str]) -> float:
    """The peak memory (RSS, MB) of ``command`` run once."""
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *command],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout.split()[-1]) / 1024


def search_environment(folder: Path | None = None) -> dict[str, str]:
    """The environment of the ``fastnotebook`` processes measured: the fake
    model, and the on-disk database in ``folder`` if given."""
    environment = {
        **os.environ,
        "FASTNOTEBOOK_EMBEDDING_PROVIDER": "fastnotebook-fake",
        "FASTNOTEBOOK_EMBEDDING_CONFIG": json.dumps({"dimension": DIM}),
        "FASTNOTEBOOK_FULL_TEXT_SEARCH": "0",
    }
    if folder is not None:
        environment["FASTNOTEBOOK_DATA_DIR"] = str(folder)
    environment.pop("SURREAL_URL", None)
    return environment


def timed_runs(commands: list[list[str]], environment: dict[str, str]) -> tuple[float, float]:
    """p50 and p95 of running each of ``commands`` as a new process."""
    times = []
    for command in commands:
        t = time.perf_counter()
        subprocess.run(command, env=environment, capture_output=True, check=True)
        times.append(time.perf_counter() - t)
    return percentiles(times)


def cli_case(folder: Path, runs: int, ann: bool) -> dict[str, tuple[float, float, float]]:
    """p50 and p95 of ``fastnotebook search`` (a new process each), and the
    peak memory (RSS, MB) of one more such process."""
    environment = search_environment()
    result = {}
    for flag in ("--exact", "--ann") if ann else ("--exact",):

        def command(query: str, flag: str = flag) -> list[str]:
            return [
                sys.executable,
                "-m",
                "fastnotebook",
                "search",
                query,
                flag,
                "--data-dir",
                str(folder),
            ]

        p50, p95 = timed_runs([command(f"query {i}") for i in range(runs)], environment)
        peak = peak_memory(command("query"), environment)
        result[flag] = (p50, p95, peak)
        print(
            f"fastnotebook search {flag}: p50 {p50:.0f} ms, "
            f"p95 {p95:.0f} ms (a new process each), peak memory {peak:.0f} MB",
            flush=True,
        )
    return result


def served_case(folder: Path, runs: int) -> tuple[float, float]:
    """p50 and p95 of ``fastnotebook search`` while ``fastnotebook serve``
    holds the database (the command asks it: app.database.holder)."""
    import compileall
    import socket
    import urllib.request

    import fastnotebook

    # The bytecode an installed wheel has (pip compiles at install): a
    # checkout run with PYTHONDONTWRITEBYTECODE would compile the modules of
    # the search's route again in every process, a large part of its time.
    compileall.compile_dir(Path(fastnotebook.__file__).parent, quiet=1)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    environment = search_environment(folder)
    server = subprocess.Popen(
        [sys.executable, "-m", "fastnotebook", "serve", "--port", str(port)],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 600  # the open replays the store's log
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("fastnotebook serve did not start") from None
                time.sleep(0.2)
        command = [sys.executable, "-m", "fastnotebook", "search", "--exact"]
        subprocess.run(
            [*command, "warm", "--data-dir", str(folder)],
            env=environment,
            check=True,
            capture_output=True,
        )  # the server's first search loads its cache
        queries = [[*command, f"query {i}", "--data-dir", str(folder)] for i in range(runs)]
        p50, p95 = timed_runs(queries, environment)
    finally:
        server.terminate()
        server.wait(timeout=60)
    print(f"fastnotebook search, serve holding the database: p50 {p50:.0f} ms, p95 {p95:.0f} ms")
    return p50, p95


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
    from fastnotebook.app.database.schema import ensure_vector_indexes, hnsw_nearest
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
                    f"SELECT id FROM source_embedding WHERE {hnsw_nearest(10)};",
                    {"query": probe.tolist()},
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
    databases: list[dict[str, Any]],
    real: dict[str, Any] | None,
) -> str:
    lines = [
        "| case | p50 | p95 | notes |",
        "|---|---:|---:|---|",
    ]
    for m in matrix:
        lines.append(
            f"| core exact, {m['rows']:,} rows (synthetic) | {m['p50']:.1f} ms | {m['p95']:.1f} ms "
            f"| without the sketch {m['plain_p50']:.1f} / {m['plain_p95']:.1f} ms; peak memory "
            f"(RSS) {m['peak_mb']:,.0f} MB; norms and sketch once {m['norms_s']:.2f} s |"
        )
    for d in databases:
        n = f"{d['rows']:,}"
        lines.append(
            f"| `vector_search` exact, {n} rows (synthetic) | {d['exact'][0]:.1f} ms "
            f"| {d['exact'][1]:.1f} ms | cache current; token query, core, hits read back |"
        )
        if d["ann"]:
            lines.append(
                f"| `vector_search` ann (HNSW built after load), {n} rows | "
                f"{d['ann'][0]:.1f} ms | {d['ann'][1]:.1f} ms | |"
            )
        for flag, (p50, p95, peak) in d.get("cli", {}).items():
            lines.append(
                f"| `fastnotebook search {flag}`, {n} rows | {p50:.0f} ms "
                f"| {p95:.0f} ms | a new process: interpreter, fake model, database open; "
                f"peak memory (RSS) {peak:,.0f} MB |"
            )
        if d.get("served"):
            p50, p95 = d["served"]
            lines.append(
                f"| `fastnotebook search --exact`, {n} rows, `serve` holding the database "
                f"| {p50:.0f} ms | {p95:.0f} ms | a new process that asks the server before "
                "it imports the command line (interpreter, a few modules, HTTP on 127.0.0.1) |"
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
    for d in databases:
        costs = [f"cache file load {d['file_s'] * 1000:.0f} ms"]
        if d["load_s"] is not None:
            costs.insert(0, f"load {d['load_s']:.1f} s without an index")
            costs.insert(1, f"reading the snapshot from the database {d['read_s']:.1f} s")
        if d["index_s"] is not None:
            costs.insert(1, f"HNSW built after the load {d['index_s']:.1f} s")
        text += f"\n\nCosts around the search, {d['rows']:,} rows: " + "; ".join(costs) + "."
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


def commit() -> str:
    found = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    return found.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matrix-rows", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument(
        "--db-rows",
        type=int,
        nargs="*",
        default=[10_000, 100_000, 1_000_000],
        help="none: skip parts 2, 3",
    )
    parser.add_argument(
        "--db-folder",
        type=Path,
        help="keep the databases here (rows<N>/) and reuse them in the next run",
    )
    parser.add_argument(
        "--hnsw-max-rows",
        type=int,
        default=10_000,
        help="build the HNSW index (and measure ann) only up to this many rows",
    )
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
    started = time.perf_counter()
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}", flush=True)
    matrix = run_matrix_cases(args.matrix_rows, args.queries)
    databases: list[dict[str, Any]] = []
    real = None
    with tempfile.TemporaryDirectory(prefix="fn-search-bench-") as tmp:
        for rows in args.db_rows:
            folder = (args.db_folder or Path(tmp)) / f"rows{rows}"
            database = asyncio.run(database_case(rows, args.queries, folder, args.hnsw_max_rows))
            if args.cli_runs:
                database["cli"] = cli_case(folder, args.cli_runs, database["ann"] is not None)
                database["served"] = served_case(folder, args.cli_runs)
            databases.append(database)
        if args.real_chunks and (CORPUS / "md").is_dir():
            real = asyncio.run(real_case(args.real_chunks, min(args.queries, 50), Path(tmp)))
    text = report(matrix, databases, real)
    text += (
        f"\n\n(`python benches/bench_search.py {' '.join(sys.argv[1:])}` at commit {commit()}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end, "
        f"{time.perf_counter() - started:.0f} s.)"
    )
    print(text)
    for target in (args.docs, args.scaling):
        if target is not None:
            write_between_markers(target, text)


if __name__ == "__main__":
    main()
