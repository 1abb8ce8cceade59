"""The stored vectors as float32 matrices, for exact search in the core.

A snapshot holds, for each vector table (``source_embedding``,
``source_insight``, ``note``), the ids of the rows that have a vector of the
snapshot's dimension, the vectors as one row-major float32 matrix, their
norms and their 8-bit sketches (``_core.sketch_rows``: the exact search
reads the full rows of only the few candidates the sketches leave). It is
always read from the database, never the source of truth:

- It is keyed by the store's vector token (``schema.VECTOR_TOKEN``: the
  tokens of ``fastnotebook_meta:vector_changes``, which the database's own
  events replace in every transaction that adds, removes or changes a
  vector, whatever code writes it, and of the bulk writer's lanes, which
  its transactions replace; see ``schema.VECTOR_COUNTERS``). The vectors
  are read in pages between two reads of the token, and again if it
  changed, so a snapshot is exactly the store as of its token.
- Before each use the current token is read (one small query); a snapshot
  with another token is stale and never used.
- It is kept in memory, per open ``Database``, and for an on-disk embedded
  database in a folder beside it (``<database folder>.vectors``), so that the
  next process starts from the file instead of the database. Deleting that
  folder is always safe.
- The bulk writer records what each of its transactions changed
  (``vector_journal``); a snapshot is brought up to the current token from
  the saved one and those records when they connect, without a read.
- A database whose schema has no change counter (a server database managed
  by someone else, or one opened without migrations) gets no cache: a
  snapshot can still be read for one search, at the cost of a full read.

Reading a snapshot costs a full read of the vectors (the engine's, at about
a millisecond a row on a small machine): see docs/performance.md for the
figures and ``domain.search`` for how the search mode weighs that cost.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from loguru import logger

from fastnotebook import _core
from fastnotebook.app.database.connection import Database
from fastnotebook.app.database.encoded import decode_value
from fastnotebook.app.database.schema import VECTOR_ROWS, VECTOR_TABLES, VECTOR_TOKEN
from fastnotebook.app.database.vector_journal import (
    JOURNAL,
    chain,
    clear_journal,
    read_journal,
)

__all__ = [
    "StoreChanges",
    "VectorSnapshot",
    "VectorTable",
    "cache_folder",
    "drop_snapshot",
    "read_snapshot",
    "store_changes",
    "vector_snapshot",
]

FORMAT = 2

F32 = npt.NDArray[np.float32]

# The arrays of a table saved in the cache folder, one .npy file each.
PARTS = ("ids", "matrix", "norms", "codes", "scales", "errors")


@dataclass(frozen=True)
class VectorTable:
    """One table's vectors: ``ids[i]`` (UTF-8 record ids) is row ``i``."""

    ids: npt.NDArray[np.bytes_]
    matrix: F32  # (rows, dimension), C-contiguous
    norms: F32  # (rows,)
    # ``_core.sketch_rows(matrix)``: 8-bit codes, scales, error bounds.
    codes: npt.NDArray[np.int8]
    scales: F32
    errors: F32

    @property
    def rows(self) -> int:
        return int(self.matrix.shape[0])

    def top_k(self, query: F32, k: int) -> list[tuple[str, float]]:
        """The ``k`` rows most similar to ``query`` (cosine, best first; ties
        by row): (record id, score). See ``fastnotebook._core.cosine_top_k``:
        the sketch leaves the result unchanged, and reads far less memory."""
        if self.rows == 0:
            return []
        sketch = (self.codes, self.scales, self.errors)
        index, score = _core.cosine_top_k(self.matrix, self.norms, query, k, sketch)
        return [
            (self.ids[i].decode("utf-8", "surrogatepass"), float(s))
            for i, s in zip(index.tolist(), score.tolist(), strict=True)
        ]


@dataclass(frozen=True)
class VectorSnapshot:
    """The vectors of one dimension, as of the change token ``token``."""

    token: str | None
    dimension: int
    tables: dict[str, VectorTable]

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables.values())


@dataclass(frozen=True)
class StoreChanges:
    """The change counter: its token (None without one), the number of
    stored vectors, their dimension (None before any is written), and
    whether the vector indexes are defined."""

    token: str | None
    rows: int
    dimension: int | None
    indexed: bool = False


_snapshots: weakref.WeakKeyDictionary[Database, VectorSnapshot] = weakref.WeakKeyDictionary()


