"""Benchmark: HNSW vector index live during a bulk load, or built after it.

    python benches/bench_index_build.py [--rows 3000 6000] [--dimension 384] [--chunk 128]

For each row count N, two runs, each on its own fresh on-disk embedded
database (SurrealKV, as ``fastnotebook embed`` uses) with fastnotebook's
schema and no full-text indexes:

(a) live: ``ensure_vector_indexes`` first (the schema's real definition,
    ``HNSW DIMENSION d DIST COSINE`` on ``source_embedding`` and the other
    vector tables), then N ``source_embedding`` rows written in transactions
    of ``--chunk`` rows, as ``fastnotebook.app.pipeline.writer`` writes them
    (``INSERT INTO source_embedding $rows RETURN NONE``);
(b) deferred: the same writes with no vector index, then the same
    ``DEFINE INDEX`` statement once the load is done.

The vectors are random (seeded), normalised, ``--dimension`` wide, and made
before the clock starts; each source owns 10 rows. Prints the load and build
seconds of each and the ratio (a) / (b) of the totals. The README's "Write
path" paragraph has the figures (3,000 and 6,000 rows, about 6 minutes on a
loaded 2-core machine).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path


async def run(rows: int, dimension: int, chunk: int, deferred: bool) -> tuple[float, float]:
    from fastnotebook.app.database import DatabaseSettings, RecordID, open_database
    from fastnotebook.app.database.schema import ensure_vector_indexes

    rng = random.Random(rows)
    with tempfile.TemporaryDirectory(prefix="fn-index-bench-") as tmp:
        settings = DatabaseSettings(
            DatabaseSettings.embedded_url(Path(tmp)), full_text_search=False
        )
        db = await open_database(settings)
        try:
            sources = [RecordID("source", f"s{i}") for i in range((rows + 9) // 10)]
            await db.query_all(
                "FOR $s IN $ids { CREATE $s SET title = 't' RETURN NONE; };", {"ids": sources}
            )
            batches = []
            for start in range(0, rows, chunk):
                batch = []
                for i in range(start, min(rows, start + chunk)):
                    v = [rng.gauss(0.0, 1.0) for _ in range(dimension)]
                    norm = sum(x * x for x in v) ** 0.5
                    batch.append(
                        {
                            "source": sources[i // 10],
                            "order": i % 10,
                            "content": f"chunk {i}",
                            "embedding": [x / norm for x in v],
                        }
                    )
                batches.append(batch)
            if not deferred:
                await ensure_vector_indexes(dimension, db)
            started = time.perf_counter()
            for batch in batches:
                await db.query_all(
                    "BEGIN TRANSACTION; INSERT INTO source_embedding $rows RETURN NONE; "
                    "COMMIT TRANSACTION;",
                    {"rows": batch},
                )
            load = time.perf_counter() - started
            build = 0.0
            if deferred:
                started = time.perf_counter()
                await ensure_vector_indexes(dimension, db)
                build = time.perf_counter() - started
            count = await db.query("RETURN count(SELECT id FROM source_embedding);")
            assert count == rows, count
            return load, build
        finally:
            await db.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[3000, 6000])
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--chunk", type=int, default=128, help="rows per write transaction")
    args = parser.parse_args()
    from loguru import logger

    logger.remove()
    print(f"{'rows':>6} {'mode':>9} {'load s':>8} {'build s':>8} {'total s':>8} {'ms/row':>7}")
    for rows in args.rows:
        totals = {}
        for deferred in (False, True):
            load, build = await run(rows, args.dimension, args.chunk, deferred)
            mode = "deferred" if deferred else "live"
            totals[mode] = load + build
            print(
                f"{rows:>6} {mode:>9} {load:>8.2f} {build:>8.2f} {load + build:>8.2f} "
                f"{1000 * (load + build) / rows:>7.2f}",
                flush=True,
            )
        print(f"{rows:>6} live/deferred: {totals['live'] / totals['deferred']:.2f}x", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
