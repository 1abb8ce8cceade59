"""The import graph of ``python/fastnotebook`` keeps the layers of
docs/ARCHITECTURE.md: no circle, no import from the library into the app,
and the drawing in the document is the one the graph gives."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent
while not (ROOT / "pyproject.toml").is_file():
    ROOT = ROOT.parent


def _script() -> ModuleType:
    name = "gen_architecture"
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gen = _script()


def test_no_module_imports_itself_through_others() -> None:
    assert gen.circles(gen.import_graph()) == []


def test_the_library_never_imports_the_app() -> None:
    found = [
        f"{i.source} (line {i.line}) -> {i.target}" for i in gen.upward_imports(gen.import_graph())
    ]
    assert found == []


def test_the_drawing_is_current() -> None:
    document = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert document == gen.render(document, gen.import_graph()), (
        "docs/ARCHITECTURE.md: run python scripts/gen_architecture.py"
    )


def _package(root: Path, files: dict[str, str]) -> Path:
    package = root / "fastnotebook"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return package


def test_a_circle_and_an_upward_import_are_found(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from fastnotebook import b\n",
            "b.py": "def f():\n    from fastnotebook.a import x\n",
            "c.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    import fastnotebook.d\n",
            "d.py": "from . import c\n",
            "lib.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from fastnotebook.app.db import Db\n",
            "app/__init__.py": "",
            "app/db.py": "from fastnotebook import lib\n",
        },
    )
    graph = gen.import_graph(package)
    # The import inside a function counts; the one under TYPE_CHECKING does not.
    assert gen.circles(graph) == [["fastnotebook.a", "fastnotebook.b"]]
    # A type-only import still puts the library above the app.
    assert [(i.source, i.target) for i in gen.upward_imports(graph)] == [
        ("fastnotebook.lib", "fastnotebook.app.db")
    ]
    assert "fastnotebook_app --> fastnotebook" in gen.drawing(graph)


def test_a_module_importing_its_own_package_is_no_circle(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "from fastnotebook.x import y\n",
            "x.py": "from fastnotebook import _core\nimport fastnotebook\ny = 1\n",
        },
    )
    assert gen.circles(gen.import_graph(package)) == []
