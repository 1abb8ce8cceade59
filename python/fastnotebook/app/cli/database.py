"""``run_db``: what every command that opens the database shares. It opens
the database, makes it current for the command's work and closes it (the
commands' options: ``fastnotebook.app.cli.options``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from fastnotebook.app.cli.errors import require_database, require_folder
from fastnotebook.app.database import Database, DatabaseSettings, open_database, set_database

__all__ = ["run_db", "with_database"]


async def with_database(
    work: Callable[[Database], Awaitable[int]],
    settings: DatabaseSettings | None = None,
    create: bool = True,
) -> int:
    """Open the database (the environment's unless ``settings``), make it
    current for ``work``, close it afterwards. Unless ``create``, a missing
    on-disk database is a ``CliError`` (nothing is created)."""
    settings = settings or DatabaseSettings.from_env()
    require_folder(settings)
    if not create:
        require_database(settings)
    db = await open_database(settings)
    previous = set_database(db)
    try:
        return await work(db)
    finally:
        set_database(previous)
        await db.close()


def run_db(
    work: Callable[[Database], Awaitable[int]],
    settings: DatabaseSettings | None = None,
    create: bool = True,
) -> int:
    """``with_database`` in a new event loop: a command's exit code."""
    return asyncio.run(with_database(work, settings, create=create))
