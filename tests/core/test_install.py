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


def lean_cli(*args: str, blocked: str = "") -> subprocess.CompletedProcess[str]:
    """The command line as installed without the app extra (and ``blocked``,
    more top-level modules that are not installed)."""
    prelude = WITHOUT_APP
    if blocked:
        prelude = prelude.replace(
            "if name.split", f"if name.split('.')[0] in {blocked.split(',')!r} or name.split"
        )
    script = prelude + textwrap.dedent(
        """
        from fastnotebook.app.cli import main
        sys.exit(main(sys.argv[1:]))
        """
    )
    return subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120
    )


def every_command() -> list[list[str]]:
    """Each command and sub-command of the full command line."""
    import argparse

    from fastnotebook.app.cli import build_parser

    def walk(parser: argparse.ArgumentParser, prefix: list[str]) -> list[list[str]]:
        found = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found.append([*prefix, name])
                    found += walk(sub, [*prefix, name])
        return found

    return walk(build_parser(), [])


def test_help_of_every_command_works_without_the_app_extra_and_names_it() -> None:
    commands = every_command()
    assert ["notes", "import"] in commands and ["sources", "list"] in commands
    for command in [[], *commands]:
        helped = lean_cli(*command, "--help")
        assert (helped.returncode, helped.stderr) == (0, ""), (command, helped.stderr)
        assert helped.stdout.startswith("usage: fastnotebook"), command
        if command and command[0] in ("ingest", "embed", "search", "sources", "notes", "demo"):
            assert "pip install 'fastnotebook[app]'" in " ".join(helped.stdout.split()), command
    # Any other arguments: the one line that names the extra.
    run = lean_cli("notes", "import", "--no-embed", "vault")
    assert run.returncode == 1
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("fastnotebook notes: this command needs the app extra (")
    assert line.endswith(" is not installed): pip install 'fastnotebook[app]'")
    # A command that is there still refuses what it does not know.
    wrong = lean_cli("chunk", "--nonsense", "x")
    assert wrong.returncode == 2 and "unrecognized arguments: --nonsense" in wrong.stderr


def test_bench_names_the_extra_it_needs() -> None:
    run = lean_cli("bench", "--max-documents", "1", blocked="langchain_text_splitters")
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        "fastnotebook bench: needs langchain_text_splitters: pip install 'fastnotebook[reference]'"
    ]
    both = lean_cli("bench", blocked="langchain_text_splitters,matplotlib")
    assert both.stderr.strip().splitlines() == [
        "fastnotebook bench: needs langchain_text_splitters and matplotlib: "
        "pip install 'fastnotebook[reference,bench]'"
    ]


def test_the_demo_samples_are_package_data() -> None:
    """``fastnotebook demo`` ingests ``demo_samples`` when installed: the files
    are inside the package folder (maturin puts every file of
    ``python/fastnotebook`` in the wheel), tracked, not excluded, and equal to
    their originals under ``samples/`` (scripts/build_samples.py copies them)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "build_samples", ROOT / "scripts/build_samples.py"
    )
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    packaged = ROOT / "python/fastnotebook/app/cli/demo_samples"
    assert packaged == build.PACKAGED
    shipped = sorted(p.relative_to(packaged).as_posix() for p in packaged.rglob("*") if p.is_file())
    assert shipped == sorted(build.PACKAGED_FILES)
    for name in shipped:
        assert (packaged / name).read_bytes() == (ROOT / "samples" / name).read_bytes(), name
    assert sum((packaged / name).stat().st_size for name in shipped) < 400_000  # a small set
    tracked = subprocess.run(
        ["git", "ls-files", str(packaged)], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert len(tracked) == len(shipped)
    maturin = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["maturin"]
    assert maturin["python-source"] == "python"
    assert not maturin.get("exclude") and not maturin.get("include")
