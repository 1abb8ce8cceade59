"""Benchmark: how ``embed --engine ray`` scales with model actors, and where it stops.

    python benches/bench_ray_scaling.py [--actors 1 2 4 8 16] [--latency 0.25]
        [--seconds 3] [--docs docs/SCALING.md]

Two parts, both on this machine:

1. Stage costs: chunking (MB/s, ``chunk_texts`` on 1500-character
   chunks of generated Markdown), the default offline model
   (``fastnotebook-onnx``: ms per chunk, as configured, on this machine's
   cores) and the database writer (wall ms per ``source_embedding`` row,
   written by the local writer in groups of ``EmbedOptions.write_rows``
   rows, as many in flight as ``embed`` keeps, on a fresh on-disk database,
   with and without the HNSW vector index).
2. A simulation: the Ray pipeline of ``fastnotebook.app.pipeline.ray_engine``
   (Arrow blocks -> chunk tasks -> model actor pool -> the driver) with the
   fake model (``fastnotebook-fake``) sleeping ``--latency`` seconds per
   call of 50 chunks, over K actors; each run has K x (50 / latency) x
   ``--seconds`` chunks, so every run lasts about as long. The rate is taken
   between the 10th and the 90th percentile of the records' completion times
   (the actors' start-up is not the pipeline's rate). Ray gets K + 2 logical
   CPUs: the fake model sleeps, so K actors need no K cores. One last run
   writes into the database (the driver's sink, ``embed``'s defaults: no
   vector index, two transactions in flight) with 4 actors, to show the
   writer's bound: the wall time some transaction was in flight per row.

With ``--docs``, the tables replace the text between the markers
``<!-- ray-scaling:start -->`` and ``<!-- ray-scaling:end -->`` in that file.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

START, END = "<!-- ray-scaling:start -->", "<!-- ray-scaling:end -->"
BATCH = 50


def paragraph(n: int, i: int) -> str:
    return f"Paragraph {i} of record {n}. " + " ".join(
        f"Sentence {j} says something about item {n}.{i}." for j in range(30)
    )


def record_text(n: int, chunks: int) -> str:
    # Each paragraph is a bit over 1,000 characters: about one chunk of 1500 each.
    return "\n\n".join(paragraph(n, i) for i in range(chunks))


def chunking_rate() -> float:
    from fastnotebook.chunking import ContentType, chunk_texts

    texts = [record_text(n, 40) for n in range(100)]
    size = sum(len(t.encode()) for t in texts)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        chunk_texts(texts, content_types=[ContentType.MARKDOWN] * len(texts))
        best = min(best, time.perf_counter() - start)
    return size / best / 1e6


def model_ms_per_chunk() -> float | None:
    from fastnotebook.ai import local_models
    from fastnotebook.chunking import ContentType, chunk_texts

    try:
        model = local_models.LocalOnnxEmbeddingModel()
        chunks = chunk_texts([record_text(0, 40)], content_types=[ContentType.MARKDOWN])[0][:32]
        model.embed(chunks[:2])  # load
        start = time.perf_counter()
        model.embed(chunks)
        return (time.perf_counter() - start) * 1000 / len(chunks)
    except Exception as e:  # the model's packages are an extra
        print(f"default model not measured: {e}")
        return None


async def writer_ms_per_row(rows: int, hnsw: bool) -> float:
    """Wall milliseconds per ``source_embedding`` row of the local writer:
    groups of ``EmbedOptions.write_rows`` rows, as many transactions in
    flight as ``embed`` keeps on that store (``Lanes``, ``lanes_for``)."""
    import numpy as np

    from fastnotebook.app.database import (
        DatabaseSettings,
        RecordID,
        ensure_vector_indexes,
        open_database,
    )
    from fastnotebook.app.pipeline import EmbedOptions
    from fastnotebook.app.pipeline.lanes import Lanes
    from fastnotebook.app.pipeline.state import Settings
    from fastnotebook.app.pipeline.writer import Finished, execute, lanes_for, prepare

    with tempfile.TemporaryDirectory() as folder:
        db = await open_database(
            DatabaseSettings(f"surrealkv://{folder}/db", full_text_search=False)
        )
        try:
            if hnsw:
                await ensure_vector_indexes(384, db)
            rng = np.random.default_rng(0)
            per = 10
            items = []
            for n in range(rows // per):
                rid = RecordID("source", f"s{n}")
                await db.query("CREATE $id SET title = 't', full_text = 'x';", {"id": rid})
                vectors = rng.standard_normal((per, 384))
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                items.append(
                    Finished(rid, "source", "h", 1, ["chunk text"] * per, vectors.tolist(), 0)
                )
            settings = Settings("bench", "chars 1500/225")
            options = EmbedOptions()
            lanes = Lanes(min(options.write_lanes, await lanes_for(db)))
            size = max(1, options.write_rows // per)
            start = time.perf_counter()
            for i in range(0, len(items), size):
                prepared = prepare(items[i : i + size], settings)
                await lanes.start(partial(execute, db, prepared))
            await lanes.drain()
            return (time.perf_counter() - start) * 1000 / (len(items) * per)
        finally:
            await db.close()


def simulate(actors: int, latency: float, seconds: float) -> dict[str, float]:
    """Chunks per second through the Ray pipeline with the driver collecting."""
    import pyarrow as pa
    import ray.data

    from fastnotebook.app.pipeline.ray_engine import cluster

    class TimedActor(cluster.ModelActor):
        """The engine's model actor, stamping when each batch was done."""

        def __call__(self, table: pa.Table) -> pa.Table:
            out = super().__call__(table)
            return out.append_column("done_at", pa.array([time.time()] * out.num_rows))

    chunks = max(BATCH * 4, int(actors * BATCH / latency * seconds))
    per_record = 10
    records = chunks // per_record
    texts = [record_text(n, per_record) for n in range(records)]
    table = pa.table(
        {
            "record": [f"r{n}" for n in range(records)],
            "kind": ["source"] * records,
            "text": texts,
            "path": [f"r{n}.md" for n in range(records)],
            "size": [len(t) for t in texts],
            "source_hash": [None] * records,
            "error": [None] * records,
        },
        schema=cluster.input_schema(),
    )
    blocks = [table.slice(i, 10) for i in range(0, records, 10)]
    options = cluster.RayOptions(concurrency=actors, num_cpus=1, task_cpus=1)
    ds = cluster.ray_pipeline(ray.data.from_arrow(blocks), options, files=False, actor=TimedActor)
    stamps: list[float] = []

    async def done(rows: list[dict[str, Any]]) -> None:
        stamps.extend(r["done_at"] for r in rows)

    start = time.perf_counter()
    asyncio.run(cluster.drain_records(ds, done))
    wall = time.perf_counter() - start
    # Chunks per second between the 10th and the 90th percentile of the
    # model's completion times: the pipeline's rate once the actors are up.
    stamps.sort()
    got = len(stamps)
    lo, hi = stamps[got // 10], stamps[(got * 9) // 10]
    rate = (got * 8 // 10) / (hi - lo) if hi > lo else got / wall
    return {"chunks": got, "wall": wall, "rate": rate}


async def database_run(actors: int, chunks: int) -> dict[str, float]:
    """The driver writing into a fresh on-disk database (``embed``'s
    defaults: no vector index, two transactions in flight)."""
    from bench_pipeline import busy_rate
    from fastnotebook.app.database import DatabaseSettings, open_database, set_database
    from fastnotebook.app.domain import Source
    from fastnotebook.app.pipeline import ray_engine
    from fastnotebook.app.pipeline.ray_engine import database as sink

    spans: list[tuple[int, float, float]] = []
    original = sink.execute

    async def timed(db: Any, prepared: Any, lane: int = 0) -> None:
        start = time.perf_counter()
        await original(db, prepared, lane)
        spans.append((len(prepared.ids), start, time.perf_counter()))

    sink.execute = timed  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as folder:
        db = await open_database(
            DatabaseSettings(f"surrealkv://{folder}/db", full_text_search=False)
        )
        previous = set_database(db)
        try:
            for n in range(chunks // 10):
                await Source(title=f"r{n}", full_text=record_text(n, 10)).save()
            report = await ray_engine.embed_ray(None, ray_engine.RayOptions(concurrency=actors), db)
            rows = report.counts["source"].chunks
            # Per row of the time some transaction was in flight.
            write_ms = 1000 / busy_rate(spans)
            return {"chunks": rows, "wall": report.seconds, "write_ms": write_ms}
        finally:
            sink.execute = original  # type: ignore[assignment]
            set_database(previous)
            await db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--latency", type=float, default=0.25, help="fake model s per call")
    parser.add_argument("--seconds", type=float, default=3.0, help="model time per run")
    parser.add_argument("--db-chunks", type=int, default=10000, help="database run's chunks")
    parser.add_argument("--docs", help="file whose ray-scaling markers get the tables")
    args = parser.parse_args()

    import ray

    from fastnotebook.ai import model_manager
    from fastnotebook.app.pipeline import fake_model

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    cores = os.cpu_count() or 1
    chunk_mbs = chunking_rate()
    model_ms = model_ms_per_chunk()
    plain_ms = asyncio.run(writer_ms_per_row(1000, hnsw=False))
    hnsw_ms = asyncio.run(writer_ms_per_row(1000, hnsw=True))
    print(
        f"chunking {chunk_mbs:.0f} MB/s; model {model_ms} ms/chunk; database {plain_ms:.2f} "
        f"ms/row, {hnsw_ms:.2f} with HNSW"
    )

    model_manager.configure_embedding_model(
        fake_model.FAKE_PROVIDER, config={"dimension": 384, "delay": args.latency}
    )
    ray.init(num_cpus=max(args.actors) + 2, include_dashboard=False, log_to_driver=False)
    per_actor = BATCH / args.latency
    sims = []
    try:
        for k in args.actors:
            result = simulate(k, args.latency, args.seconds)
            sims.append((k, result))
            print(
                f"K={k}: {result['rate']:.0f} chunks/s ({result['chunks']} in "
                f"{result['wall']:.1f} s), ideal {k * per_actor:.0f}"
            )
        db_actors = min(4, max(args.actors))
        db = asyncio.run(database_run(db_actors, args.db_chunks))
        print(f"database sink, K={db_actors}: {db}")
    finally:
        ray.shutdown()

    lines = [
        f"Measured on this machine ({cores} cores) by `python benches/bench_ray_scaling.py` "
        f"(`make bench`).",
        "",
        "| stage | cost |",
        "|---|---|",
        f"| chunking (Markdown, 1500 characters, one process) | {chunk_mbs:.0f} MB/s |",
        "| default model (all-MiniLM-L6-v2 int8, ONNX, this machine's cores) | "
        + (f"{model_ms:.1f} ms per chunk |" if model_ms is not None else "not installed |"),
        f"| database writer, no vector index | {plain_ms:.2f} ms per row |",
        f"| database writer, HNSW index live | {hnsw_ms:.2f} ms per row |",
        "",
        f"Simulation: fake model of {args.latency * 1000:.0f} ms per call of {BATCH} chunks "
        f"({per_actor:.0f} chunks/s per actor), driver collecting (no database):",
        "",
        "| actors K | chunks | wall s | chunks/s (steady) | ideal K x 50 / latency | efficiency |",
        "|---|---|---|---|---|---|",
    ]
    for k, r in sims:
        lines.append(
            f"| {k} | {r['chunks']:,} | {r['wall']:.1f} | {r['rate']:,.0f} | "
            f"{k * per_actor:,.0f} | {r['rate'] / (k * per_actor):.0%} |"
        )
    lines += [
        "",
        f"Database sink (the driver writing; no vector index, two transactions in flight), "
        f"K = {db_actors} ({db_actors * per_actor:,.0f} chunks/s of model): the writer was "
        f"busy {db['write_ms']:.2f} ms per row, a bound of {1000 / db['write_ms']:,.0f} "
        f"rows/s whatever K; {db['chunks']:,} chunks in {db['wall']:.1f} s, the actors' "
        "start-up included.",
    ]
    table = "\n".join(lines)
    print(table)
    if args.docs:
        path = Path(args.docs)
        text = path.read_text()
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        path.write_text(f"{head}{START}\n{table}\n{END}{tail}")


if __name__ == "__main__":
    main()
