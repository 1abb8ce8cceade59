"""``fastnotebook embed --engine ray``: the bulk embedding job as a Ray Data
pipeline, on a local Ray or a cluster (``pip install 'fastnotebook[ray]'``).

The job is the local pipeline's (``fastnotebook.app.pipeline.stages``), with
its stages spread over a Ray cluster::

    read -> hash + chunk (Rust, map_batches tasks) -> model (actor pool) -> sink

- read: the due records of the database (planned by ``state.plan`` on the
  driver, so unchanged records never reach Ray), or the files of a folder or
  any pyarrow filesystem URI (``s3://``, ``gs://``, ``file://``...), read by
  Ray tasks; a file whose bytes hash as in the Parquet output already is
  skipped on the driver, before anything is scheduled;
- hash + chunk: ``map_batches`` tasks on Arrow batches, the same chunking
  (configuration included) as the local pipeline; the Rust core chunks with
  the GIL released;
- model: ``concurrency`` actors, each building the configured embedding model
  once (``model_manager``'s configuration, passed from the driver), with
  ``num_gpus`` each; a killed actor is restarted and its batch retried by Ray
  (``max_restarts``, ``max_task_retries``);
- sink: (a) the database, written by the driver alone with the local
  pipeline's transactions (``writer.write_group``: a record's chunks, vectors
  and ``embedding_state`` row in one transaction), so a later local ``embed``
  sees the records as done and the stored rows equal a local run's; or
  (b) Parquet files (one row per chunk: text, vector, hashes, model) on any
  pyarrow filesystem, also written by the driver.

Records are collected on the driver until every chunk is back, so a record
is written whole or not at all, whatever Ray retried. The database source is
processed in windows of ``window_bytes`` of text, which bounds the driver's
memory. Ray is imported only here, and only when the job runs.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fastnotebook import embedding
from fastnotebook.app.ai import model_manager
from fastnotebook.app.database import (
    Database,
    drop_vector_indexes,
    ensure_vector_indexes,
    get_database,
    query_isolated,
    vector_dimension,
)
from fastnotebook.app.pipeline.documents import split_front_matter
from fastnotebook.app.pipeline.progress import Progress
from fastnotebook.app.pipeline.stages import (
    EmbedOptions,
    EmbedReport,
    KindCounts,
    groups,
    model_settings,
    other_dimensions,
)
from fastnotebook.app.pipeline.state import (
    KINDS,
    TEXT_FIELD,
    Item,
    Kind,
    Settings,
    bump_epochs,
    epochs,
    plan,
)
from fastnotebook.app.pipeline.writer import Finished, write_group
from fastnotebook.chunking import (
    ChunkingConfig,
    ContentType,
    chunk_texts,
    detect_content_type_from_extension,
    get_chunking_config,
    set_chunking_config,
)
from fastnotebook.errors import ConfigurationError, DatabaseOperationError

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.fs as pafs

__all__ = [
    "FAULT_ENV",
    "INSTALL_HINT",
    "ParquetReport",
    "RayOptions",
    "embed_files_to_parquet",
    "embed_ray",
    "require_ray",
]

INSTALL_HINT = "pip install 'fastnotebook[ray]'"
# Test hook: a file path; the first model actor to finish a batch while the
# file does not exist creates it and kills its own process (SIGKILL), once.
FAULT_ENV = "FASTNOTEBOOK_RAY_FAULT_FILE"


def require_ray() -> Any:
    """The ``ray`` module; ``ConfigurationError`` naming the extra when missing."""
    try:
        import pyarrow  # noqa: F401
        import ray
        import ray.data
    except ImportError as e:
        raise ConfigurationError(
            f"the Ray engine needs Ray Data and pyarrow ({e.name} is missing): {INSTALL_HINT}"
        ) from None
    return ray


@dataclass(frozen=True)
class RayOptions:
    """Where and how wide the Ray job runs.

    ``address``: None or ``"local"`` starts a Ray in this process (unless one
    is already connected), ``"auto"`` joins the cluster this machine belongs
    to, ``"ray://host:10001"`` a remote cluster through Ray Client, and
    ``"host:6379"`` a cluster's head directly."""

    address: str | None = None
    concurrency: int = 1  # model actors
    num_gpus: float = 0.0  # per model actor
    num_cpus: float = 1.0  # per model actor
    task_cpus: float = 1.0  # per read/chunk task
    batch_size: int = 0  # chunks per model call; 0: EMBEDDING_BATCH_SIZE
    window_bytes: int = 256_000_000  # database text per Ray dataset
    read_bytes: int = 4_000_000  # text per database read (one Ray block)
    read_items: int = 256  # records per database read
    block_bytes: int = 256_000  # text per Ray block: the unit a model actor takes at once
    write_rows: int = 128  # rows per write transaction
    max_restarts: int = 4  # times a dead model actor is restarted
    max_task_retries: int = 4  # times a batch is retried on a restarted actor


