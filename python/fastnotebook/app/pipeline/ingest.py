"""``fastnotebook ingest``: files and folders in, ``source`` records out.

A file's source is found again by its absolute path (``asset.file_path``),
so ingesting the same folder twice updates the sources whose text, title or
front matter changed and leaves the rest untouched. Nothing is deleted
unless ``prune`` says so: then the sources under the given paths whose
files are gone are removed (``fastnotebook.app.pipeline.sources``). A binary
file, a symlink loop, a broken symlink and a FIFO or device are skipped with
the reason; a file that is not UTF-8 is decoded with the encoding given (or
detected) and named with a warning; NUL characters are removed from text
(``fastnotebook.textcheck``). One file never stops the run: whatever it
is, it is named in the report and the others are stored.
Files are read in a worker thread a batch ahead of the writes, and each
batch is written in one transaction (new sources inserted, changed ones
updated), so an interrupted ingest leaves whole batches and a second run
picks up the rest without duplicates. Two batches are written at once
where the ``source`` table carries nothing that could make them conflict
(no full-text index, no other schema's definitions).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loguru import logger

from fastnotebook.app.database import Database, get_database, query_isolated
from fastnotebook.app.database.schema import defines_only
from fastnotebook.app.pipeline import faults
from fastnotebook.app.pipeline.documents import Document, discover, read_document
from fastnotebook.app.pipeline.progress import Progress, StageClock
from fastnotebook.app.pipeline.sources import remove_sources, vanished_sources
from fastnotebook.errors import DatabaseOperationError
from fastnotebook.textcheck import BinaryFileError

__all__ = ["IngestReport", "ingest"]

_WRITE = """
BEGIN TRANSACTION;
INSERT INTO source $new RETURN NONE;
FOR $row IN $changed {
    UPDATE $row.id SET title = $row.title, full_text = $row.full_text, topics = $row.topics,
        metadata = $row.metadata ?? NONE, asset = $row.asset RETURN NONE;
};
FOR $row IN $touched {
    UPDATE $row.id SET asset = $row.asset RETURN NONE;
};
COMMIT TRANSACTION;
"""


@dataclass
class IngestReport:
    files: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    unsupported: int = 0
    missing: list[str] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    #: Files skipped because they are not text: (path, reason).
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: Files whose text lost NUL characters: (path, how many).
    cleaned: list[tuple[str, int]] = field(default_factory=list)
    #: Files that are not UTF-8, decoded with another encoding: (path, warning).
    decoded: list[tuple[str, str]] = field(default_factory=list)
    #: Sources removed by ``prune``: (id, path).
    removed: list[tuple[str, str]] = field(default_factory=list)
    bytes: int = 0
    seconds: float = 0.0
    clock: StageClock = field(default_factory=StageClock)


@dataclass(frozen=True)
class _Known:
    id: Any
    hash: str
    title: str | None
    metadata: dict[str, Any] | None
    topics: list[str]
    stat: tuple[Any, Any]  # the file's size and mtime (ns) as last ingested


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _batches(files: Sequence[Path], max_bytes: int, max_files: int) -> Iterator[list[Path]]:
    batch: list[Path] = []
    size = 0
    for path in files:
        length = _size(path)
        if batch and (size + length > max_bytes or len(batch) >= max_files):
            yield batch
            batch, size = [], 0
        batch.append(path)
        size += length
    if batch:
        yield batch


@dataclass
class _Read:
    documents: list[Document]
    failures: list[tuple[str, str]]
    skipped: list[tuple[str, str]]
    seconds: float
    unused_bytes: int = 0  # of the files skipped or failed


def _read_batch(paths: list[Path], encoding: str | None = None) -> _Read:
    """Read a batch of files (in a worker thread)."""
    start = time.perf_counter()
    read = _Read([], [], [], 0.0)
    for path in paths:
        try:
            read.documents.append(read_document(path, encoding))
        except BinaryFileError as e:
            read.skipped.append((str(path), str(e)))
            read.unused_bytes += _size(path)
        except (OSError, ValueError) as e:
            why = (e.strerror or str(e)) if isinstance(e, OSError) else str(e)
            read.failures.append((str(path), why))
    read.seconds = time.perf_counter() - start
    return read


async def _known_sources(db: Database, paths: Iterable[str]) -> dict[str, _Known]:
    """The sources of ``paths`` that exist, by path: one query per run.

    Every file source's path and text hash is read and filtered here against
    a set, linear in both; ``WHERE asset.file_path IN $paths`` would scan the
    list for every row, quadratic in the number of sources."""
    wanted = set(paths)
    try:
        rows = await db.query(
            "SELECT id, asset.file_path AS path, crypto::sha256(full_text ?? '') AS hash, "
            "title, metadata, topics, asset.file_size AS file_size, "
            "asset.file_mtime_ns AS file_mtime_ns FROM source WHERE asset.file_path != NONE;"
        )
    except DatabaseOperationError:
        rows = await _known_rows_one_by_one(db, wanted)
    known: dict[str, _Known] = {}
    for row in rows or []:
        if row["path"] not in wanted:
            continue
        known.setdefault(
            row["path"],
            _Known(
                row["id"],
                row["hash"],
                row.get("title"),
                row.get("metadata"),
                row.get("topics") or [],
                (row.get("file_size"), row.get("file_mtime_ns")),
            ),
        )
    return known


async def _known_rows_one_by_one(db: Database, wanted: set[str]) -> list[dict[str, Any]]:
    """The rows of ``_known_sources`` when some source cannot be read back
    (text stored with NUL by an older version): such a source gets an empty
    hash, so that its file's clean text replaces it."""
    located = await db.query(
        "SELECT id, asset.file_path AS path FROM source WHERE asset.file_path != NONE;"
    )
    paths = {str(row["id"]): row["path"] for row in located or [] if row["path"] in wanted}
    ids = [row["id"] for row in located or [] if str(row["id"]) in paths]
    rows, unread = await query_isolated(
        db,
        "SELECT id, asset.file_path AS path, crypto::sha256(full_text ?? '') AS hash, "
        "title, metadata, topics FROM $ids;",
        ids,
    )
    for record, reason in unread:
        logger.warning("Source {} ({}) cannot be read back: {}", record, paths[str(record)], reason)
        rows.append({"id": record, "path": paths[str(record)], "hash": ""})
    return rows