async def store_changes(db: Database) -> StoreChanges:
    """The current change token, row estimate, dimension and whether the
    indexes exist (one request)."""
    token, rows, vectors = await db.query_all(
        f"RETURN {VECTOR_TOKEN};\nRETURN {VECTOR_ROWS};\n"
        "SELECT dimension, indexed FROM ONLY fastnotebook_meta:vectors;"
    )
    vectors = vectors if isinstance(vectors, dict) else {}
    dimension = vectors.get("dimension")
    return StoreChanges(
        token=None if token is None else str(token),
        rows=int(rows or 0),
        dimension=None if dimension is None else int(dimension),
        # A dimension recorded before `indexed` existed came with its indexes.
        indexed=dimension is not None and vectors.get("indexed") is not False,
    )


def cache_folder(db: Database) -> Path | None:
    """Where an on-disk embedded database's snapshot is kept (None otherwise)."""
    path = db.settings.local_path
    if path is None:
        return None
    return path.with_name(path.name + ".vectors")


def _table(
    ids: list[str], vectors: list[Any] | npt.NDArray[np.float32], dimension: int
) -> VectorTable:
    matrix = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), dimension)
    matrix = np.ascontiguousarray(matrix)
    encoded = np.array([i.encode("utf-8", "surrogatepass") for i in ids], dtype=np.bytes_)
    if not ids:
        encoded = np.zeros(0, dtype="S1")
    codes, scales, errors = _core.sketch_rows(matrix)
    return VectorTable(
        ids=encoded,
        matrix=matrix,
        norms=_core.row_norms(matrix),
        codes=codes,
        scales=scales,
        errors=errors,
    )


# Rows a paged read asks for at once: the engine holds about 100 KB a row of
# 384 dimensions while it answers (6.5 GB for 50,000 rows in one response),
# so a page of 2,000 bounds that at a few hundred MB whatever the store.
PAGE_ROWS = 2_000
# A paged read that meets a change starts again, at most this many times.
_PAGED_TRIES = 3
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_]+")


async def read_snapshot(db: Database, dimension: int) -> VectorSnapshot:
    """Read every stored vector of ``dimension`` and the change token: a
    snapshot that is exactly the store as of its token.

    The vectors are read in pages of ``PAGE_ROWS`` rows, in key order, with
    the token read before and after: a change meanwhile (a new token) reads
    again, at most three times. A store without a change counter, with ids
    that a key range cannot continue from, or written to during every try
    (another writer on a shared server) is read in one transaction instead
    (the engine's memory then grows with the store). From an embedded engine each
    response is read by the core: the SDK's decoder makes a Python float of
    every number, about half the time of a cold read (docs/SCALING.md)."""
    for _ in range(_PAGED_TRIES):
        token = (await store_changes(db)).token
        if token is None:
            break
        tables = await _read_pages(db, dimension)
        if tables is None:
            break
        if (await store_changes(db)).token == token:
            return VectorSnapshot(token=token, dimension=dimension, tables=tables)
        logger.debug("The vectors changed while they were read: reading again")
    return await _read_whole(db, dimension)


async def _read_pages(db: Database, dimension: int) -> dict[str, VectorTable] | None:
    """Every table's vectors of ``dimension``, page by page; None if a row's
    id is one that a key range cannot start after."""
    tables = {}
    for table in VECTOR_TABLES:
        ids: list[str] = []
        blocks: list[npt.NDArray[np.float32]] = []
        source = table
        while True:
            found, matrix = await _read_page(
                db,
                f"SELECT VALUE [id, embedding] FROM {source} WHERE embedding != NONE "
                f"AND array::len(embedding) = $dim LIMIT {PAGE_ROWS};",
                dimension,
            )
            ids += [str(i) for i in found]
            blocks.append(np.asarray(matrix, dtype=np.float32).reshape(len(found), dimension))
            if len(found) < PAGE_ROWS:
                break
            after = _key_literal(found[-1])
            if after is None:
                return None
            source = f"{table}:{after}>.."
        tables[table] = _table(ids, np.concatenate(blocks), dimension)
    return tables


async def _read_page(
    db: Database, sql: str, dimension: int
) -> tuple[list[Any], npt.NDArray[np.float32]]:
    """The record ids and vectors one ``SELECT VALUE [id, embedding]`` returns."""
    params = {"dim": dimension}
    data = await db.query_response_bytes(sql, params)
    if data is not None:
        try:
            statements = _core.read_vector_statements(data, dimension)
        except ValueError:
            statements = []
        if statements and statements[-1][0] == "OK" and statements[-1][2] is not None:
            spans, matrix = statements[-1][2]
            return [decode_value(data[a:b]) for a, b in spans], matrix
    found = await db.query(sql, params) or []
    vectors = np.asarray([r[1] for r in found], dtype=np.float32).reshape(len(found), dimension)
    return [r[0] for r in found], vectors


