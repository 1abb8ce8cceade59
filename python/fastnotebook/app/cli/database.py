"""What every command that opens the database shares: its options
(``--data-dir``, ``--quiet``), the data folder they choose, and ``run_db``,
which opens the database, makes it current for the command's work and
closes it."""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Awaitable, Callable

from fastnotebook.app.cli.errors import require_database, require_folder
from fastnotebook.app.database import Database, DatabaseSettings, open_database, set_database
from fastnotebook.app.database.settings import DATA_DIR_ENV

__all__ = ["database_options", "run_db", "use_data_dir", "with_database"]


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


def database_options() -> argparse.ArgumentParser:
    """The options of every command that opens the database (a parent parser)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir", help=f"database folder (default: ${DATA_DIR_ENV} or the user's)"
    )
    common.add_argument("-q", "--quiet", action="store_true", help="no progress or summary")
    return common


def use_data_dir(args: argparse.Namespace) -> None:
    """``--data-dir`` wins over ``FASTNOTEBOOK_DATA_DIR`` (and ``SURREAL_URL``)."""
    if args.data_dir:
        os.environ[DATA_DIR_ENV] = args.data_dir
        os.environ.pop("SURREAL_URL", None)