def _record(doc: Document) -> dict[str, Any]:
    record: dict[str, Any] = {
        "title": doc.title,
        "full_text": doc.text,
        "topics": doc.topics,
        # Size and modification time: `sources list` compares them with the file's.
        "asset": {"file_path": str(doc.path), "file_size": doc.size, "file_mtime_ns": doc.mtime_ns},
    }
    if doc.metadata is not None:
        record["metadata"] = doc.metadata
    return record


async def ingest(
    paths: Iterable[str | Path],
    db: Database | None = None,
    progress: bool = False,
    stream: Any = None,
    batch_bytes: int = 4_000_000,
    batch_files: int = 256,
    prune: bool = False,
    encoding: str | None = None,
) -> IngestReport:
    """Create or update a source for every supported file under ``paths``;
    with ``prune``, remove the sources under ``paths`` whose files are gone.
    ``encoding`` decodes the files that are not UTF-8 (default: detected)."""
    started = time.perf_counter()
    db = db or await get_database()
    report = IngestReport()
    paths = list(paths)
    found = discover(paths)
    report.files, report.unsupported, report.missing = (
        len(found.files),
        found.unsupported,
        found.missing,
    )
    report.skipped.extend(found.skipped)
    report.failures.extend(found.failures)
    for path, reason in found.skipped:
        logger.warning("{}: skipped, {}", path, reason)
    with report.clock.measure("plan"):
        known = await _known_sources(db, (str(p) for p in found.files))
    total = sum(_size(path) for path in found.files)
    bar = Progress("ingest", "files", len(found.files), total, stream, enabled=progress)
    reading: asyncio.Queue[_Read | None] = asyncio.Queue(1)

    async def reader() -> None:
        for batch in _batches(found.files, batch_bytes, batch_files):
            await reading.put(await asyncio.to_thread(_read_batch, batch, encoding))
        await reading.put(None)

    async def write(result: _Read) -> None:
        await _write(db, result.documents, known, report)
        bar.advance(
            items=len(result.documents) + len(result.failures) + len(result.skipped),
            nbytes=sum(d.size for d in result.documents) + result.unused_bytes,
        )

    lanes = await _write_lanes(db)
    writing: set[asyncio.Task[None]] = set()
    task = asyncio.create_task(reader())
    try:
        while (result := await reading.get()) is not None:
            report.clock.add("read", result.seconds)
            report.failures.extend(result.failures)
            report.skipped.extend(result.skipped)
            for doc in result.documents:
                if doc.removed_nul:
                    report.cleaned.append((str(doc.path), doc.removed_nul))
                    logger.warning(
                        "{}: removed {} NUL character{} (the database cannot return them)",
                        doc.path,
                        doc.removed_nul,
                        "" if doc.removed_nul == 1 else "s",
                    )
                if doc.warning:
                    report.decoded.append((str(doc.path), doc.warning))
                    logger.warning("{}: {}", doc.path, doc.warning)
            for path, reason in result.skipped:
                logger.warning("{}: skipped, {}", path, reason)
            while len(writing) >= lanes:
                await _one_written(writing)
            writing.add(asyncio.create_task(write(result)))
        while writing:
            await _one_written(writing)
        await task
    finally:
        task.cancel()
        for running in writing:
            running.cancel()
        bar.close()
    if prune:
        with report.clock.measure("prune"):
            gone = await vanished_sources(db, paths)
            await remove_sources(db, [record for record, _ in gone])
        report.removed = [(str(record), path) for record, path in gone]
        # A vanished path whose sources were removed is what prune is for.
        report.missing = [
            m
            for m in report.missing
            if not any(_under(path, Path(m).expanduser().resolve()) for _, path in gone)
        ]
    report.seconds = time.perf_counter() - started
    return report