def _key_literal(record: Any) -> str | None:
    """``record``'s key as SurrealQL writes it in a range, for the ids the
    writers give (strings of letters, digits and ``_``, or integers)."""
    key = getattr(record, "id", None)
    if isinstance(key, str) and _PLAIN_KEY.fullmatch(key):
        return f"⟨{key}⟩"
    if isinstance(key, int) and not isinstance(key, bool):
        return str(key)
    return None


async def _read_whole(db: Database, dimension: int) -> VectorSnapshot:
    """Every vector and the token in one transaction (one response)."""
    selects = "\n".join(
        f"SELECT VALUE [id, embedding] FROM {table} "
        "WHERE embedding != NONE AND array::len(embedding) = $dim;"
        for table in VECTOR_TABLES
    )
    sql = f"BEGIN TRANSACTION;\n{VECTOR_TOKEN};\n{selects}\nCOMMIT TRANSACTION;"
    params = {"dim": dimension}
    data = await db.query_response_bytes(sql, params)
    if data is not None and (snapshot := _read_response(data, dimension)) is not None:
        return snapshot
    results = await db.query_all(sql, params)
    # The token and the three tables are the last results, whether or not
    # BEGIN and COMMIT have one of their own.
    token, *rows = results[-(len(VECTOR_TABLES) + 1) :]
    tables = {}
    for table, found in zip(VECTOR_TABLES, rows, strict=True):
        found = found or []
        tables[table] = _table([str(r[0]) for r in found], [r[1] for r in found], dimension)
    return VectorSnapshot(
        token=None if token is None else str(token), dimension=dimension, tables=tables
    )


def _read_response(data: bytes, dimension: int) -> VectorSnapshot | None:
    """The snapshot in an engine's response, read by the core; None if the
    response is an error or not of the expected shape (the caller then asks
    again through the SDK, which reports errors as usual)."""
    try:
        statements = _core.read_vector_statements(data, dimension)
    except ValueError:
        return None
    if len(statements) < len(VECTOR_TABLES) + 1 or any(s[0] != "OK" for s in statements):
        return None
    (_, (start, end), _), *found = statements[-(len(VECTOR_TABLES) + 1) :]
    token = decode_value(data[start:end])
    tables = {}
    for table, (_, _, rows) in zip(VECTOR_TABLES, found, strict=True):
        if rows is None:
            return None
        spans, matrix = rows
        tables[table] = _table([str(decode_value(data[a:b])) for a, b in spans], matrix, dimension)
    return VectorSnapshot(
        token=None if token is None else str(token), dimension=dimension, tables=tables
    )


