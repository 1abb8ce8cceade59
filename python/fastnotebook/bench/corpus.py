"""The documents a benchmark runs on.

``load(folder)`` reads any folder of ``.html``/``.htm``, ``.md``/``.markdown``
and ``.txt`` files (subfolders included). Without a folder, ``default()`` uses
the shared corpus next to the repository when it exists, else builds one from
what every Python installation carries: pydoc's HTML and plain-text
documentation of standard-library modules, and the Markdown files of this
repository and of installed packages' metadata. Nothing is downloaded.
"""

from __future__ import annotations

import importlib
import io
import os
import pydoc
from contextlib import redirect_stderr
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

KINDS = ("html", "markdown", "plain")
_SUFFIXES = {
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "plain",
}
SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "corpus"
STDLIB_MODULES = (
    "argparse",
    "asyncio.tasks",
    "collections",
    "configparser",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "email.message",
    "enum",
    "functools",
    "http.client",
    "inspect",
    "itertools",
    "json",
    "logging",
    "os",
    "pathlib",
    "pickle",
    "re",
    "shutil",
    "socket",
    "sqlite3",
    "statistics",
    "string",
    "subprocess",
    "tarfile",
    "threading",
    "typing",
    "unittest",
    "urllib.parse",
    "zipfile",
)


@dataclass
class Document:
    path: str
    kind: str
    text: str

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8", "surrogatepass"))


@dataclass
class Corpus:
    name: str
    documents: list[Document] = field(default_factory=list)

    def by_kind(self, kind: str) -> list[Document]:
        return [d for d in self.documents if d.kind == kind]


def load(folder: Path) -> Corpus:
    """Every .html/.md/.txt file under ``folder``."""
    if not folder.is_dir():
        raise FileNotFoundError(f"corpus folder not found: {folder}")
    docs = []
    for path in sorted(folder.rglob("*")):
        kind = _SUFFIXES.get(path.suffix.lower())
        if kind and path.is_file():
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
            docs.append(Document(str(path), kind, text))
    if not docs:
        raise ValueError(f"no .html, .md or .txt files under {folder}")
    return Corpus(str(folder), docs)


def built() -> Corpus:
    """A corpus built from this Python installation and this repository."""
    docs: list[Document] = []
    html, text = pydoc.HTMLDoc(), pydoc.TextDoc()
    for name in STDLIB_MODULES:
        try:
            with redirect_stderr(io.StringIO()):
                module = importlib.import_module(name)
        except ImportError:
            continue
        page = html.page(name, html.document(module))
        docs.append(Document(f"pydoc:{name}.html", "html", page))
        plain = pydoc.plain(text.document(module))
        docs.append(Document(f"pydoc:{name}.txt", "plain", plain))
    repo = Path(__file__).resolve().parents[3]
    for path in sorted(repo.glob("*.md")) + sorted((repo / "docs").glob("*.md")):
        docs.append(Document(str(path), "markdown", path.read_text(encoding="utf-8")))
    for dist in sorted(metadata.distributions(), key=lambda d: d.metadata["Name"] or ""):
        fields: Any = dist.metadata  # an email.message.Message underneath
        content_type = fields.get("Description-Content-Type") or ""
        body = fields.get_payload()
        if "markdown" in content_type and isinstance(body, str) and len(body) > 2000:
            docs.append(Document(f"pypi:{dist.metadata['Name']}.md", "markdown", body))
    return Corpus("built from pydoc, repository and package metadata", docs)


def default() -> Corpus:
    """The shared corpus when present (``FASTNOTEBOOK_CORPUS`` may name
    another), else the built one."""
    named = os.environ.get("FASTNOTEBOOK_CORPUS")
    folder = Path(named) if named else SHARED
    return load(folder) if folder.is_dir() else built()
