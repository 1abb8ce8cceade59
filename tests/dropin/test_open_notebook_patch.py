"""``fastnotebook patch-open-notebook``: swaps exactly the six modules, keeps
the originals and restores them, refuses trees it does not know."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fastnotebook.app.cli import main
from fastnotebook.open_notebook import MODULES, patch
from helpers.install import WITHOUT_APP
from helpers.open_notebook import open_notebook_src

SIX = [f"open_notebook/utils/{name}.py" for name in MODULES]
#: The application's packages (the `app` extra), as tests/core/test_install.py lists them.


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` (bytecode caches aside) -> its SHA-256."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small Open Notebook-shaped tree whose six modules are registered as
    known originals for the test."""
    root = tmp_path / "open-notebook"
    utils = root / "open_notebook" / "utils"
    utils.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "open-notebook"\n')
    (root / "open_notebook" / "__init__.py").write_text("")
    (root / "open_notebook" / "config.py").write_text('TIKTOKEN_CACHE_DIR = "app-cache"\n')
    (utils / "__init__.py").write_text("# the package's own\n")
    (utils / "encryption.py").write_text("SECRET = 1\n")
    known = {}
    for name in MODULES:
        data = f'"""original {name}"""\r\nVALUE = "{name}"\r\n'.encode()
        (utils / f"{name}.py").write_bytes(data)
        # Known by their content with LF line ends: a CRLF checkout is the same file.
        digest = hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()
        known[name] = {digest: "synthetic"}
    monkeypatch.setattr(patch, "KNOWN_ORIGINALS", known)
    return root


