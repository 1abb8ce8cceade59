"""One long-lived connection per database, shared by every query.

Open Notebook opens a connection (and signs in) for every query. With an
embedded database that would mean opening the store for every query, so
fastnotebook keeps one ``Database`` open and shares it; a closed ``Database``
refuses queries with ``DatabaseOperationError`` instead of reopening quietly.

An on-disk embedded database is locked to the process that opened it: the
embedded engine would let a second process open the same files, and two
engines writing one store corrupt it. Share it through ``fastnotebook serve``
or use a server (``SURREAL_URL``) instead. (The lock uses ``flock``; there is
none on Windows.)

Queries are sent with ``query_raw`` so that every statement's status is
checked: the SDK's ``query`` only looks at the first statement of a
multi-statement request. A query with a parameter given as ``Encoded``
(CBOR bytes, see ``fastnotebook.app.database.encoded``) is encoded here and
sent through the same transport.
"""

from __future__ import annotations

import asyncio
import os
import sys
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import aiohttp
import websockets.exceptions
from loguru import logger
from surrealdb import AsyncSurreal, SurrealError

from fastnotebook.app.database.encoded import decode_value, has_encoded, query_request
from fastnotebook.app.database.settings import DatabaseSettings
from fastnotebook.errors import DatabaseOperationError

__all__ = [
    "Database",
    "close_database",
    "get_database",
    "open_database",
    "query_isolated",
    "set_database",
]

# What the SDK raises when the database, the connection or a query fails.
_DRIVER_ERRORS = (
    SurrealError,
    RuntimeError,
    OSError,
    asyncio.TimeoutError,
    aiohttp.ClientError,
    websockets.exceptions.WebSocketException,
)
_ABORTED = "not executed due to a failed transaction"

if sys.platform != "win32":
    import fcntl


def _lock_store(path: Path) -> IO[str] | None:
    """Hold an exclusive lock on ``path``.lock while the store is open; raise
    ``DatabaseOperationError`` naming the holder if another process has it."""
    if sys.platform == "win32":
        return None
    handle = path.with_name(path.name + ".lock").open("a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise DatabaseOperationError(
            f"the database at {path} is in use by another process (pid {holder}); "
            "stop it, or share one database through `fastnotebook serve` or SURREAL_URL"
        ) from None
    handle.truncate(0)
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def _unlock_store(handle: IO[str] | None) -> None:
    if handle is not None:
        handle.close()  # closing releases the flock