# What the ``source`` table may carry for two batches to be written at once:
# fastnotebook's own events, each writing rows of its record only (a
# full-text index, or another schema's definitions, could make them conflict).
_CONCURRENT_SAFE_EVENTS = {
    "source_removed",
    "source_embedding_state_removed",
    "source_embedding_staging_removed",
    "source_text_digest",
}


async def _write_lanes(db: Database) -> int:
    """Batches written at once: two where ``source`` allows it (the engine
    then inserts on two cores), one otherwise."""
    safe = await defines_only(db, "source", indexes=set(), events=_CONCURRENT_SAFE_EVENTS)
    return 2 if safe else 1


async def _one_written(writing: set[asyncio.Task[None]]) -> None:
    """Wait for a batch's transaction to end; if one failed, let the others
    end too (each is whole or absent) and raise its error."""
    done, _ = await asyncio.wait(writing, return_when=asyncio.FIRST_COMPLETED)
    writing -= done
    errors = [error for task in done if (error := task.exception()) is not None]
    if errors:
        if writing:
            await asyncio.wait(writing)
            writing.clear()
        raise errors[0]


def _under(path: str, root: Path) -> bool:
    return Path(path) == root or Path(path).is_relative_to(root)


async def _write(
    db: Database, documents: list[Document], known: dict[str, _Known], report: IngestReport
) -> None:
    new: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []
    touched: list[dict[str, Any]] = []  # same content, other size or mtime
    with report.clock.measure("hash"):
        for doc in documents:
            report.bytes += doc.size
            before = known.get(str(doc.path))
            if before is None:
                new.append(_record(doc))
                continue
            same = (
                before.hash == hashlib.sha256(doc.text.encode("utf-8")).hexdigest()
                and before.title == doc.title
                and before.metadata == doc.metadata
                and before.topics == doc.topics
            )
            if same:
                report.unchanged += 1
                if before.stat != (doc.size, doc.mtime_ns):
                    touched.append({"id": before.id, "asset": _record(doc)["asset"]})
            else:
                changed.append({"id": before.id, **_record(doc), "metadata": doc.metadata})
    if not new and not changed and not touched:
        return
    faults.checkpoint("writing")
    with report.clock.measure("write"):
        await db.query_all(_WRITE, {"new": new, "changed": changed, "touched": touched})
    faults.checkpoint("ingested")
    report.created += len(new)
    report.updated += len(changed)