def connect(address: str | None) -> None:
    """Connect to Ray (see ``RayOptions.address``) unless already connected."""
    ray = require_ray()
    if ray.is_initialized():
        return
    if address in (None, "", "local"):
        ray.init(include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)


# --- the stages that run on the cluster ---------------------------------------

_CHUNK_SCHEMA_FIELDS: list[tuple[str, str]] = [
    ("record", "string"),
    ("kind", "string"),
    ("path", "string"),
    ("size", "int64"),
    ("content_hash", "string"),
    ("source_hash", "string"),
    ("chunks", "int64"),
    ("order", "int64"),
    ("text", "string"),
    ("error", "string"),
]


# The rows the read stage hands to chunking: one a record.
_INPUT_SCHEMA_FIELDS = [
    ("record", "string"),
    ("kind", "string"),
    ("text", "string"),
    ("path", "string"),
    ("size", "int64"),
    ("source_hash", "string"),
    ("error", "string"),
]


def input_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([(name, pa.type_for_alias(alias)) for name, alias in _INPUT_SCHEMA_FIELDS])


def _chunk_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([(name, pa.type_for_alias(alias)) for name, alias in _CHUNK_SCHEMA_FIELDS])


def chunk_records(table: pa.Table, chunking: ChunkingConfig) -> pa.Table:
    """Records (record, kind, text, path, size, source_hash, error) to one row
    per chunk; a record without chunks (empty text) or with an error keeps one
    row, ``order`` -1. Hashing and chunking as the local pipeline's."""
    import pyarrow as pa

    set_chunking_config(chunking)
    rows = table.to_pylist()
    out: dict[str, list[Any]] = {name: [] for name, _ in _CHUNK_SCHEMA_FIELDS}

    def add(row: dict[str, Any], content_hash: str, count: int, order: int, text: str) -> None:
        out["record"].append(row["record"])
        out["kind"].append(row["kind"])
        out["path"].append(row["path"])
        out["size"].append(row["size"])
        out["content_hash"].append(content_hash)
        out["source_hash"].append(row["source_hash"])
        out["chunks"].append(count)
        out["order"].append(order)
        out["text"].append(text)
        out["error"].append(row["error"])

    good = [r for r in rows if r["error"] is None]
    for row in rows:
        if row["error"] is not None:
            add(row, "", 0, -1, "")
    sources = [r for r in good if r["kind"] == "source"]
    pooled = [r for r in good if r["kind"] != "source"]
    chunked: list[tuple[dict[str, Any], list[str]]] = []
    if sources:
        parts = chunk_texts([r["text"] for r in sources], file_paths=[r["path"] for r in sources])
        chunked.extend(zip(sources, parts, strict=True))
    if pooled:
        # As Open Notebook's generate_embedding: stripped, split as Markdown.
        texts = [r["text"].strip() for r in pooled]
        parts = chunk_texts(texts, content_types=[ContentType.MARKDOWN] * len(texts))
        chunked.extend(zip(pooled, parts, strict=True))
    for row, chunks in chunked:
        content_hash = hashlib.sha256(row["text"].encode("utf-8")).hexdigest()
        if not chunks:
            add(row, content_hash, 0, -1, "")
        for i, chunk in enumerate(chunks):
            add(row, content_hash, len(chunks), i, chunk)
    return pa.table(out, schema=_chunk_schema())


