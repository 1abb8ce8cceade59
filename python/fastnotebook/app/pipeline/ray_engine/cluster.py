"""What both Ray jobs share (``database`` and ``parquet``): the options,
connecting to Ray, the stages that run on the cluster (decode, hash + chunk,
the model actors) and the driver's loop that turns the rows coming back into
whole records (``drain_records``)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastnotebook import embedding
from fastnotebook.ai import model_manager
from fastnotebook.app.pipeline.documents import split_front_matter
from fastnotebook.chunking import (
    ChunkingConfig,
    ContentType,
    chunk_texts,
    detect_content_type_from_extension,
    get_chunking_config,
    set_chunking_config,
)
from fastnotebook.errors import ConfigurationError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "FAULT_ENV",
    "INSTALL_HINT",
    "ModelActor",
    "RayOptions",
    "chunk_records",
    "connect",
    "decode_files",
    "drain_records",
    "input_schema",
    "ray_pipeline",
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
    write_rows: int = 512  # rows per write transaction (as EmbedOptions)
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

    from fastnotebook.textcheck import BinaryFileError, text_file

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
        from fastnotebook.ai import local_models  # noqa: F401
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


def ray_pipeline(ds: Any, ray_options: RayOptions, files: bool, actor: type = ModelActor) -> Any:
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


async def drain_records(ds: Any, done: Callable[[list[dict[str, Any]]], Any]) -> None:
    """Run ``ds``; hand each whole record's rows (by order) to ``done``."""
    collector = _Collector()
    it = _batches(ds)
    while (rows := await asyncio.to_thread(_next, it)) is not None:
        for record in collector.add(rows):
            await done(record)
    if collector.pending:
        missing = ", ".join(sorted(collector.pending)[:5])
        raise RuntimeError(f"the Ray job ended with records incomplete: {missing}")
