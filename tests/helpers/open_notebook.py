"""Shared by the tests of ``fastnotebook.open_notebook``: a stand-in Open
Notebook application written to disk, and the real checkout when one is given
(``FASTNOTEBOOK_OPEN_NOTEBOOK_SRC``)."""

from __future__ import annotations

import ast
import os
import sys
import textwrap
from pathlib import Path

import pytest

SRC_ENV = "FASTNOTEBOOK_OPEN_NOTEBOOK_SRC"

#: A minimal ``open_notebook`` package: the names the mirrored modules take
#: from the application, with records kept in class-level dicts.
FAKE_APP: dict[str, str] = {
    "open_notebook/__init__.py": "",
    "open_notebook/config.py": """
        import os
        TIKTOKEN_CACHE_DIR = os.environ.get("TIKTOKEN_CACHE_DIR", "").strip() or "fake-cache"
    """,
    "open_notebook/exceptions.py": """
        class OpenNotebookError(Exception): ...
        class DatabaseOperationError(OpenNotebookError): ...
        class NotFoundError(OpenNotebookError): ...
    """,
    "open_notebook/ai/__init__.py": "",
    "open_notebook/ai/models.py": """
        class ModelManager:
            model = None
            async def get_embedding_model(self):
                return self.model
        model_manager = ModelManager()
    """,
    "open_notebook/domain/__init__.py": "",
    "open_notebook/domain/notebook.py": """
        from open_notebook.exceptions import NotFoundError

        class Record:
            table = ""
            store = {}
            def __init__(self, id, **fields):
                self.id = id
                self.__dict__.update(fields)
            @classmethod
            async def get(cls, id):
                if id not in cls.store:
                    raise NotFoundError(f"{id} not found")
                return cls.store[id]

        class Source(Record):
            store = {}
            async def get_context(self, context_size="short", insights=None):
                context = {"id": self.id, "size": context_size}
                if insights is not None:
                    context["insights"] = [i.id for i in insights]
                return context
            async def get_insights(self):
                return list(getattr(self, "insights", []))

        class Note(Record):
            store = {}
            def get_context(self, context_size="short"):
                return {"id": self.id, "size": context_size, "content": self.content}

        class SourceInsight(Record):
            store = {}
            @classmethod
            async def get_for_sources(cls, ids):
                return {i: [x for x in cls.store.values() if x.source == i] for i in ids}

        class Notebook(Record):
            store = {}
            async def get_sources(self):
                return list(self.sources)
            async def get_notes(self):
                return list(self.notes)
    """,
}


def write_fake_app(root: Path) -> Path:
    for name, body in FAKE_APP.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return root


def forget_app_modules() -> None:
    for name in [n for n in sys.modules if n == "open_notebook" or n.startswith("open_notebook.")]:
        del sys.modules[name]


def open_notebook_src() -> Path:
    """The Open Notebook checkout named by ``FASTNOTEBOOK_OPEN_NOTEBOOK_SRC``,
    or a skip saying how to give one."""
    raw = os.environ.get(SRC_ENV)
    if not raw:
        pytest.skip(f"{SRC_ENV} is not set (a path to an Open Notebook checkout)")
    src = Path(raw)
    if not (src / "open_notebook" / "utils").is_dir():
        pytest.fail(f"{SRC_ENV}={raw} is not an Open Notebook checkout (no open_notebook/utils)")
    return src


def public_signatures(path: Path) -> dict[str, str | None]:
    """The public top-level names a module defines or imports from Open
    Notebook (``from .x``, ``from open_notebook.x``): for functions
    their parameters (names, kinds, defaults) as text, for others None."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: dict[str, str | None] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names[node.name] = _parameters(node.args)
        elif isinstance(node, ast.ClassDef):
            names[node.name] = None
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = None
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = None
        elif isinstance(node, ast.ImportFrom) and (
            node.level == 1 or (node.module or "").startswith("open_notebook")
        ):
            for alias in node.names:
                names[alias.asname or alias.name] = None
    return {n: s for n, s in names.items() if not n.startswith("_")}


def _parameters(args: ast.arguments) -> str:
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    parts = [
        a.arg + ("" if d is None else "=" + ast.unparse(d))
        for a, d in zip(positional, defaults, strict=True)
    ]
    if args.vararg:
        parts.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        parts.append("*")
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        parts.append(a.arg + ("" if d is None else "=" + ast.unparse(d)))
    if args.kwarg:
        parts.append("**" + args.kwarg.arg)
    return ", ".join(parts)
