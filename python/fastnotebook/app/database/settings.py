"""Where the database is and how to reach it.

With no ``SURREAL_URL`` the database is embedded: SurrealDB runs inside this
process and keeps its files under the data directory, so nothing has to be
installed or started. ``SURREAL_URL`` (``ws://``, ``wss://``, ``http://``,
``https://``) selects a server instead, with the same variables as Open
Notebook: ``SURREAL_USER``, ``SURREAL_PASSWORD`` (or ``SURREAL_PASS``),
``SURREAL_NAMESPACE``, ``SURREAL_DATABASE``. An embedded URL (``mem://``,
``surrealkv://path``, ``file://path``) in ``SURREAL_URL`` is used as given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fastnotebook.app.database.location import (
    EMBEDDED_SCHEMES,
    database_url,
    default_data_dir,
    embedded_url,
    local_path,
    scheme,
)
from fastnotebook.errors import ConfigurationError

__all__ = ["EMBEDDED_SCHEMES", "DatabaseSettings", "default_data_dir"]

AUTO_MIGRATE_ENV = "FASTNOTEBOOK_AUTO_MIGRATE"
FULL_TEXT_ENV = "FASTNOTEBOOK_FULL_TEXT_SEARCH"
SERVER_SCHEMES = ("ws", "wss", "http", "https")
DEFAULT_NAMESPACE = "open_notebook"
DEFAULT_DATABASE = "open_notebook"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ConfigurationError(f"{name}={raw!r}: use one of {', '.join(_TRUE + _FALSE)}")


@dataclass(frozen=True)
class DatabaseSettings:
    """Connection settings. ``auto_migrate`` applies fastnotebook's schema on
    open (default: only for embedded databases, whose schema nobody else
    manages); ``full_text_search`` adds the BM25 indexes that ``text_search``
    needs. Off by default: the engine spends about 11 ms on every chunk it
    indexes, some 35 times the write without them (docs/performance.md, "The
    write path"), for a search that only the Python API offers. Turned on
    for a store that has text, it indexes every row at open; indexes a store
    has stay, and every write keeps them current."""

    url: str
    namespace: str = DEFAULT_NAMESPACE
    database: str = DEFAULT_DATABASE
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    auto_migrate: bool | None = None
    full_text_search: bool = False

    def __post_init__(self) -> None:
        scheme = self.scheme
        if scheme not in EMBEDDED_SCHEMES + SERVER_SCHEMES:
            raise ConfigurationError(
                f"unsupported database URL {self.url!r}: the scheme must be one of "
                f"{', '.join(EMBEDDED_SCHEMES + SERVER_SCHEMES)}"
            )
        if not self.namespace or not self.database:
            raise ConfigurationError("the database namespace and name must not be empty")

    @property
    def scheme(self) -> str:
        return scheme(self.url)

    @property
    def embedded(self) -> bool:
        """True when SurrealDB runs inside this process (no server, no sign-in)."""
        return self.scheme in EMBEDDED_SCHEMES

    @property
    def migrate_on_open(self) -> bool:
        return self.embedded if self.auto_migrate is None else self.auto_migrate

    @property
    def local_path(self) -> Path | None:
        """The folder of an on-disk embedded database, else None."""
        return local_path(self.url)

    @staticmethod
    def embedded_url(data_dir: Path | str) -> str:
        """The URL of an embedded, on-disk (SurrealKV) database in ``data_dir/surrealdb``."""
        return embedded_url(data_dir)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> DatabaseSettings:
        """The settings the environment selects (see the module docstring)."""
        env = os.environ if env is None else env
        url = env.get("SURREAL_URL", "").strip()
        auto = env.get(AUTO_MIGRATE_ENV, "").strip()
        return cls(
            url=database_url(env),
            namespace=env.get("SURREAL_NAMESPACE", "").strip() or DEFAULT_NAMESPACE,
            database=env.get("SURREAL_DATABASE", "").strip() or DEFAULT_DATABASE,
            username=(env.get("SURREAL_USER") or None) if url else None,
            password=(env.get("SURREAL_PASSWORD") or env.get("SURREAL_PASS") or None)
            if url
            else None,
            auto_migrate=_flag(env, AUTO_MIGRATE_ENV, False) if auto else None,
            full_text_search=_flag(env, FULL_TEXT_ENV, False),
        )
