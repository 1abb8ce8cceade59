"""The Ray job over the database: the due records (planned on the driver by
``state.plan``) are read in windows, chunked and embedded on the cluster, and
written by the driver with the local pipeline's transactions
(``writer.prepare``, ``writer.execute``), as many in flight as the local
run keeps (``Lanes``), so the stored rows equal a local run's."""

from __future__ import annotations

import time
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from fastnotebook import embedding
from fastnotebook.app.database import Database, query_isolated
from fastnotebook.app.pipeline.lanes import Lanes
from fastnotebook.app.pipeline.progress import Progress
from fastnotebook.app.pipeline.provider import Vector
from fastnotebook.app.pipeline.ray_engine.cluster import (
    RayOptions,
    connect,
    drain_records,
    input_schema,
    ray_pipeline,
    require_ray,
)
from fastnotebook.app.pipeline.stages import (
    EmbedOptions,
    EmbedReport,
    groups,
    start_run,
)
from fastnotebook.app.pipeline.state import (
    KINDS,
    TEXT_FIELD,
    Item,
    Kind,
    Settings,
)
from fastnotebook.app.pipeline.vector_index import RunVectors, mixed_dimensions
from fastnotebook.app.pipeline.writer import Finished, execute, lanes_for, prepare
from fastnotebook.errors import DatabaseOperationError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["embed_ray"]


def _vectors(kind: str, rows: list[dict[str, Any]]) -> list[Vector]:
    vectors: list[Vector] = [r["vector"] for r in rows if r["order"] >= 0]
    if kind != "source" and len(vectors) > 1:
        vectors = [embedding.mean_pool(np.asarray(vectors, dtype=np.float64))]
    return vectors


