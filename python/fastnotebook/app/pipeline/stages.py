"""``fastnotebook embed``: (re-)embed sources, insights and notes in bulk.

What is stored is what Open Notebook's ``embed_source``, ``embed_insight``
and ``embed_note`` commands store: a source's text is chunked (by its file
type) and every chunk becomes a ``source_embedding`` row (order, text,
vector); an insight's or a note's content is chunked as Markdown and its
chunks' vectors mean-pooled into the record's ``embedding`` (a text of one
chunk keeps that chunk's vector, as the original does). Unlike the original,
which queues one job per record, the records flow through four stages that
run at the same time, joined by bounded queues:

    read (database) -> chunk + hash (Rust, all cores) -> model -> write (database)

- read: the texts of the due records (see ``state.plan``), a few MB per query;
- chunk: in a worker thread, with the GIL released; texts are hashed there too;
- model: batches of ``EMBEDDING_BATCH_SIZE`` chunks, across record
  boundaries, up to ``concurrency`` of them in flight (default: 1 for a
  model in this process, 8 for an HTTP provider); retries, rate limits,
  batch splitting and timeouts are ``fastnotebook.app.pipeline.provider``'s;
  batches finish in any order, a record is finished when its last chunk
  has its vector;
- write: finished records in groups of up to ``write_rows`` rows, one
  transaction per group (``fastnotebook.app.pipeline.writer``), up to
  ``write_lanes`` of them at once (sources only, on a store that allows it);
  the next group is gathered and encoded while transactions run.

The queues hold at most a few read batches, so memory does not grow with the
corpus. A batch that fails after its retries is retried record by record,
once, so that one record the provider refuses is reported alone and the
others go on. Setting ``stop`` (Ctrl-C) finishes the model calls in flight,
writes every finished record and returns; records still half-embedded are
left due for the next run. A large record (more chunks than
``stage_batches`` model batches) keeps each of its finished batches in
``embedding_staging`` (``fastnotebook.app.pipeline.staging``), so that the
next run, after a Ctrl-C or a kill, sends only its remaining chunks to the
model; the record itself is still written whole, in one transaction, and the
progress line shows its batches.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum, auto
from functools import partial
from typing import Any, Literal, NamedTuple

import numpy as np
from loguru import logger

from fastnotebook import embedding
from fastnotebook.ai import model_manager
from fastnotebook.app.database import (
    Database,
    RecordID,
    get_database,
    query_isolated,
)
from fastnotebook.app.pipeline import faults, staging
from fastnotebook.app.pipeline.lanes import Lanes
from fastnotebook.app.pipeline.progress import Progress, StageClock
from fastnotebook.app.pipeline.provider import (
    Failure,
    Provider,
    ProviderStats,
    RetryPolicy,
    Stopped,
    Vector,
)
from fastnotebook.app.pipeline.state import (
    KINDS,
    TEXT_FIELD,
    Item,
    Kind,
    Plan,
    Rebuild,
    Settings,
    bump_epochs,
    chunking_fingerprint,
    epochs,
    plan,
)
from fastnotebook.app.pipeline.vector_index import RunVectors, mixed_dimensions
from fastnotebook.app.pipeline.writer import LANES, Finished, Prepared, execute, lanes_for, prepare
from fastnotebook.chunking import ContentType, chunk_texts, get_chunking_config
from fastnotebook.errors import DatabaseOperationError

__all__ = ["EmbedOptions", "EmbedReport", "KindCounts", "embed", "model_settings"]


@dataclass(frozen=True)
class EmbedOptions:
    """What to embed and how much work to keep in flight."""

    kinds: tuple[Kind, ...] = KINDS
    rebuild: Rebuild | None = None
    batch_size: int = 0  # chunks per model call; 0: EMBEDDING_BATCH_SIZE
    read_bytes: int = 4_000_000  # text per database read
    read_items: int = 256  # records per database read
    # Rows per write transaction: the engine's cost per transaction makes
    # 512 about 15% faster than 128 for the same rows (docs/performance.md).
    write_rows: int = 512
    # Transactions of sources' chunks in flight at once, up to one per lane
    # of the writer (``writer.LANES``) where the store allows it
    # (``writer.lanes_for``): the engine then inserts on two cores.
    write_lanes: int = 2
    queue_batches: int = 2  # read batches waiting between stages
    finished_items: int = 32  # records waiting to be written
    concurrency: int = 0  # model calls in flight; 0: 1 in-process, 8 over HTTP
    timeout: float | None = None  # seconds per HTTP request; None: the provider's
    retries: int = 8  # retries of a throttled, 5xx, dropped or malformed call
    backoff: float = 1.0  # first wait before such a retry without Retry-After
    # Define the HNSW indexes (for `search --ann`) at the end of the run,
    # over every stored vector. Off by default: they cost about 10 ms a vector
    # to build, many times the write itself, and the core's exact search
    # answers without them (docs/SCALING.md). Indexes that exist stay, and
    # every write keeps them current.
    vector_index: bool = False
    # A record of more chunks than this many model batches keeps each
    # finished batch (``staging``), so that a run killed or interrupted in
    # the middle of it resumes where it stopped; 0: never.
    stage_batches: int = 4
    # ... once the record has been in the model this many seconds: what a
    # kill can lose of a record is bounded by this, and a fast model (which
    # finishes such a record sooner) pays no staging write; 0: from its first
    # batch.
    stage_after: float = 5.0

    def __post_init__(self) -> None:
        if self.stage_batches < 0:
            raise ValueError(f"stage_batches must be 0 or more, got {self.stage_batches}")
        if not 0 <= self.stage_after < float("inf"):
            raise ValueError(f"stage_after must be 0 or more seconds, got {self.stage_after}")
        if not 1 <= self.write_lanes <= len(LANES):
            raise ValueError(f"write_lanes must be 1 to {len(LANES)}, got {self.write_lanes}")
        if self.write_rows < 1:
            raise ValueError(f"write_rows must be 1 or more, got {self.write_rows}")
        if self.concurrency < 0:
            raise ValueError(f"concurrency must be 0 (the default) or more, got {self.concurrency}")
        if self.timeout is not None and not 0 < self.timeout <= 3600:
            raise ValueError(f"timeout must be between 0 and 3600 seconds, got {self.timeout}")
        if self.retries < 0 or self.backoff < 0:
            raise ValueError("retries and backoff must be 0 or more")


@dataclass
class KindCounts:
    due: int = 0
    embedded: int = 0
    unchanged: int = 0
    failed: int = 0
    chunks: int = 0
    bytes: int = 0


@dataclass
class EmbedReport:
    model: str
    chunking: str
    counts: dict[str, KindCounts] = field(default_factory=dict)
    failures: list[tuple[str, str]] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    clock: StageClock = field(default_factory=StageClock)
    provider: ProviderStats = field(default_factory=ProviderStats)

    @property
    def embedded(self) -> int:
        return sum(c.embedded for c in self.counts.values())

    @property
    def failed(self) -> int:
        return sum(c.failed for c in self.counts.values())


@dataclass
class _Loaded:
    item: Item
    text: str
    path: str | None


@dataclass(eq=False)  # compared and hashed by identity
class _Work:
    """A record between the chunker and the writer."""

    item: Item
    content_hash: str
    chunks: list[str]
    vectors: list[Vector | None]
    pending: int
    path: str | None = None
    failed: bool = False
    queued: bool = False  # handed to the writer
    key: str | None = None  # its staging key, when its finished batches are kept
    staged: bool = False  # it has (or may get) staging rows, which its write clears
    staging: int = 0  # staging writes in flight
    begun: float | None = None  # when its first batch went to the model (monotonic)
    unkept: list[int] = field(default_factory=list)  # finished chunks not staged yet


_CONNECTION_OPTION = re.compile(
    r"key|token|secret|password|url|host|timeout|retr|organization|project|batch|concurren"
)


async def model_settings() -> Settings:
    """The settings that the configured model and chunking give a record's
    vectors; ``ValueError`` when no model is configured."""
    config = model_manager.embedding_config()
    model = await model_manager.get_embedding_model()
    if config is None or model is None:
        raise ValueError(
            "No embedding model configured. Please configure one in the Models section."
        )
    name = getattr(model, "model_name", None) or config.model_name or model.get_model_name()
    # Provider options that change vectors (dimensions, max_tokens) are part of
    # the model's identity; credentials and connection options are not.
    options = {
        k: v for k, v in sorted(config.config.items()) if not _CONNECTION_OPTION.search(k.lower())
    }
    model_id = f"{config.provider}/{name}"
    if options:
        model_id += " " + json.dumps(options, sort_keys=True, default=str)
    return Settings(model_id, chunking_fingerprint(get_chunking_config()))


def _file_name(work: _Work) -> str:
    return work.path.rsplit("/", 1)[-1] if work.path else str(work.item.id)


def _consecutive(indices: list[int]) -> Iterator[tuple[int, int]]:
    """Runs of consecutive ``indices`` (in order) as ``(start, end)``."""
    start = prev = indices[0]
    for i in indices[1:]:
        if i != prev + 1:
            yield start, prev + 1
            start = i
        prev = i
    yield start, prev + 1


def groups(
    items: Sequence[Item], max_bytes: int, max_items: int | None = None
) -> Iterator[list[Item]]:
    """Consecutive runs of ``items`` of at most ``max_bytes`` (a larger item
    alone) and at most ``max_items`` items."""
    group: list[Item] = []
    size = 0
    for item in items:
        if group and (
            size + item.size > max_bytes or (max_items is not None and len(group) >= max_items)
        ):
            yield group
            group, size = [], 0
        group.append(item)
        size += item.size
    if group:
        yield group


def _prepare(kind: Kind, batch: list[_Loaded]) -> tuple[list[_Work], float, float]:
    """Hash and chunk a read batch (in a worker thread). Returns the work and
    the seconds spent hashing and chunking."""
    start = time.perf_counter()
    hashes = [hashlib.sha256(b.text.encode("utf-8")).hexdigest() for b in batch]
    hashed = time.perf_counter()
    if kind == "source":
        chunked = chunk_texts([b.text for b in batch], file_paths=[b.path for b in batch])
    else:
        # As Open Notebook's generate_embedding: stripped, split as Markdown.
        texts = [b.text.strip() for b in batch]
        chunked = chunk_texts(texts, content_types=[ContentType.MARKDOWN] * len(texts))
    done = time.perf_counter()
    work = [
        _Work(b.item, h, chunks, [None] * len(chunks), len(chunks), b.path)
        for b, h, chunks in zip(batch, hashes, chunked, strict=True)
    ]
    return work, hashed - start, done - hashed


class _Run:
    """One ``embed`` run: the four stages and what they share."""

    def __init__(
        self,
        db: Database,
        options: EmbedOptions,
        settings: Settings,
        epochs: dict[str, int],
        report: EmbedReport,
        progress: Progress | None,
        stop: asyncio.Event,
        provider: Provider,
    ) -> None:
        self.db, self.options, self.settings, self.epochs = db, options, settings, epochs
        self.report, self.clock, self.progress, self.stop = report, report.clock, progress, stop
        self.provider = provider
        self.batch_size = options.batch_size or embedding.EMBEDDING_BATCH_SIZE
        refuse = None if set(options.kinds) == set(KINDS) else mixed_dimensions
        self.vectors = RunVectors(db, refuse, options.vector_index)
        self.leftover: set[str] = set()  # records with staging rows from earlier runs

    # --- stages -------------------------------------------------------------

    async def read(self, due: Plan, out: asyncio.Queue[tuple[Kind, list[_Loaded]] | None]) -> None:
        for kind in self.options.kinds:
            field_name = TEXT_FIELD[kind]
            path = ", asset.file_path AS path" if kind == "source" else ""
            for group in groups(
                due.due.get(kind, []), self.options.read_bytes, self.options.read_items
            ):
                if self.stop.is_set():
                    break
                with self.clock.measure("load"):
                    rows, unread = await query_isolated(
                        self.db,
                        f"SELECT id, {field_name} AS text{path} FROM $ids;",
                        [item.id for item in group],
                    )
                sizes = {str(item.id): item.size for item in group}
                for record, reason in unread:
                    await self._fail_unread(kind, record, sizes.get(str(record), 0), reason)
                found = {str(row["id"]): row for row in rows}
                batch = [
                    _Loaded(item, row.get("text") or "", row.get("path"))
                    for item in group
                    if (row := found.get(str(item.id))) is not None
                ]
                if batch:
                    await out.put((kind, batch))
        await out.put(None)

    async def chunk(
        self,
        inp: asyncio.Queue[tuple[Kind, list[_Loaded]] | None],
        out: asyncio.Queue[list[_Work] | None],
    ) -> None:
        while (batch := await inp.get()) is not None:
            kind, loaded = batch
            work, hashing, chunking = await asyncio.to_thread(_prepare, kind, loaded)
            self.clock.add("hash", hashing)
            self.clock.add("chunk", chunking)
            await self._restore(work)
            if self.progress:
                self.progress.add_chunks(sum(len(w.chunks) for w in work))
            await out.put(work)
        await out.put(None)

    async def embed(
        self, inp: asyncio.Queue[list[_Work] | None], out: asyncio.Queue[Finished | None]
    ) -> None:
        waiting: list[tuple[_Work, int]] = []
        # One task per batch, at most ``concurrency`` at once; the provider's
        # window may hold them to fewer requests when the provider throttles.
        slots = asyncio.Semaphore(self.provider.window.maximum)
        try:
            await self._dispatch_all(inp, out, waiting, slots)
        except BaseExceptionGroup as errors:
            raise errors.exceptions[0] from None
        await out.put(None)

    async def _dispatch_all(
        self,
        inp: asyncio.Queue[list[_Work] | None],
        out: asyncio.Queue[Finished | None],
        waiting: list[tuple[_Work, int]],
        slots: asyncio.Semaphore,
    ) -> None:
        async with asyncio.TaskGroup() as group:

            async def dispatch() -> None:
                size = self.provider.batch_size(self.batch_size)
                entries = waiting[:size]
                del waiting[:size]
                await slots.acquire()
                task = group.create_task(self._embed_batch(entries, out))
                task.add_done_callback(lambda _: slots.release())

            while not self.stop.is_set():
                # Read on only when a batch can go: what waits here stays
                # a batch or two, whatever the concurrency.
                async with slots:
                    pass
                if (batch := await inp.get()) is None:
                    break
                for work in batch:
                    if work.pending:
                        waiting.extend((work, i) for i, v in enumerate(work.vectors) if v is None)
                    else:  # no text, or every batch restored from staging
                        work.queued = True
                        await out.put(self._finish(work))
                while (
                    len(waiting) >= self.provider.batch_size(self.batch_size)
                    and not self.stop.is_set()
                ):
                    await dispatch()
            while waiting and not self.stop.is_set():
                await dispatch()

    async def write(self, inp: asyncio.Queue[Finished | None]) -> None:
        # A transaction per group; while they run, the next group is
        # gathered and encoded, so that the database does not wait on Python
        # between two transactions. Groups of sources run up to one per lane
        # at once (``Lanes``); a group of insights or notes runs alone. A
        # transaction that fails ends the wait at once.
        lanes = Lanes(min(self.options.write_lanes, await lanes_for(self.db)))
        carry: Finished | None = None
        ended = False
        try:
            while not ended:
                first, carry = carry, None
                if first is None:
                    first = await _first(lanes, inp)
                if first is None:
                    break
                alone = first.kind != "source"
                group, rows = [first], first.rows
                while rows < self.options.write_rows:
                    lanes.raise_failed()  # a failed transaction ends the run now
                    # Wait for more only while no transaction could start.
                    nxt = await _next_while(lanes.tasks if lanes.full(alone) else set(), inp)
                    if nxt is _Next.NOTHING_YET:
                        break
                    if nxt is None:
                        ended = True
                        break
                    if nxt.kind != first.kind:
                        carry = nxt
                        break
                    group.append(nxt)
                    rows += nxt.rows
                prepared = self._prepare(group)
                await lanes.start(partial(self._write, group, prepared), alone)
            await lanes.drain()
        except BaseException as error:
            # Transactions under way are cancelled only with the run (a
            # second Ctrl-C); otherwise they finish before the error goes on.
            await lanes.settle(error)
            raise

    # --- helpers ------------------------------------------------------------

    async def _embed_batch(
        self, entries: list[tuple[_Work, int]], out: asyncio.Queue[Finished | None]
    ) -> None:
        entries = [(w, i) for w, i in entries if not w.failed]
        if not entries or self.stop.is_set():
            return
        now = time.monotonic()
        for work, _ in entries:
            if work.begun is None:
                work.begun = now
        try:
            results = await self.provider.embed([w.chunks[i] for w, i in entries])
        except Stopped:
            return  # its records stay due for the next run
        failures = [r for r in results if isinstance(r, Failure)]
        if failures and len(failures) == len(entries) and failures[0].isolate:
            await self._isolate(entries, failures[0].message)
        else:
            self._store(entries, results)
        if self.progress:
            # Each chunk is credited with its share of its record's bytes:
            # the bar and its ETA move within a large record.
            done = [(w, i) for w, i in entries if w.vectors[i] is not None]
            self.progress.advance(
                chunks=len(done), nbytes=sum(w.item.size / len(w.chunks) for w, _ in done)
            )
            for work in dict.fromkeys(w for w, _ in done if w.key is not None):
                self._show_file(work)
        faults.checkpoint("embedded")
        await self._stage(entries)
        for work in dict.fromkeys(w for w, _ in entries):
            # Batches finish in any order: the one that completes a record
            # (and whose staging write, if any, came last) queues it, once.
            if work.pending == 0 and not work.failed and not work.queued and not work.staging:
                work.queued = True
                await out.put(self._finish(work))

    async def _restore(self, batch: list[_Work]) -> None:
        """Mark the large records of a chunked batch for staging, and give
        them the vectors of the batches an earlier run finished."""
        threshold = self.options.stage_batches * self.batch_size
        large: list[_Work] = []
        for work in batch:
            leftover = bool(self.leftover) and str(work.item.id) in self.leftover
            if self.options.stage_batches and len(work.chunks) > threshold:
                epoch = self.epochs[work.item.kind]
                work.key = staging.staging_key(work.content_hash, self.settings, epoch)
                if leftover:
                    large.append(work)
            # Rows of an earlier text or settings go when the record is written.
            work.staged = work.key is not None or leftover
        if not large:
            return
        try:
            with self.clock.measure("load"):
                wanted = [(w.item.id, w.key or "", len(w.chunks)) for w in large]
                restored = await staging.load(self.db, wanted)
        except DatabaseOperationError as e:
            logger.debug("Cannot read the staged batches: {}", e)
            return
        for work in large:
            count = 0
            for i, vector in restored.get(str(work.item.id), {}).items():
                if work.vectors[i] is None:
                    work.vectors[i] = vector
                    work.pending -= 1
                    count += 1
            if count and self.progress:
                nbytes = work.item.size * count / len(work.chunks)
                self.progress.advance(chunks=count, nbytes=nbytes)
                self._show_file(work)

    async def _stage(self, entries: list[tuple[_Work, int]]) -> None:
        """Keep the vectors that the staged records still unfinished have
        gained since their last staging write, once such a record has been
        in the model ``stage_after`` seconds, or once the run is stopping
        (Ctrl-C): one write per run of consecutive chunks."""
        for work, i in entries:
            if work.key is not None and not work.failed and work.vectors[i] is not None:
                work.unkept.append(i)
        now = time.monotonic()
        runs: dict[_Work, list[int]] = {}
        for work in dict.fromkeys(w for w, _ in entries):
            begun = work.begun if work.begun is not None else now
            due = now - begun >= self.options.stage_after or self.stop.is_set()
            if work.key is not None and work.pending and not work.failed and work.unkept and due:
                runs[work] = sorted(work.unkept)
                work.unkept = []
        for work in runs:
            work.staging += 1
        try:
            for work, indices in runs.items():
                for start, end in _consecutive(indices):
                    try:
                        with self.clock.measure("write"):
                            vectors = [v for v in work.vectors[start:end] if v is not None]
                            await staging.save_batch(
                                self.db, work.item.id, work.key or "", start, vectors
                            )
                    except (DatabaseOperationError, ValueError) as e:
                        # The record is written whole anyway; the next
                        # staging write of it tries these chunks again.
                        logger.debug("Cannot stage a batch of {}: {}", work.item.id, e)
                        work.unkept += range(start, end)
                        continue
                    faults.checkpoint("staged")
        finally:
            for work in runs:
                work.staging -= 1

    def _show_file(self, work: _Work) -> None:
        """The progress of a large record, in model batches."""
        if not self.progress:
            return
        total = -(-len(work.chunks) // self.batch_size)
        done = total if not work.pending else (len(work.chunks) - work.pending) // self.batch_size
        self.progress.show_file(_file_name(work), done, total)

    def _store(self, entries: list[tuple[_Work, int]], results: list[Vector | Failure]) -> None:
        """Vectors into their records; a record with a failed chunk fails."""
        for (work, i), result in zip(entries, results, strict=True):
            if isinstance(result, Failure):
                self._fail(work, result.message)
            elif work.vectors[i] is None:
                work.vectors[i] = result
                work.pending -= 1

    async def _isolate(self, entries: list[tuple[_Work, int]], error: str) -> None:
        """After a failed batch: each record's chunks alone, one attempt each."""
        by_work: dict[_Work, list[tuple[_Work, int]]] = {}
        for entry in entries:
            by_work.setdefault(entry[0], []).append(entry)
        if len(by_work) == 1:
            self._fail(entries[0][0], error)
            return
        for part in by_work.values():
            results = await self.provider.embed([w.chunks[i] for w, i in part], once=True)
            failed = next((r for r in results if isinstance(r, Failure)), None)
            if failed is not None:
                self._fail(part[0][0], f"{error} (alone: {failed.message})")
            else:
                self._store(part, results)

    def _fail(self, work: _Work, message: str) -> None:
        if work.failed:
            return  # another batch of its chunks failed first
        work.failed = True
        if work.key is not None and self.progress:
            self.progress.show_file(_file_name(work), 0, 0)  # off the bar
        left = sum(1 for v in work.vectors if v is None)
        share = work.item.size * left / len(work.chunks) if work.chunks else work.item.size
        self._failed(work.item.kind, work.item.id, work.path, message, share)

    def _failed(
        self, kind: str, record: object, path: str | None, message: str, nbytes: float = 0
    ) -> None:
        """Count and report one record that failed (it alone); ``nbytes``:
        its bytes the progress bar has not counted yet."""
        self.report.counts[kind].failed += 1
        what = f"{record} ({path})" if path else str(record)
        self.report.failures.append((what, message))
        logger.debug("Failed to embed {}: {}", what, message)
        if self.progress:
            self.progress.advance(items=1, failed=1, nbytes=nbytes)

    async def _fail_unread(self, kind: Kind, record: RecordID, size: int, reason: str) -> None:
        """A record whose text the database cannot send back (a string with
        NUL, stored by an older version or another program)."""
        path = None
        if kind == "source":
            try:
                path = await self.db.query(
                    "RETURN (SELECT VALUE asset.file_path FROM ONLY $id);", {"id": record}
                )
            except DatabaseOperationError:
                path = None
        fix = "ingest its file again" if path else "correct its text"
        self._failed(
            kind,
            record,
            path if isinstance(path, str) else None,
            f"cannot be read from the database ({reason}); {fix}, or remove it "
            f"(`fastnotebook sources remove {record}`)",
            size,
        )

    def _finish(self, work: _Work) -> Finished:
        vectors: list[Vector] = [v for v in work.vectors if v is not None]
        if work.item.kind != "source" and len(vectors) > 1:
            with self.clock.measure("pool"):
                vectors = [embedding.mean_pool(np.asarray(vectors, dtype=np.float64))]
        return Finished(
            work.item.id,
            work.item.kind,
            work.content_hash,
            work.item.size,
            work.chunks,
            vectors,
            self.epochs[work.item.kind],
            work.path,
            work.staged,
        )

    def _prepare(self, group: list[Finished]) -> Prepared | DatabaseOperationError:
        try:
            return prepare(group, self.settings)
        except DatabaseOperationError as e:
            return e

    async def _write(
        self,
        group: list[Finished],
        prepared: Prepared | DatabaseOperationError | None = None,
        lane: int = 0,
    ) -> None:
        if prepared is None:
            prepared = self._prepare(group)
        width = next((len(item.vectors[0]) for item in group if item.vectors), None)
        if width is not None:
            with self.clock.measure("index"):
                await self.vectors.before_write(width)
        faults.checkpoint("writing")
        error = prepared if isinstance(prepared, DatabaseOperationError) else None
        if isinstance(prepared, Prepared):
            try:
                with self.clock.measure("write"):
                    await execute(self.db, prepared, lane)
            except DatabaseOperationError as e:
                error = e
        if error is not None:
            if len(group) == 1:
                self._fail_finished(group[0], str(error))
                return
            # Record by record, so that a bad one fails alone.
            for item in group:
                await self._write([item], lane=lane)
            return
        faults.checkpoint("written")
        for item in group:
            counts = self.report.counts[item.kind]
            counts.embedded += 1
            counts.chunks += len(item.chunks)
            counts.bytes += item.size
        if self.progress:
            # Chunks and bytes were counted as the model returned them; a
            # record without chunks (empty text) is done here.
            self.progress.advance(
                items=len(group), nbytes=sum(i.size for i in group if not i.chunks)
            )

    def _fail_finished(self, item: Finished, message: str) -> None:
        self._failed(item.kind, item.id, item.path, message)

    async def finalize(self) -> None:
        """Record the dimension, or define the indexes, where that had to wait
        for the last vector of the previous model or for the end of the run."""
        with self.clock.measure("index"):
            await self.vectors.finish()