def decode_files(table: pa.Table) -> pa.Table:
    """Files read by Ray (``bytes``, ``path``) to records, as ``ingest`` reads
    them: binary files are errors, text is decoded, Markdown front matter is
    left out of the text."""
    import pyarrow as pa

    from fastnotebook.app.textcheck import BinaryFileError, text_file

    out: dict[str, list[Any]] = {
        k: [] for k in ("record", "kind", "text", "path", "size", "source_hash", "error")
    }
    for raw, path in zip(
        table.column("bytes").to_pylist(), table.column("path").to_pylist(), strict=True
    ):
        text, error = "", None
        try:
            text = text_file(raw).text
        except BinaryFileError as e:
            error = str(e)
        else:
            if detect_content_type_from_extension(path) is ContentType.MARKDOWN:
                text = split_front_matter(text)[1]
        out["record"].append(path)
        out["kind"].append("source")
        out["text"].append(text)
        out["path"].append(path)
        out["size"].append(len(raw))
        out["source_hash"].append(hashlib.sha256(raw).hexdigest())
        out["error"].append(error)
    return pa.table(
        out,
        schema=input_schema(),
    )


class ModelActor:
    """One embedding model, built once per actor from the driver's
    configuration; embeds the chunk rows of a batch (adds ``vector``)."""

    def __init__(self, provider: str, model_name: str, config: dict[str, Any]) -> None:
        # Registering the in-house providers (the offline and fake models).
        from fastnotebook.app.ai import local_models  # noqa: F401
        from fastnotebook.app.pipeline import fake_model  # noqa: F401

        model_manager.configure_embedding_model(provider, model_name, config)
        self.loop = asyncio.new_event_loop()

    def _embed(self, texts: list[str]) -> list[list[float]]:
        vectors = self.loop.run_until_complete(embedding.generate_embeddings(texts))
        if len(vectors) != len(texts):
            raise RuntimeError(f"the model returned {len(vectors)} vectors for {len(texts)} texts")
        return vectors

    def _alone(self, texts: list[str]) -> list[list[float]]:
        model = self.loop.run_until_complete(model_manager.get_embedding_model())
        assert model is not None  # configured in __init__
        vectors: list[list[float]] = self.loop.run_until_complete(model.aembed(texts))
        if len(vectors) != len(texts):
            raise RuntimeError(f"the model returned {len(vectors)} vectors for {len(texts)} texts")
        return vectors

    def __call__(self, table: pa.Table) -> pa.Table:
        import pyarrow as pa

        orders = table.column("order").to_pylist()
        errors = table.column("error").to_pylist()
        texts = table.column("text").to_pylist()
        records = table.column("record").to_pylist()
        todo = [i for i, (o, e) in enumerate(zip(orders, errors, strict=True)) if o >= 0 and not e]
        vectors: list[list[float] | None] = [None] * len(orders)
        try:
            for i, v in zip(todo, self._embed([texts[i] for i in todo]), strict=True):
                vectors[i] = v
        except Exception as error:
            # As the local pipeline: each record's chunks alone, one attempt each.
            by_record: dict[str, list[int]] = {}
            for i in todo:
                by_record.setdefault(records[i], []).append(i)
            for part in by_record.values():
                try:
                    found = self._alone([texts[i] for i in part])
                except Exception as e:
                    message = f"{error} (alone: {e})" if len(by_record) > 1 else str(error)
                    for i in part:
                        errors[i] = message
                    continue
                for i, v in zip(part, found, strict=True):
                    vectors[i] = v
        _fault_once()
        return table.set_column(
            table.schema.get_field_index("error"), "error", pa.array(errors, pa.string())
        ).append_column("vector", pa.array(vectors, pa.list_(pa.float64())))


def _fault_once() -> None:
    marker = os.environ.get(FAULT_ENV)
    if not marker:
        return
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)


# --- the pipeline -------------------------------------------------------------


def _pipeline(ds: Any, ray_options: RayOptions, files: bool, actor: type = ModelActor) -> Any:
    """read (``ds``) -> [decode] -> hash + chunk -> model actors (``actor``:
    ``ModelActor`` or, in the benchmark, a subclass)."""

    config = model_manager.embedding_config()
    if config is None:
        raise ValueError(
            "No embedding model configured. Please configure one in the Models section."
        )
    if files:
        ds = ds.map_batches(
            decode_files, batch_format="pyarrow", batch_size=16, num_cpus=ray_options.task_cpus
        )
    ds = ds.map_batches(
        chunk_records,
        batch_format="pyarrow",
        batch_size=None,
        num_cpus=ray_options.task_cpus,
        fn_kwargs={"chunking": get_chunking_config()},
    )
    env: dict[str, str] = {k: v for k, v in os.environ.items() if k == FAULT_ENV}
    with warnings.catch_warnings():
        # max_restarts and max_task_retries go through ``ray_remote_args``,
        # which Ray 2.60 marks deprecated without a replacement yet.
        warnings.simplefilter("ignore", DeprecationWarning)
        return _model_stage(ds, ray_options, config, env, actor)


