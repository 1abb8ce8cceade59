"""Open Notebook's own test suite passes with fastnotebook swapped in: every
test that passes on the original passes on the patched copy
(``scripts/open_notebook_suite.py``)."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

from fastnotebook.open_notebook import MODULES, patch
from helpers.corpus import ROOT, tiktoken_reference
from helpers.open_notebook import open_notebook_src

PYTHON_ENV = "FASTNOTEBOOK_OPEN_NOTEBOOK_PYTHON"


def load_script() -> ModuleType:
    path = ROOT / "scripts" / "open_notebook_suite.py"
    spec = importlib.util.spec_from_file_location("open_notebook_suite", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


suite = load_script()


def test_the_release_suite_passes_swapped(tmp_path: Path) -> None:
    src = open_notebook_src()
    python = os.environ.get(PYTHON_ENV)
    if not python:
        pytest.skip(
            f"{PYTHON_ENV} is not set (an interpreter with Open Notebook's dependencies "
            "and fastnotebook installed)"
        )
    tiktoken_reference("o200k_base")
    result = suite.compare(src, python, tmp_path)
    assert result.original.get("passed", 0) > 0, result.summary()
    assert result.ok, result.summary()
    assert result.swapped.get("passed", 0) >= result.original["passed"], result.summary()


TEST_FILE = """
import open_notebook.utils.chunking as chunking
import open_notebook.utils.token_utils as token_utils


def test_passes_on_both():
    assert token_utils.token_count("hello world") == 2


def test_passes_only_on_the_original():
    assert getattr(chunking, "VALUE", None) == "chunking"


def test_fails_on_both():
    assert False, "broken upstream"
"""


@pytest.fixture
def small_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tiny Open Notebook-shaped checkout with its own tests/, its six
    modules registered as known originals."""
    root = tmp_path / "src"
    utils = root / "open_notebook" / "utils"
    utils.mkdir(parents=True)
    (root / "open_notebook" / "__init__.py").write_text("")
    (root / "open_notebook" / "config.py").write_text('TIKTOKEN_CACHE_DIR = "cache"\n')
    (utils / "__init__.py").write_text("")
    known = {}
    for name in MODULES:
        body = f'VALUE = "{name}"\n'
        if name == "token_utils":
            body += "def token_count(s):\n    return len(s.split())\n"
        (utils / f"{name}.py").write_text(body)
        known[name] = {hashlib.sha256(body.encode()).hexdigest(): "synthetic"}
    monkeypatch.setattr(patch, "KNOWN_ORIGINALS", known)
    (root / "tests").mkdir()
    (root / "tests" / "conftest.py").write_text(
        "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent.parent))\n"
    )
    (root / "tests" / "test_small.py").write_text(TEST_FILE)
    return root


def test_a_regression_names_the_test_and_the_module(small_checkout: Path, tmp_path: Path) -> None:
    tiktoken_reference("o200k_base")
    result = suite.compare(small_checkout, sys.executable, tmp_path / "work")
    assert result.original == {"passed": 2, "failed": 1}
    assert result.swapped == {"passed": 1, "failed": 2}
    assert not result.ok
    [regression] = result.regressions
    assert regression.test == "tests/test_small.py::test_passes_only_on_the_original"
    assert regression.outcome == "failed"
    assert regression.modules == ["open_notebook.utils.chunking", "open_notebook.utils.token_utils"]
    summary = result.summary()
    assert "REGRESSION tests/test_small.py::test_passes_only_on_the_original" in summary
    assert "original: 1 failed, 2 passed" in summary


def test_an_unknown_checkout_is_refused(small_checkout: Path, tmp_path: Path) -> None:
    tiktoken_reference("o200k_base")
    (small_checkout / "open_notebook" / "utils" / "embedding.py").write_text("CHANGED = 1\n")
    with pytest.raises(suite.SuiteError, match=r"embedding\.py: sha256"):
        suite.compare(small_checkout, sys.executable, tmp_path / "work")


def test_an_interpreter_without_the_dependencies_is_reported(
    small_checkout: Path, tmp_path: Path
) -> None:
    with pytest.raises(suite.SuiteError, match="cannot run the suite"):
        suite.compare(small_checkout, str(tmp_path / "no-python"), tmp_path / "work")