class _DatabaseSink:
    """The driver's writer: groups of whole records of one kind, one
    transaction each, up to one per lane in flight (``Lanes``; a group of
    insights or notes alone), vector indexes as ``embed``."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        epochs: dict[str, int],
        report: EmbedReport,
        write_rows: int,
        kinds: tuple[Kind, ...],
        progress: Progress,
        vector_index: bool,
        lanes: int,
    ) -> None:
        self.db, self.settings, self.epochs, self.report = db, settings, epochs, report
        self.lanes = Lanes(lanes)
        self.write_rows, self.kinds, self.progress = write_rows, kinds, progress
        self.waiting: dict[str, list[Finished]] = {}
        refuse = None if set(kinds) == set(KINDS) else mixed_dimensions
        self.vectors = RunVectors(db, refuse, vector_index)

    async def add(self, item: Item, rows: list[dict[str, Any]]) -> None:
        errors = [r["error"] for r in rows if r["error"]]
        if errors:
            self._failed(item.kind, str(item.id), rows[0]["path"], errors[0], item.size)
            return
        finished = Finished(
            item.id,
            item.kind,
            rows[0]["content_hash"],
            item.size,
            [r["text"] for r in rows if r["order"] >= 0],
            _vectors(item.kind, rows),
            self.epochs[item.kind],
            rows[0]["path"],
        )
        group = self.waiting.setdefault(item.kind, [])
        group.append(finished)
        if sum(f.rows for f in group) >= self.write_rows:
            await self.flush(item.kind)

    async def flush(self, kind: str | None = None) -> None:
        """Start the transactions of the waiting groups (of ``kind``)."""
        for k in [kind] if kind else list(self.waiting):
            group = self.waiting.pop(k, [])
            if group:
                await self.lanes.start(partial(self._write, group), alone=k != "source")

    def _failed(self, kind: str, what: str, path: str | None, message: str, size: int) -> None:
        self.report.counts[kind].failed += 1
        self.report.failures.append((f"{what} ({path})" if path else what, message))
        self.progress.advance(items=1, failed=1, nbytes=size)

    async def _write(self, group: list[Finished], lane: int) -> None:
        width = next((len(item.vectors[0]) for item in group if item.vectors), None)
        if width is not None:
            with self.report.clock.measure("index"):
                await self.vectors.before_write(width)
        try:
            with self.report.clock.measure("write"):
                await execute(self.db, prepare(group, self.settings), lane)
        except DatabaseOperationError as e:
            if len(group) == 1:
                item = group[0]
                self._failed(item.kind, str(item.id), item.path, str(e), item.size)
                return
            # Record by record, so that a bad one fails alone.
            for item in group:
                await self._write([item], lane)
            return
        for item in group:
            counts = self.report.counts[item.kind]
            counts.embedded += 1
            counts.chunks += len(item.chunks)
            counts.bytes += item.size
        self.progress.advance(
            items=len(group),
            chunks=sum(len(i.chunks) for i in group),
            nbytes=sum(i.size for i in group),
        )

    async def finalize(self) -> None:
        """Wait for the transactions in flight; then record the dimension, or
        define the indexes, where that had to wait for the last vector of the
        previous model or for the end of the run."""
        await self.lanes.drain()
        await self.vectors.finish()


def _blocks(
    rows: list[dict[str, Any]], sizes: dict[str, int], max_bytes: int
) -> Iterator[list[dict[str, Any]]]:
    """``rows`` in runs of about ``max_bytes`` of text: Ray hands a model
    actor a block at a time, so small blocks spread a window over the pool."""
    block: list[dict[str, Any]] = []
    size = 0
    for row in rows:
        if block and size + sizes[str(row["id"])] > max_bytes:
            yield block
            block, size = [], 0
        block.append(row)
        size += sizes[str(row["id"])]
    if block:
        yield block


async def _read_window(
    db: Database, kind: Kind, window: list[Item], ray_options: RayOptions, sink: _DatabaseSink
) -> list[pa.Table]:
    """The texts of ``window`` as Arrow tables, one per database read."""
    import pyarrow as pa

    tables = []
    path = ", asset.file_path AS path" if kind == "source" else ""
    for group in groups(window, ray_options.read_bytes, ray_options.read_items):
        with sink.report.clock.measure("load"):
            rows, unread = await query_isolated(
                db, f"SELECT id, {TEXT_FIELD[kind]} AS text{path} FROM $ids;", [i.id for i in group]
            )
        sizes = {str(i.id): i.size for i in group}
        for record, reason in unread:
            sink._failed(
                kind,
                str(record),
                None,
                f"cannot be read from the database ({reason}); correct or remove it",
                sizes.get(str(record), 0),
            )
        found = {str(row["id"]): row for row in rows}
        present = [found[str(i.id)] for i in group if str(i.id) in found]
        for block in _blocks(present, sizes, ray_options.block_bytes):
            tables.append(
                pa.table(
                    {
                        "record": [str(r["id"]) for r in block],
                        "kind": [kind] * len(block),
                        "text": [r.get("text") or "" for r in block],
                        "path": [r.get("path") for r in block],
                        "size": [sizes[str(r["id"])] for r in block],
                        "source_hash": [None] * len(block),
                        "error": [None] * len(block),
                    },
                    schema=input_schema(),
                )
            )
    return tables


async def embed_ray(
    options: EmbedOptions | None = None,
    ray_options: RayOptions | None = None,
    db: Database | None = None,
    progress: bool = False,
    stream: Any = None,
) -> EmbedReport:
    """``embed`` (``fastnotebook.app.pipeline.embed``) on Ray: the same due
    records, the same rows and state written (see the module). Records that
    are up to date are left out before Ray is even connected."""
    options = options or EmbedOptions()
    ray_options = ray_options or RayOptions()
    require_ray()
    db, settings, report, current, due, bar, started = await start_run(
        options, db, progress, stream
    )
    sink = _DatabaseSink(
        db,
        settings,
        current,
        report,
        ray_options.write_rows,
        options.kinds,
        bar,
        options.vector_index,
        min(options.write_lanes, await lanes_for(db)),
    )
    try:
        if due.items:
            import ray.data

            connect(ray_options.address)
            # One Ray job per window, whatever the kinds in it: the model
            # actors start once per window.
            items = {str(i.id): i for kind in options.kinds for i in due.due.get(kind, [])}
            for window in groups(list(items.values()), ray_options.window_bytes):
                tables = []
                for kind in options.kinds:
                    part = [i for i in window if i.kind == kind]
                    if part:
                        tables += await _read_window(db, kind, part, ray_options, sink)
                if not tables:
                    continue
                ds = ray_pipeline(ray.data.from_arrow(tables), ray_options, files=False)
                await drain_records(ds, partial(_add_to_sink, sink, items))
                await sink.flush()
        await sink.finalize()
    except BaseException as error:
        # Transactions under way finish (or, with the run, are cancelled)
        # before the error goes on.
        await sink.lanes.settle(error)
        raise
    finally:
        bar.close()
    report.seconds = time.perf_counter() - started
    return report


async def _add_to_sink(
    sink: _DatabaseSink, items: dict[str, Item], rows: list[dict[str, Any]]
) -> None:
    await sink.add(items[rows[0]["record"]], rows)