def _model_stage(
    ds: Any,
    ray_options: RayOptions,
    config: model_manager.EmbeddingConfig,
    env: dict[str, str],
    actor: type,
) -> Any:
    import ray.data

    return ds.map_batches(
        actor,
        batch_format="pyarrow",
        batch_size=ray_options.batch_size or embedding.EMBEDDING_BATCH_SIZE,
        fn_constructor_kwargs={
            "provider": config.provider,
            "model_name": config.model_name,
            "config": config.config,
        },
        compute=ray.data.ActorPoolStrategy(size=ray_options.concurrency),
        num_cpus=ray_options.num_cpus,
        num_gpus=ray_options.num_gpus or None,
        max_restarts=ray_options.max_restarts,
        max_task_retries=ray_options.max_task_retries,
        runtime_env={"env_vars": env} if env else None,
    )


@dataclass
class _Record:
    """A record's chunk rows as they come back from the cluster."""

    rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    expected: int = 1


class _Collector:
    """Chunk rows to whole records: a record is complete when each of its
    chunks came back (once: a retried batch may bring a chunk again)."""

    def __init__(self) -> None:
        self.pending: dict[str, _Record] = {}

    def add(self, rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        done = []
        for row in rows:
            record = self.pending.setdefault(row["record"], _Record())
            record.expected = max(1, int(row["chunks"]))
            record.rows[int(row["order"])] = row
            if len(record.rows) == record.expected:
                done.append([record.rows[k] for k in sorted(record.rows)])
                del self.pending[row["record"]]
        return done


def _batches(ds: Any) -> Iterator[list[dict[str, Any]]]:
    for batch in ds.iter_batches(batch_format="pyarrow", batch_size=None):
        yield batch.to_pylist()


def _next(it: Iterator[list[dict[str, Any]]]) -> list[dict[str, Any]] | None:
    return next(it, None)


def _vectors(kind: str, rows: list[dict[str, Any]]) -> list[list[float]]:
    vectors: list[list[float]] = [r["vector"] for r in rows if r["order"] >= 0]
    if kind != "source" and len(vectors) > 1:
        vectors = [embedding.mean_pool(np.asarray(vectors, dtype=np.float64)).tolist()]
    return vectors


class _DatabaseSink:
    """The driver's writer: groups of whole records of one kind, one
    transaction each (``writer.write_group``), vector indexes as ``embed``."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        epochs: dict[str, int],
        report: EmbedReport,
        write_rows: int,
        kinds: tuple[Kind, ...],
        progress: Progress,
    ) -> None:
        self.db, self.settings, self.epochs, self.report = db, settings, epochs, report
        self.write_rows, self.kinds, self.progress = write_rows, kinds, progress
        self.waiting: dict[str, list[Finished]] = {}
        self.dimension: int | None = None
        self.index_deferred = False

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
        for k in [kind] if kind else list(self.waiting):
            group = self.waiting.pop(k, [])
            if group:
                await self._write(group)

    def _failed(self, kind: str, what: str, path: str | None, message: str, size: int) -> None:
        self.report.counts[kind].failed += 1
        self.report.failures.append((f"{what} ({path})" if path else what, message))
        self.progress.advance(items=1, failed=1, nbytes=size)

    async def _write(self, group: list[Finished]) -> None:
        width = next((len(item.vectors[0]) for item in group if item.vectors), None)
        if width is not None:
            await self._ensure_dimension(width)
        try:
            with self.report.clock.measure("write"):
                await write_group(self.db, group, self.settings)
        except DatabaseOperationError as e:
            if len(group) == 1:
                item = group[0]
                self._failed(item.kind, str(item.id), item.path, str(e), item.size)
                return
            for item in group:
                await self._write([item])
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

    async def _ensure_dimension(self, dimension: int) -> None:
        if self.dimension == dimension:
            return
        self.dimension = dimension
        with self.report.clock.measure("index"):
            existing = await vector_dimension(self.db)
            if existing == dimension:
                return
            if existing is not None:
                if set(self.kinds) != set(KINDS):
                    raise ConfigurationError(
                        f"the stored vectors have dimension {existing} and the model gives "
                        f"{dimension}: re-embed sources, insights and notes together"
                    )
                await drop_vector_indexes(self.db)
            if await other_dimensions(self.db, dimension):
                self.index_deferred = True
            else:
                await ensure_vector_indexes(dimension, self.db)

    async def finalize(self) -> None:
        """Define the vector indexes that had to wait for the last old vector."""
        if (
            self.index_deferred
            and self.dimension is not None
            and not await other_dimensions(self.db, self.dimension)
        ):
            await ensure_vector_indexes(self.dimension, self.db)


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
    db = db or await get_database()
    started = time.perf_counter()
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
    sink = _DatabaseSink(db, settings, current, report, ray_options.write_rows, options.kinds, bar)
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
                ds = _pipeline(ray.data.from_arrow(tables), ray_options, files=False)
                await _drain(ds, partial(_add_to_sink, sink, items))
                await sink.flush()
        await sink.finalize()
    finally:
        bar.close()
    report.seconds = time.perf_counter() - started
    return report


async def _add_to_sink(
    sink: _DatabaseSink, items: dict[str, Item], rows: list[dict[str, Any]]
) -> None:
    await sink.add(items[rows[0]["record"]], rows)


async def _drain(ds: Any, done: Callable[[list[dict[str, Any]]], Any]) -> None:
    """Run ``ds``; hand each whole record's rows (by order) to ``done``."""
    collector = _Collector()
    it = _batches(ds)
    while (rows := await asyncio.to_thread(_next, it)) is not None:
        for record in collector.add(rows):
            await done(record)
    if collector.pending:
        missing = ", ".join(sorted(collector.pending)[:5])
        raise RuntimeError(f"the Ray job ended with records incomplete: {missing}")


# --- files to Parquet ---------------------------------------------------------


@dataclass
class ParquetReport:
    """What ``embed_files_to_parquet`` did."""

    model: str
    chunking: str
    output: str
    files: int = 0  # supported files found
    unchanged: int = 0  # skipped: same bytes, model and chunking as in the output
    embedded: int = 0
    chunks: int = 0
    written: list[str] = field(default_factory=list)  # Parquet files written
    failures: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0


PARQUET_COLUMNS = (
    "record, kind, path, order, chunks, text, vector, content_hash, source_hash, model, "
    "chunking, run, embedded_at"
)


def _filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    import pyarrow.fs as pafs

    if "://" not in uri:
        return pafs.LocalFileSystem(), str(Path(uri).expanduser().resolve())
    fs, path = pafs.FileSystem.from_uri(uri)
    return fs, path


def _list_files(fs: pafs.FileSystem, root: str) -> list[str]:
    """Supported files under ``root`` (a file or a folder), sorted, without
    hidden files and folders."""
    import pyarrow.fs as pafs

    info = fs.get_file_info(root)
    if info.type == pafs.FileType.NotFound:
        raise FileNotFoundError(f"not found: {root}")
    if info.type == pafs.FileType.File:
        infos = [info]
    else:
        infos = fs.get_file_info(pafs.FileSelector(root, recursive=True))
    found = []
    for entry in infos:
        if entry.type != pafs.FileType.File:
            continue
        relative = entry.path[len(root) :].lstrip("/") if entry.path != root else entry.base_name
        if any(part.startswith(".") for part in relative.split("/")):
            continue
        if detect_content_type_from_extension(entry.path) is not None:
            found.append(entry.path)
    return sorted(found)


def _hash_file(fs: pafs.FileSystem, path: str) -> str:
    digest = hashlib.sha256()
    with fs.open_input_stream(path) as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _embedded_before(fs: pafs.FileSystem, root: str) -> dict[str, tuple[str, str, str]]:
    """(source_hash, model, chunking) of each path in the Parquet output's
    latest run that holds it."""
    import pyarrow.dataset as pads
    import pyarrow.fs as pafs

    if fs.get_file_info(root).type != pafs.FileType.Directory:
        return {}
    dataset = pads.dataset(root, filesystem=fs, format="parquet")
    table = dataset.to_table(columns=["path", "source_hash", "model", "chunking", "run"])
    latest: dict[str, tuple[str, tuple[str, str, str]]] = {}
    for row in table.to_pylist():
        seen = latest.get(row["path"])
        if seen is None or row["run"] > seen[0]:
            latest[row["path"]] = (row["run"], (row["source_hash"], row["model"], row["chunking"]))
    return {path: value for path, (_, value) in latest.items()}


def embed_files_to_parquet(
    input_uri: str,
    output_uri: str,
    ray_options: RayOptions | None = None,
    threads: int = 8,
) -> ParquetReport:
    """Embed the files under ``input_uri`` (a folder, a file, or a pyarrow
    filesystem URI) on Ray into Parquet files under ``output_uri`` (a folder
    or URI), one row per chunk: ``PARQUET_COLUMNS``.

    Incremental: a file whose bytes, model and chunking are those of its
    latest rows in the output is skipped before anything is scheduled. Each
    run adds its own files (``run-<time>-<id>-<n>.parquet``); a file
    embedded again has rows in several runs: the latest ``run`` is current."""
    ray_options = ray_options or RayOptions()
    require_ray()
    import pyarrow as pa
    import pyarrow.parquet as pq
    import ray.data

    started = time.perf_counter()
    settings = asyncio.run(model_settings())
    in_fs, in_root = _filesystem(input_uri)
    out_fs, out_root = _filesystem(output_uri)
    report = ParquetReport(settings.model, settings.chunking, output_uri)
    files = _list_files(in_fs, in_root)
    report.files = len(files)
    before = _embedded_before(out_fs, out_root)
    with ThreadPoolExecutor(threads) as pool:
        hashes = list(pool.map(lambda p: _hash_file(in_fs, p), files))
    due = [
        p
        for p, h in zip(files, hashes, strict=True)
        if before.get(p) != (h, settings.model, settings.chunking)
    ]
    report.unchanged = len(files) - len(due)
    if not due:
        report.seconds = time.perf_counter() - started
        return report
    connect(ray_options.address)
    ds = ray.data.read_binary_files(
        due, filesystem=in_fs, include_paths=True, num_cpus=ray_options.task_cpus
    )
    ds = _pipeline(ds, ray_options, files=True)
    run = datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    embedded_at = datetime.now(UTC).isoformat()
    out_fs.create_dir(out_root, recursive=True)
    buffer: list[dict[str, Any]] = []

    def flush() -> None:
        if not buffer:
            return
        table = pa.table(
            {
                "record": [r["record"] for r in buffer],
                "kind": [r["kind"] for r in buffer],
                "path": [r["path"] for r in buffer],
                "order": [r["order"] for r in buffer],
                "chunks": [r["chunks"] for r in buffer],
                "text": [r["text"] for r in buffer],
                "vector": pa.array([r["vector"] for r in buffer], pa.list_(pa.float64())),
                "content_hash": [r["content_hash"] for r in buffer],
                "source_hash": [r["source_hash"] for r in buffer],
                "model": [settings.model] * len(buffer),
                "chunking": [settings.chunking] * len(buffer),
                "run": [run] * len(buffer),
                "embedded_at": [embedded_at] * len(buffer),
            }
        )
        name = f"{out_root}/run-{run}-{len(report.written):05d}.parquet"
        pq.write_table(table, name, filesystem=out_fs)
        report.written.append(name)
        buffer.clear()

    async def done(rows: list[dict[str, Any]]) -> None:
        errors = [r["error"] for r in rows if r["error"]]
        if errors:
            report.failures.append((rows[0]["path"], errors[0]))
            return
        report.embedded += 1
        # A file without chunks (no text) keeps its one row (order -1, no
        # vector): the next run knows it was embedded.
        kept = [r for r in rows if r["order"] >= 0]
        report.chunks += len(kept)
        buffer.extend(kept or rows)
        if len(buffer) >= 8192:
            flush()

    asyncio.run(_drain(ds, done))
    flush()
    report.seconds = time.perf_counter() - started
    return report
