"""The HTTP API: the context builder over HTTP.

- ``POST /chat/context``: body ``{"notebook_id", "context_config"}``;
  ``context_config`` has ``ContextConfig``'s fields.
- ``GET /notebooks/{notebook_id}/context``: everything in the notebook
  (sources with insights, notes in full), optionally within ``max_tokens``.
- ``POST /search``: body ``{"query", "k", "min_score", "mode"}``, the
  vector search of ``fastnotebook search``: ``{"hits", "paths", "vault"}``
  (``fastnotebook.app.answers``). ``fastnotebook search`` sends its query
  here while ``serve`` holds the database (``app.database.holder``).
- ``GET /health``: whether the database answers.

Both context endpoints return the builder's response as JSON. Errors are JSON
``{"detail": message}``: 422 for invalid input (with ``errors`` listing each
problem for body validation), 404 for an unknown notebook, 500 when the
database fails.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from loguru import logger

from fastnotebook.app.answers import search_answer
from fastnotebook.app.api.models import ContextRequest, SearchRequest
from fastnotebook.app.database.connection import (
    Database,
    get_database,
    open_database,
    set_database,
)
from fastnotebook.app.database.holder import announce, withdraw
from fastnotebook.app.domain.context import DatabaseRecords
from fastnotebook.context_builder import ContextBuilder
from fastnotebook.errors import DatabaseOperationError, InvalidInputError, NotFoundError

__all__ = ["create_app", "serve"]


def _readable(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts) or "invalid request"


def create_app(database: Database | None = None, address: str | None = None) -> FastAPI:
    """The API app. With ``database`` it serves that (open) database and
    leaves it open at shutdown; without, it opens the environment's database
    (``fastnotebook.app.database.settings``) at startup and closes it at
    shutdown, and with ``address`` (its URL) names itself beside an on-disk
    database as the process that holds it while it runs."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = database or await open_database()
        previous = set_database(db)
        named = announce(db.settings.url, address) if address and database is None else None
        try:
            yield
        finally:
            withdraw(named)
            set_database(previous)
            if database is None:
                await db.close()

    app = FastAPI(title="fastnotebook", lifespan=lifespan)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = jsonable_encoder(exc.errors(), custom_encoder={Exception: str})
        return JSONResponse({"detail": _readable(exc), "errors": errors}, status_code=422)

    @app.exception_handler(InvalidInputError)
    async def invalid_input(request: Request, exc: InvalidInputError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    @app.exception_handler(NotFoundError)
    async def not_found(request: Request, exc: NotFoundError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(DatabaseOperationError)
    async def database_failed(request: Request, exc: DatabaseOperationError) -> JSONResponse:
        logger.error("Database error on {}: {}", request.url.path, exc)
        return JSONResponse({"detail": f"database error: {exc}"}, status_code=500)

    @app.get("/health")
    async def health() -> dict[str, str]:
        db = await get_database()
        await db.query("RETURN true;")
        return {"status": "ok"}

    @app.post("/search")
    async def search(request: SearchRequest) -> dict[str, Any]:
        db = await get_database()
        return await search_answer(db, request.query, request.k, request.min_score, request.mode)

    @app.post("/chat/context")
    async def chat_context(request: ContextRequest) -> dict[str, Any]:
        config = request.context_config.to_config()
        builder = ContextBuilder(
            notebook_id=request.notebook_id, context_config=config, records=DatabaseRecords()
        )
        return await builder.build()

    @app.get("/notebooks/{notebook_id}/context")
    async def notebook_context(
        notebook_id: str,
        max_tokens: Annotated[int | None, Query(ge=1)] = None,
        include_insights: bool = True,
        include_notes: bool = True,
    ) -> dict[str, Any]:
        builder = ContextBuilder(
            notebook_id=notebook_id,
            records=DatabaseRecords(),
            max_tokens=max_tokens,
            include_insights=include_insights,
            include_notes=include_notes,
        )
        return await builder.build()

    return app


def serve(host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve the API with uvicorn until interrupted (the environment's database)."""
    import uvicorn

    # A client on this machine reaches a server on every address at loopback.
    reachable = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
    if ":" in reachable:
        reachable = f"[{reachable}]"
    address = f"http://{reachable}:{port}"
    uvicorn.run(create_app(address=address), host=host, port=port, log_level="info")
