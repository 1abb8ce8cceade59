"""The ``db`` fixture: a fresh in-memory database with the schema, made the
current one for the test (registered for every test by ``tests/conftest.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from fastnotebook.app.database import Database, DatabaseSettings, open_database, set_database


@pytest.fixture
async def db() -> AsyncIterator[Database]:
    """A fresh in-memory database with the schema, made current."""
    database = await open_database(DatabaseSettings("mem://", full_text_search=False))
    previous = set_database(database)
    yield database
    set_database(previous)
    await database.close()