def test_patch_swaps_the_six_and_undo_restores_them(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(tree)
    assert patch.run(tree) == 0
    assert (
        "swapped in fastnotebook.open_notebook for chunking, token_utils" in capsys.readouterr().out
    )
    after = snapshot(tree)
    backup = f"open_notebook/utils/{patch.BACKUP_DIR}"
    changed = {p for p in after if before.get(p) != after[p]}
    assert changed == set(SIX) | {f"{backup}/{n}.py.orig" for n in MODULES} | {
        f"{backup}/manifest.json"
    }
    for name in MODULES:
        text = (tree / "open_notebook" / "utils" / f"{name}.py").read_text()
        assert text == patch.alias_source(name)
        assert (
            "import sys, importlib; sys.modules[__name__] = importlib.import_module("
            f'"fastnotebook.open_notebook.{name}")'
        ) in text
        saved = tree / backup / f"{name}.py.orig"
        assert saved.read_bytes() == f'"""original {name}"""\r\nVALUE = "{name}"\r\n'.encode()

    assert patch.run(tree) == 0
    assert "already patched" in capsys.readouterr().out
    assert snapshot(tree) == after

    assert patch.run(tree, undo=True) == 0
    assert "restored the originals of chunking" in capsys.readouterr().out
    assert snapshot(tree) == before
    assert not (tree / backup).exists()
    assert patch.run(tree, undo=True) == 0
    assert "nothing to undo" in capsys.readouterr().out


def test_the_swapped_modules_are_fastnotebooks(tree: Path) -> None:
    assert patch.run(tree) == 0
    probe = (
        "import importlib\n"
        "from unittest import mock\n"
        f"for name in {list(MODULES)!r}:\n"
        "    m = importlib.import_module('open_notebook.utils.' + name)\n"
        "    assert m.__name__ == 'fastnotebook.open_notebook.' + name, m\n"
        "from open_notebook.utils.chunking import CHUNK_SIZE, chunk_text\n"
        "import fastnotebook.open_notebook.embedding as e\n"
        "with mock.patch('open_notebook.utils.embedding.EMBEDDING_RETRY_DELAY', 0):\n"
        "    assert e.EMBEDDING_RETRY_DELAY == 0\n"
        "import os\n"
        "print(CHUNK_SIZE, len(chunk_text('word ' * 1000)), os.environ['TIKTOKEN_CACHE_DIR'])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tree)}
    for var in ("OPEN_NOTEBOOK_CHUNK_SIZE", "OPEN_NOTEBOOK_CHUNK_OVERLAP", "TIKTOKEN_CACHE_DIR"):
        env.pop(var, None)
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tree, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    # As the original, the token module points tiktoken at the app's cache.
    assert done.stdout.split() == ["400", "3", "app-cache"]


def test_refuses_a_folder_that_is_not_open_notebook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "project" / "src").mkdir(parents=True)
    assert patch.run(tmp_path / "project") == 2
    err = capsys.readouterr().err
    assert "will not patch" in err
    assert "not an Open Notebook tree" in err
    assert patch.run(tmp_path / "absent") == 2
    assert "not a folder" in capsys.readouterr().err


def test_refuses_unknown_or_missing_modules_writing_nothing(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    utils = tree / "open_notebook" / "utils"
    with (utils / "chunking.py").open("a") as f:
        f.write("CHUNK_SIZE = 1000\n")
    (utils / "text_utils.py").unlink()
    before = snapshot(tree)
    assert patch.run(tree) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("fastnotebook patch-open-notebook: will not patch")
    assert any(
        "open_notebook/utils/chunking.py: sha256" in line
        and "is not a version fastnotebook.open_notebook.chunking mirrors" in line
        for line in lines
    ), lines
    assert "  open_notebook/utils/text_utils.py: missing" in lines
    assert len(lines) == 3
    assert snapshot(tree) == before


def test_undo_refuses_a_changed_backup(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert patch.run(tree) == 0
    saved = tree / "open_notebook" / "utils" / patch.BACKUP_DIR / "embedding.py.orig"
    saved.write_text("tampered\n")
    before = snapshot(tree)
    assert patch.run(tree, undo=True) == 2
    assert "embedding.py.orig: changed since it was saved" in capsys.readouterr().err
    assert snapshot(tree) == before
    saved.unlink()
    assert patch.run(tree, undo=True) == 2
    assert "embedding.py.orig: missing" in capsys.readouterr().err


def test_a_swapped_module_without_its_backup_is_refused(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    utils = tree / "open_notebook" / "utils"
    (utils / "chunking.py").write_text(patch.alias_source("chunking"))
    assert patch.run(tree) == 2
    assert "already swapped (originals unknown)" in capsys.readouterr().err


def test_the_package_folder_itself_is_accepted(tree: Path) -> None:
    assert patch.run(tree / "open_notebook") == 0
    assert patch.run(tree / "open_notebook", undo=True) == 0


def test_command_line(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["patch-open-notebook", str(tree)]) == 0
    assert "swapped in" in capsys.readouterr().out
    assert main(["patch-open-notebook", str(tree), "--undo"]) == 0
    assert "restored" in capsys.readouterr().out
    assert main(["patch-open-notebook", str(tree.parent / "nowhere")]) == 2


def test_the_checkout_is_patched_and_restored_exactly(tmp_path: Path) -> None:
    src = open_notebook_src()
    copy = tmp_path / "checkout"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns(".git", "node_modules", ".venv"))
    before = snapshot(copy)
    assert patch.run(copy) == 0, "the checkout's modules are not the versions mirrored"
    after = snapshot(copy)
    changed = {p for p in after if before.get(p) != after[p]}
    assert {p for p in changed if not p.startswith(f"open_notebook/utils/{patch.BACKUP_DIR}/")} == (
        set(SIX)
    )
    assert patch.run(copy, undo=True) == 0
    assert snapshot(copy) == before


def test_runs_as_a_module_without_the_application_packages(tree: Path) -> None:
    """``python -m fastnotebook.open_notebook.patch`` in an install without the
    ``app`` extra (every application package failing to import), and the six
    modules importing there."""
    script = WITHOUT_APP + textwrap.dedent(
        f"""
        import importlib, runpy, sys
        for name in {list(MODULES)!r}:
            importlib.import_module("fastnotebook.open_notebook." + name)
        from fastnotebook.open_notebook import patch
        sys.argv = ["patch", "--help"]
        try:
            runpy.run_module("fastnotebook.open_notebook.patch", run_name="__main__")
        except SystemExit as e:
            print("help exit", e.code)
        patch.KNOWN_ORIGINALS = {patch.KNOWN_ORIGINALS!r}
        print("exit", patch.main([{str(tree)!r}]))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "usage: python -m fastnotebook.open_notebook.patch" in done.stdout
    assert "help exit 0" in done.stdout
    assert done.stdout.splitlines()[-1] == "exit 0", done.stdout
    assert "swapped in fastnotebook.open_notebook" in done.stdout
    assert (tree / "open_notebook" / "utils" / "chunking.py").read_text() == patch.alias_source(
        "chunking"
    )
