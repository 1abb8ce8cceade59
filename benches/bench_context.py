"""ContextBuilder.build() on a notebook of 1,000 sources x 5 insights:
fastnotebook (token counts batched, in Rust) against the same builder
counting with Python tiktoken item by item, as the original does; same run,
same embedded database.

Also reported: the share of build() spent in the database layer (queries,
including the SDK's pure-Python encoding and decoding) and in token counting.
Two configurations: the notebook default (every source short, with its
insights as items) and every source in "full content".

    python benches/bench_context.py [--sources 1000] [--insights 5] [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loguru import logger

from fastnotebook import context_builder
from fastnotebook.app.database import (
    Database,
    DatabaseSettings,
    RecordID,
    open_database,
    repo_insert,
    repo_relate_many,
    set_database,
)
from fastnotebook.bench import reference
from fastnotebook.context_builder import ContextBuilder, ContextConfig

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = Path(
    os.environ.get("FASTNOTEBOOK_CORPUS", HERE.parent.parent / "shared" / "corpus")
)


def corpus_text(corpus: Path) -> str:
    """The shared corpus's Markdown and text (or this repository's docs)."""
    files = [p for kind in ("md", "txt") for p in sorted((corpus / kind).glob("*"))]
    if not files:
        files = [p for p in HERE.parent.rglob("*.md") if ".venv" not in p.parts]
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in files)


async def seed(sources: int, insights: int, notes: int, text: str) -> str:
    """A notebook of ``sources`` sources (about 3,000 characters of text
    each) with ``insights`` insights each (about 500 characters), and notes;
    written in bulk. Returns the notebook id."""
    rng = random.Random(7)

    def piece(size: int) -> str:
        start = rng.randrange(0, max(1, len(text) - size))
        return text[start : start + size]

    notebook = RecordID("notebook", "bench")
    await repo_insert("notebook", [{"id": notebook, "name": "Benchmark"}], return_rows=False)
    source_rows = [
        {"id": RecordID("source", f"s{i}"), "title": piece(60), "full_text": piece(3000)}
        for i in range(sources)
    ]
    for start in range(0, sources, 250):
        await repo_insert("source", source_rows[start : start + 250], return_rows=False)
    insight_rows = [
        {
            "source": RecordID("source", f"s{i}"),
            "insight_type": f"type{j}",
            "content": piece(500),
        }
        for i in range(sources)
        for j in range(insights)
    ]
    for start in range(0, len(insight_rows), 1000):
        await repo_insert("source_insight", insight_rows[start : start + 1000], return_rows=False)
    note_rows = [
        {"id": RecordID("note", f"n{i}"), "title": piece(40), "content": piece(1500)}
        for i in range(notes)
    ]
    await repo_insert("note", note_rows, return_rows=False)
    await repo_relate_many("reference", [(r["id"], notebook) for r in source_rows])
    await repo_relate_many("artifact", [(r["id"], notebook) for r in note_rows])
    return str(notebook)


@dataclass
class Timings:
    total: list[float] = field(default_factory=list)
    database: list[float] = field(default_factory=list)
    counting: list[float] = field(default_factory=list)


class Meter:
    """Adds up the wall time spent in the database layer and in counting."""

    def __init__(self, db: Database) -> None:
        self.database = 0.0
        self.counting = 0.0
        query_all = db.query_all

        async def timed_query_all(sql: str, params: dict[str, Any] | None = None) -> list[Any]:
            start = time.perf_counter()
            try:
                return await query_all(sql, params)
            finally:
                self.database += time.perf_counter() - start

        db.query_all = timed_query_all  # type: ignore[method-assign]

    def counter(self, count: Callable[[Sequence[str]], list[int]]) -> Callable[..., list[int]]:
        def timed(texts: Sequence[str]) -> list[int]:
            start = time.perf_counter()
            try:
                return count(texts)
            finally:
                self.counting += time.perf_counter() - start

        return timed


def tiktoken_counts() -> Callable[[Sequence[str]], list[int]]:
    """The original's counting: Python tiktoken, o200k_base, one item at a time."""
    count = reference.token_counter("o200k_base")
    return lambda texts: [count(t) for t in texts]


async def measure(
    build: Callable[[], Awaitable[dict[str, Any]]],
    meter: Meter,
    count: Callable[[Sequence[str]], list[int]],
    timings: Timings,
) -> dict[str, Any]:
    context_builder.token_counts = meter.counter(count)  # type: ignore[assignment]
    meter.database = meter.counting = 0.0
    start = time.perf_counter()
    result = await build()
    timings.total.append(time.perf_counter() - start)
    timings.database.append(meter.database)
    timings.counting.append(meter.counting)
    return result


def row(name: str, t: Timings) -> str:
    total = statistics.median(t.total)
    db = statistics.median(t.database)
    counting = statistics.median(t.counting)
    return (
        f"  {name:<34} {total * 1e3:9.1f} ms   database {db * 1e3:8.1f} ms ({db / total:4.0%})"
        f"   counting {counting * 1e3:8.1f} ms ({counting / total:4.0%})"
    )


async def run(args: argparse.Namespace) -> None:
    logger.remove()  # the builder's log lines are not what is measured
    text = corpus_text(args.corpus)
    with tempfile.TemporaryDirectory() as tmp:
        settings = DatabaseSettings(
            DatabaseSettings.embedded_url(Path(tmp)), full_text_search=False
        )
        db = await open_database(settings)
        set_database(db)
        try:
            start = time.perf_counter()
            notebook_id = await seed(args.sources, args.insights, args.notes, text)
            print(
                f"seeded {args.sources} sources x {args.insights} insights + {args.notes} notes "
                f"in {time.perf_counter() - start:.1f} s ({settings.url})"
            )
            meter = Meter(db)
            rust_counts = context_builder.token_counts
            python_counts = tiktoken_counts()
            python_counts(["warm up"])  # load the vocabulary outside the timings
            full = {f"source:s{i}": "full content" for i in range(args.sources)}
            scenarios: dict[str, Callable[[], Awaitable[dict[str, Any]]]] = {
                "default (short + insights)": ContextBuilder(notebook_id=notebook_id).build,
                "every source in full content": ContextBuilder(
                    notebook_id=notebook_id, context_config=ContextConfig(sources=full)
                ).build,
            }
            for name, build in scenarios.items():
                fast, slow = Timings(), Timings()
                await measure(build, meter, rust_counts, Timings())  # warm up
                for _ in range(args.repeats):
                    ours = await measure(build, meter, rust_counts, fast)
                    theirs = await measure(build, meter, python_counts, slow)
                    assert ours == theirs, "the two counts disagree"
                items, tokens = ours["total_items"], ours["total_tokens"]
                print(f"\n{name}: {items:,} items, {tokens:,} tokens, median of {args.repeats}")
                print(row("fastnotebook (Rust, batched)", fast))
                print(row("same builder, Python tiktoken", slow))
                saved = statistics.median(slow.total) - statistics.median(fast.total)
                counting = statistics.median(slow.counting) / statistics.median(fast.counting)
                print(f"  build() {saved * 1e3:+.1f} ms faster; counting {counting:.0f}x faster")
        finally:
            context_builder.token_counts = rust_counts
            set_database(None)
            await db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=int, default=1000)
    parser.add_argument("--insights", type=int, default=5)
    parser.add_argument("--notes", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