class Database:
    """A SurrealDB database: embedded (in this process) or on a server."""

    def __init__(self, settings: DatabaseSettings) -> None:
        self.settings = settings
        self._conn: Any = None
        self._closed = False
        self._store_lock: IO[str] | None = None

    @property
    def is_open(self) -> bool:
        return self._conn is not None and not self._closed

    async def open(self) -> Database:
        """Connect (creating an on-disk database's folder), sign in to a
        server, select the namespace and database. Returns ``self``."""
        if self._closed:
            raise DatabaseOperationError("this database was closed; create a new Database")
        if self._conn is not None:
            return self
        settings = self.settings
        if settings.local_path is not None:
            settings.local_path.parent.mkdir(parents=True, exist_ok=True)
            self._store_lock = _lock_store(settings.local_path)
        conn: Any = AsyncSurreal(settings.url)
        try:
            await conn.connect()
            # Embedded engines have no users: signing in there always fails.
            if not settings.embedded and settings.username:
                await conn.signin({"username": settings.username, "password": settings.password})
            await conn.use(settings.namespace, settings.database)
        except _DRIVER_ERRORS as e:
            await _close_quietly(conn)
            _unlock_store(self._store_lock)
            self._store_lock = None
            raise DatabaseOperationError(f"cannot open the database at {settings.url}: {e}") from e
        self._conn = conn
        logger.debug("Opened the database at {}", settings.url)
        return self

    async def close(self) -> None:
        """Close the connection; later queries raise ``DatabaseOperationError``."""
        conn, self._conn, self._closed = self._conn, None, True
        if conn is not None:
            await _close_quietly(conn)
            logger.debug("Closed the database at {}", self.settings.url)
        _unlock_store(self._store_lock)
        self._store_lock = None

    async def __aenter__(self) -> Database:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def query_all(self, sql: str, params: dict[str, Any] | None = None) -> list[Any]:
        """Run one request of one or more statements; the result of each.

        Raises ``DatabaseOperationError`` if the database is closed or any
        statement failed (with the failing statement's message, not the
        "transaction failed" notices of the statements after it).
        """
        if self._conn is None:
            state = "closed" if self._closed else "not open"
            raise DatabaseOperationError(f"the database is {state}")
        params = params or {}
        engine = self._engine()
        try:
            if engine is not None:
                # The SDK's own request and response, encoded and decoded
                # faster (``encoded``): the same bytes and the same values.
                data = await engine.execute(query_request(sql, params).WS_CBOR_DESCRIPTOR)
                response = decode_value(bytes(data))
            elif has_encoded(params):
                response = await self._conn._send(query_request(sql, params), "query", bypass=True)
            else:
                response = await self._conn.query_raw(sql, params)
        except _DRIVER_ERRORS as e:
            raise DatabaseOperationError(f"query failed: {e}") from e
        except BaseException as e:
            if _is_panic(e):
                raise DatabaseOperationError(
                    f"the database engine (the surrealdb package's native module) panicked: "
                    f"{' '.join(str(e).split())}; the query was not run"
                ) from e
            raise
        if response.get("error") is not None:
            error = response["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            raise DatabaseOperationError(f"query failed: {message}")
        statements = response.get("result")
        if not isinstance(statements, list):
            raise DatabaseOperationError(f"unexpected response from the database: {response!r}")
        errors = [str(s.get("result")) for s in statements if s.get("status") == "ERR"]
        if errors:
            first = next((e for e in errors if _ABORTED not in e), errors[0])
            raise DatabaseOperationError(f"query failed: {first}")
        return [s.get("result") for s in statements]

    def _engine(self) -> Any:
        """The embedded engine that executes the SDK's CBOR requests, or
        None for a connection to a server."""
        engine: Any = getattr(self._conn, "_db", None)
        if not self.settings.embedded or not hasattr(engine, "execute"):
            return None
        return engine

    async def query_response_bytes(
        self, sql: str, params: dict[str, Any] | None = None
    ) -> bytes | None:
        """The engine's CBOR response to one request, undecoded, for a reader
        that decodes it faster than the SDK (``vector_cache``); None when the
        connection is not to an embedded engine (then use ``query_all``)."""
        engine = self._engine()
        if engine is None:
            return None
        request = query_request(sql, params or {})
        try:
            data = await engine.execute(request.WS_CBOR_DESCRIPTOR)
        except _DRIVER_ERRORS as e:
            raise DatabaseOperationError(f"query failed: {e}") from e
        return bytes(data)

    async def query(self, sql: str, params: dict[str, Any] | None = None) -> Any:
        """Like ``query_all``; the result of the last statement."""
        results = await self.query_all(sql, params)
        return results[-1] if results else None


def _is_panic(error: BaseException) -> bool:
    """A Rust panic raised by a native module (pyo3's ``PanicException``,
    a ``BaseException`` that ``except Exception`` lets through)."""
    kind = type(error)
    return kind.__name__ == "PanicException" and kind.__module__ == "pyo3_runtime"


async def _close_quietly(conn: Any) -> None:
    try:
        await conn.close()
    except _DRIVER_ERRORS as e:
        logger.debug("Ignoring an error while closing the database: {}", e)


_current: Database | None = None
# One lock per event loop: applications (Open Notebook's source chat among
# them) run the builder in fresh loops, and an asyncio lock is bound to one.
_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


async def open_database(settings: DatabaseSettings | None = None) -> Database:
    """Open a database (from the environment by default) and, when its
    settings say so, bring its schema up to date. Does not make it current."""
    from fastnotebook.app.database.schema import migrate

    db = await Database(settings or DatabaseSettings.from_env()).open()
    if db.settings.migrate_on_open:
        try:
            await migrate(db)
        except BaseException:
            await db.close()
            raise
    return db


async def get_database() -> Database:
    """The current database, opened from the environment on first use."""
    global _current
    if _current is not None:
        return _current
    async with _locks.setdefault(asyncio.get_running_loop(), asyncio.Lock()):
        if _current is None:
            _current = await open_database()
        return _current


def set_database(db: Database | None) -> Database | None:
    """Make ``db`` the database that the repository functions use (None: the
    environment's, opened on next use). Returns the previous one, unclosed."""
    global _current
    previous, _current = _current, db
    return previous


async def close_database() -> None:
    """Close the current database; the next use opens the environment's again."""
    db = set_database(None)
    if db is not None:
        await db.close()


async def query_isolated(
    db: Database, sql: str, ids: Sequence[Any], params: dict[str, Any] | None = None
) -> tuple[list[Any], list[tuple[Any, str]]]:
    """Run ``sql``, a statement that reads ``FROM $ids``, over ``ids``; if it
    fails, run it again on halves until each failing record is alone.

    Returns the rows and, for each record that cannot be read on its own,
    (id, reason): one bad record (a string SurrealDB cannot send back, say)
    costs a few more queries instead of failing every record read with it."""
    rows: list[Any] = []
    failed: list[tuple[Any, str]] = []
    pending: list[list[Any]] = [list(ids)] if ids else []
    while pending:
        part = pending.pop()
        try:
            found = await db.query(sql, {**(params or {}), "ids": part})
        except DatabaseOperationError as e:
            if len(part) == 1:
                failed.append((part[0], str(e)))
            else:
                middle = len(part) // 2
                pending += [part[middle:], part[:middle]]
            continue
        rows.extend(found or [])
    return rows, failed
