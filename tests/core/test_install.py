"""The install is thin: ``pip install fastnotebook`` brings what the drop-in
modules need and nothing of the application stack, and the drop-in modules
work without it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

from helpers.corpus import ROOT
from helpers.install import WITHOUT_APP

# pyyaml is required (fastnotebook.notes reads front matter with it), not app-only.
APP_DISTRIBUTIONS = {"surrealdb", "fastapi", "uvicorn", "aiohttp", "websockets"}


def requirement_name(requirement: str) -> str:
    for stop in "<>=!~[;( ":
        requirement = requirement.split(stop)[0]
    return requirement.strip().lower()


def test_the_required_dependencies_leave_out_the_application() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    required = {requirement_name(r) for r in project["dependencies"]}
    assert not required & APP_DISTRIBUTIONS, required & APP_DISTRIBUTIONS
    app = {requirement_name(r) for r in project["optional-dependencies"]["app"]}
    assert app >= APP_DISTRIBUTIONS


def test_the_drop_in_modules_work_without_the_application_packages() -> None:
    """In a fresh interpreter where importing any application package fails,
    as it does in an install without the `app` extra."""
    script = WITHOUT_APP + textwrap.dedent(
        """
        import asyncio

        import numpy as np
        from fastnotebook import (
            chunk_text, clean_thinking_content, compare_versions, mean_pool_embeddings,
            token_count,
        )
        from fastnotebook.context_builder import ContextBuilder, ContextItem

        assert chunk_text("# A\\n\\n" + "word " * 500, file_path="a.md")
        assert token_count("hello world") == 2
        assert clean_thinking_content("<think>x</think>answer") == "answer"
        assert compare_versions("1.0.0", "1.0.1") == -1
        pooled = asyncio.run(mean_pool_embeddings([[1.0, 0.0], [0.0, 1.0]]))
        assert np.allclose(pooled, [2 ** -0.5, 2 ** -0.5])

        builder = ContextBuilder(max_tokens=100)
        builder.add_item(ContextItem(id="note:1", type="note", content={"text": "hi"}))
        builder.add_item(ContextItem(id="note:2", type="note", content={"text": "x" * 900}))
        builder.prioritize()
        builder.truncate_to_fit(100)
        assert [item.id for item in builder.items] == ["note:1"]
        try:
            asyncio.run(ContextBuilder(notebook_id="notebook:1").build())
        except ImportError as e:
            assert "pip install 'fastnotebook[app]'" in str(e), e
        else:
            raise AssertionError("a notebook was loaded without a database")
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_note_vaults_work_without_the_application_packages() -> None:
    """fastnotebook.notes needs only the required dependencies (PyYAML)."""
    script = WITHOUT_APP + textwrap.dedent(
        """
        from fastnotebook.notes import body_from_chunks, chunk_note, parse_note

        note = parse_note("a.md", "---\\ntitle: T\\n---\\n# A\\n\\nSee [[B]].\\n")
        assert note.title == "T" and [link.target for link in note.links] == ["B"]
        assert body_from_chunks(chunk_note(note)) == note.body
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_command_line_without_the_application_packages(tmp_path: Path) -> None:
    """Without the app extra, the file commands work and the database commands
    say, in one line, which extra to install."""
    text = tmp_path / "note.md"
    text.write_text("# Title\n\n" + "Some words here. " * 200)
    script = WITHOUT_APP + textwrap.dedent(
        """
        from fastnotebook.app.cli import main
        sys.exit(main(sys.argv[1:]))
        """
    )

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120
        )

    chunked = cli("chunk", str(text), "--size", "300")
    assert chunked.returncode == 0, chunked.stderr
    assert "chunks" in chunked.stdout
    for command in (["search", "query"], ["ingest", str(text)], ["sources", "list"], ["serve"]):
        done = cli(*command)
        assert done.returncode == 1, (command, done.stderr)
        assert done.stderr.strip().splitlines() == [
            f"fastnotebook {command[0]}: this command needs the app extra "
            f"({done.stderr.split('(')[1].split(' ')[0]} is not installed): "
            "pip install 'fastnotebook[app]'"
        ], done.stderr
    assert cli("--version").stdout.startswith("fastnotebook ")
