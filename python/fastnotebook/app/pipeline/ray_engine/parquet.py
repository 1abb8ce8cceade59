"""The Ray job from files to Parquet: the files under a folder or any pyarrow
filesystem URI, chunked and embedded on the cluster, written by the driver
as Parquet files (one row per chunk); a file already embedded with the same
bytes, model and chunking is skipped before anything is scheduled."""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastnotebook.app.pipeline.ray_engine.cluster import (
    RayOptions,
    connect,
    drain_records,
    ray_pipeline,
    require_ray,
)
from fastnotebook.app.pipeline.stages import model_settings
from fastnotebook.chunking import detect_content_type_from_extension

if TYPE_CHECKING:
    import pyarrow.fs as pafs

__all__ = ["PARQUET_COLUMNS", "ParquetReport", "embed_files_to_parquet"]


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
    ds = ray_pipeline(ds, ray_options, files=True)
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

    asyncio.run(drain_records(ds, done))
    flush()
    report.seconds = time.perf_counter() - started
    return report