def _load_files(folder: Path) -> VectorSnapshot | None:
    """The snapshot saved in ``folder``, or None if there is none usable."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT:
            return None
        dimension = int(manifest["dimension"])
        tables = {}
        for table in VECTOR_TABLES:
            name = manifest["files"][table]
            parts = {part: np.load(folder / f"{name}.{part}.npy", mmap_mode="r") for part in PARTS}
            matrix = parts["matrix"]
            rows = (matrix.shape[0],)
            if (
                matrix.dtype != np.float32
                or matrix.ndim != 2
                or matrix.shape[1] != dimension
                or parts["codes"].dtype != np.int8
                or parts["codes"].shape != matrix.shape
                or any(parts[p].shape != rows for p in ("norms", "ids", "scales", "errors"))
                or any(parts[p].dtype != np.float32 for p in ("norms", "scales", "errors"))
            ):
                return None
            tables[table] = VectorTable(**parts)
        return VectorSnapshot(token=str(manifest["token"]), dimension=dimension, tables=tables)
    except (OSError, ValueError, KeyError, TypeError) as e:
        logger.debug("No usable vector cache in {}: {}", folder, e)
        return None


def _save_files(folder: Path, snapshot: VectorSnapshot) -> None:
    """Save ``snapshot`` in ``folder``: new files first, then the manifest
    that names them (replaced atomically), then the old files go."""
    if snapshot.token is None:
        return
    folder.mkdir(parents=True, exist_ok=True)
    # Named after the whole token: a new snapshot never writes over the
    # files the current manifest names.
    stem = hashlib.sha256(snapshot.token.encode("utf-8")).hexdigest()[:16]
    files = {}
    for table, data in snapshot.tables.items():
        name = f"{table}-{stem}"
        for part in PARTS:
            np.save(folder / f"{name}.{part}.npy", getattr(data, part))
        files[table] = name
    manifest = {
        "format": FORMAT,
        "token": snapshot.token,
        "dimension": snapshot.dimension,
        "files": files,
        "rows": {t: d.rows for t, d in snapshot.tables.items()},
    }
    temporary = folder / f"manifest.json.{os.getpid()}"
    temporary.write_text(json.dumps(manifest), encoding="utf-8")
    os.replace(temporary, folder / "manifest.json")
    keep = {f"{name}.{part}.npy" for name in files.values() for part in PARTS} | {JOURNAL}
    for path in folder.iterdir():
        if path.name != "manifest.json" and path.name not in keep:
            path.unlink(missing_ok=True)


def _without(table: VectorTable, gone: npt.NDArray[np.bytes_]) -> VectorTable:
    keep = ~np.isin(table.ids, gone)
    if keep.all():
        return table
    return VectorTable(**{part: np.asarray(getattr(table, part))[keep] for part in PARTS})


def _joined(parts: list[VectorTable], dimension: int) -> VectorTable:
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return _table([], np.zeros((0, dimension), dtype=np.float32), dimension)
    return VectorTable(
        **{part: np.concatenate([getattr(t, part) for t in parts]) for part in PARTS}
    )


def _replay(
    folder: Path, saved: VectorSnapshot | None, token: str, dimension: int
) -> VectorSnapshot | None:
    """The snapshot as of ``token``: ``saved`` (or an empty store) with the
    journal's deltas applied; None when they do not lead there."""
    deltas = read_journal(folder)
    base = saved.token if saved is not None and saved.dimension == dimension else None
    found = chain(deltas, token, base) if deltas else None
    if found is None:
        return None
    from_empty, steps = found
    for delta in steps:
        if delta.table not in VECTOR_TABLES or (delta.added_ids and delta.dimension != dimension):
            return None
    parts: dict[str, list[VectorTable]] = {table: [] for table in VECTOR_TABLES}
    if saved is not None and not from_empty:
        for table, data in saved.tables.items():
            parts[table].append(data)
    for delta in steps:
        if delta.removed:
            gone = np.array([i.encode("utf-8", "surrogatepass") for i in delta.removed])
            parts[delta.table] = [_without(t, gone) for t in parts[delta.table]]
        if delta.added_ids:
            parts[delta.table].append(_table(delta.added_ids, delta.added, dimension))
    tables = {table: _joined(found_parts, dimension) for table, found_parts in parts.items()}
    return VectorSnapshot(token=token, dimension=dimension, tables=tables)


def _keep(db: Database, snapshot: VectorSnapshot) -> None:
    """Hold ``snapshot`` in memory and save it in the cache folder (which
    then needs no journal before its token)."""
    _snapshots[db] = snapshot
    folder = cache_folder(db)
    if folder is not None:
        try:
            _save_files(folder, snapshot)
            clear_journal(folder)
        except OSError as e:
            logger.warning("Could not save the vector cache in {}: {}", folder, e)


async def vector_snapshot(
    db: Database, dimension: int, changes: StoreChanges | None = None, *, read: bool = True
) -> VectorSnapshot | None:
    """The current snapshot of the vectors of ``dimension``: the one in
    memory or in the cache folder if its token is current, else (``read``)
    one read from the database and cached, else None. ``changes`` is
    ``store_changes(db)`` if the caller has it (it must be current)."""
    changes = changes or await store_changes(db)
    token = changes.token
    if token is not None:
        held = _snapshots.get(db)
        if held is not None and held.token == token and held.dimension == dimension:
            return held
        folder = cache_folder(db)
        if folder is not None:
            saved = _load_files(folder)
            if saved is not None and saved.token == token and saved.dimension == dimension:
                _snapshots[db] = saved
                return saved
            replayed = _replay(folder, saved, token, dimension)
            if replayed is not None:
                _keep(db, replayed)
                return replayed
    if not read:
        return None
    snapshot = await read_snapshot(db, dimension)
    # Exactly the store as of its own token (newer than ``token`` if a write
    # came in between): cached under that one.
    if snapshot.token is not None:
        _keep(db, snapshot)
    return snapshot


def drop_snapshot(db: Database) -> None:
    """Forget ``db``'s snapshot, in memory and on disk."""
    _snapshots.pop(db, None)
    folder = cache_folder(db)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