class _Next(Enum):
    NOTHING_YET = auto()


async def _next_while(
    running: set[asyncio.Task[None]], queue: asyncio.Queue[Finished | None]
) -> Finished | Literal[_Next.NOTHING_YET] | None:
    """The queue's next item if it has one, or if one comes before any of
    ``running`` ends; otherwise ``_Next.NOTHING_YET``."""
    try:
        return queue.get_nowait()
    except asyncio.QueueEmpty:
        if not running or any(task.done() for task in running):
            return _Next.NOTHING_YET
    getter = asyncio.ensure_future(queue.get())
    try:
        await asyncio.wait({getter, *running}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        getter.cancel()
        raise
    if not getter.done():
        # Cancelling a get leaves its item, if one came meanwhile, in the queue.
        getter.cancel()
        await asyncio.wait({getter})
    return _Next.NOTHING_YET if getter.cancelled() else getter.result()


async def _first(lanes: Lanes, queue: asyncio.Queue[Finished | None]) -> Finished | None:
    """The queue's next item, reaping the transactions that end meanwhile
    (the first error among them is raised at once)."""
    while True:
        lanes.raise_failed()
        got = await _next_while(lanes.tasks, queue)
        if got is not _Next.NOTHING_YET:
            return got
        if not lanes.tasks:
            return await queue.get()
        await lanes.reap()


def _cancel_all_on_error(tasks: list[asyncio.Task[None]]) -> None:
    def callback(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            for other in tasks:
                other.cancel()

    for task in tasks:
        task.add_done_callback(callback)


class RunStart(NamedTuple):
    """What an embed run starts from, local or on Ray (``start_run``)."""

    db: Database
    settings: Settings
    report: EmbedReport
    epochs: dict[str, int]
    due: Plan
    progress: Progress
    started: float  # time.perf_counter()


async def start_run(
    options: EmbedOptions, db: Database | None, progress: bool, stream: Any
) -> RunStart:
    """The preamble of every embed run, local (``embed``) or on Ray
    (``ray_engine.embed_ray``): the database (the current one unless given),
    the model's settings, the epochs (bumped first for a rebuild), the plan
    of the due records with the report's counts, and the progress bar."""
    started = time.perf_counter()
    db = db or await get_database()
    settings = await model_settings()
    report = EmbedReport(settings.model, settings.chunking)
    with report.clock.measure("plan"):
        if options.rebuild is not None:
            await bump_epochs(db, options.kinds)
        current = await epochs(db)
        due = await plan(db, options.kinds, settings, options.rebuild)
    for kind in options.kinds:
        report.counts[kind] = KindCounts(due=len(due.due[kind]), unchanged=due.unchanged[kind])
    bar = Progress("embed", "records", due.items, due.bytes, stream, enabled=progress)
    return RunStart(db, settings, report, current, due, bar, started)


async def embed(
    options: EmbedOptions | None = None,
    db: Database | None = None,
    stop: asyncio.Event | None = None,
    progress: bool = False,
    stream: Any = None,
) -> EmbedReport:
    """Embed every due record of ``options.kinds`` (see the module docstring);
    with ``progress``, draw a live status line on ``stream`` (stderr)."""
    options = options or EmbedOptions()
    stop = stop or asyncio.Event()
    db, settings, report, current, due, bar, started = await start_run(
        options, db, progress, stream
    )
    provider = await Provider.open(
        options.concurrency,
        options.timeout,
        RetryPolicy(options.retries, options.backoff),
        stop,
        on_busy=lambda seconds: report.clock.add("model", seconds),
    )
    run = _Run(db, options, settings, current, report, bar, stop, provider)
    if options.stage_batches:
        with report.clock.measure("plan"):
            run.leftover = await staging.records(db)
    depth = options.queue_batches
    loaded: asyncio.Queue[tuple[Kind, list[_Loaded]] | None] = asyncio.Queue(depth)
    chunked: asyncio.Queue[list[_Work] | None] = asyncio.Queue(depth)
    finished: asyncio.Queue[Finished | None] = asyncio.Queue(options.finished_items)
    tasks = [
        asyncio.create_task(run.read(due, loaded)),
        asyncio.create_task(run.chunk(loaded, chunked)),
        asyncio.create_task(run.embed(chunked, finished)),
        asyncio.create_task(run.write(finished)),
    ]
    _cancel_all_on_error(tasks)
    try:
        await asyncio.gather(*tasks[2:], return_exceptions=True)
        for task in tasks[:2]:
            task.cancel()  # after a stop they may be waiting on a full queue
        results = await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        bar.close()
        await provider.close()
        report.provider = provider.stats
    # A stage's own error, not the cancellations it caused in the others.
    errors = [
        r
        for r in results
        if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError)
    ]
    if errors:
        raise errors[0]
    await run.finalize()
    report.interrupted = stop.is_set() and report.embedded + report.failed < due.items
    report.seconds = time.perf_counter() - started
    return report
