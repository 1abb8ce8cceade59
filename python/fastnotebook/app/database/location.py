"""Which database the environment names, and the folder of an on-disk one.

The rules of ``DatabaseSettings`` (``settings``) that need no validation:
``fastnotebook search`` finds the process that holds the database
(``holder``) with these alone, before anything else is imported.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

TYPE_CHECKING = False  # as typing's, without importing it

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "DATA_DIR_ENV",
    "EMBEDDED_SCHEMES",
    "database_url",
    "default_data_dir",
    "embedded_url",
    "local_path",
    "scheme",
]

DATA_DIR_ENV = "FASTNOTEBOOK_DATA_DIR"
EMBEDDED_SCHEMES = ("mem", "memory", "surrealkv", "surrealkv+versioned", "file")
_IN_MEMORY = ("mem", "memory")


def default_data_dir(env: Mapping[str, str] | None = None) -> Path:
    """``FASTNOTEBOOK_DATA_DIR``, else the platform's per-user data folder."""
    env = os.environ if env is None else env
    if env.get(DATA_DIR_ENV, "").strip():
        return Path(env[DATA_DIR_ENV].strip()).expanduser()
    if sys.platform == "win32":
        base = Path(env.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "fastnotebook"


def embedded_url(data_dir: Path | str) -> str:
    """The URL of an embedded, on-disk (SurrealKV) database in ``data_dir/surrealdb``."""
    return f"surrealkv://{Path(data_dir).expanduser().resolve() / 'surrealdb'}"


def database_url(env: Mapping[str, str] | None = None) -> str:
    """``SURREAL_URL``, else the embedded database in the data folder."""
    env = os.environ if env is None else env
    return env.get("SURREAL_URL", "").strip() or embedded_url(default_data_dir(env))


def scheme(url: str) -> str:
    return url.split("://", 1)[0].lower() if "://" in url else ""


def local_path(url: str) -> Path | None:
    """The folder of an on-disk embedded database, else None."""
    if scheme(url) not in EMBEDDED_SCHEMES or scheme(url) in _IN_MEMORY:
        return None
    return Path(url.split("://", 1)[1])
