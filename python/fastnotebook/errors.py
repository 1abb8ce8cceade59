"""Every exception fastnotebook raises on purpose, in one place.

- From the Rust core (both ``ValueError`` subclasses): ``MarkupRejectedError``
  (the HTML parser gave up on the markup, as BeautifulSoup's
  ``ParserRejectedMarkup``) and ``UnsupportedTextError`` (a text the core
  cannot process as given).
- From the database, domain and context layers, named as in
  ``open_notebook.exceptions`` so that code catching those keeps working:
  callers can tell "your input is wrong" (``InvalidInputError``), "no such
  record" (``NotFoundError``) and "the database failed"
  (``DatabaseOperationError``) apart; the HTTP API maps them to 422, 404 and 500.

Invalid arguments to the drop-in functions raise plain ``ValueError`` or
``TypeError``, as the original's do.
"""

from __future__ import annotations

from fastnotebook._core import MarkupRejectedError, UnsupportedTextError

__all__ = [
    "ConfigurationError",
    "DatabaseOperationError",
    "InvalidInputError",
    "MarkupRejectedError",
    "NotFoundError",
    "NoteParseError",
    "OpenNotebookError",
    "ProviderHTTPError",
    "UnsupportedTextError",
]


class OpenNotebookError(Exception):
    """Base class of every error raised on purpose by fastnotebook's data layers."""


class DatabaseOperationError(OpenNotebookError):
    """The database could not run an operation: closed, unreachable, or a query failed."""


class InvalidInputError(OpenNotebookError):
    """An argument is malformed: an empty or unparsable record id, an id of the
    wrong table, an empty search keyword."""


class NotFoundError(OpenNotebookError):
    """A record that was asked for by id does not exist."""


class ConfigurationError(OpenNotebookError):
    """The database settings (environment or code) cannot be used."""


class ProviderHTTPError(Exception):
    """An embedding provider answered an HTTP request with an error status:
    ``status``, the provider's message, and ``retry_after`` (seconds, from
    the ``Retry-After`` header, or None)."""

    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.retry_after = retry_after


class NoteParseError(InvalidInputError):
    """One note of a vault cannot be read: not UTF-8, or its YAML front matter is
    malformed. ``path`` is the note's path relative to the vault."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message
