"""Every command line documented in docs/cli.md runs: the ``fastnotebook``
lines of its ``sh`` blocks, in order, against a new database and data
folder, with files at the paths they name, so the page cannot drift from
the program. A block whose fence follows ``<!-- skip-test: ... -->`` (one
that needs another server) is left out; ``serve`` is started and must answer
HTTP, then stopped. The zero-cost fake model stands in for the configured one."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from helpers.cli import FAKE
from helpers.corpus import ROOT

CLI_DOC = ROOT / "docs" / "cli.md"
FENCE = re.compile(r"^```(\w*)\s*$")
SKIP = re.compile(r"<!--\s*skip-test:\s*(.+?)\s*-->")
ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")


def sh_blocks(text: str) -> list[tuple[int, list[str], str | None]]:
    """(line, logical lines, skip reason) of each ``sh`` block; backslash
    continuations are joined."""
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        if match.group(1) == "sh":
            skip = SKIP.search(lines[i - 1]) if i else None
            joined = "\n".join(lines[i + 1 : end]).replace("\\\n", " ")
            blocks.append((i + 1, joined.splitlines(), skip.group(1) if skip else None))
        i = end + 1
    return blocks


def documented_commands(text: str) -> list[tuple[int, dict[str, str], list[str]]]:
    """(line, environment, arguments after ``fastnotebook``) of every
    ``fastnotebook`` command line in a block that is not skipped."""
    found = []
    for line, block, skip in sh_blocks(text):
        if skip is not None:
            continue
        for source in block:
            words = shlex.split(source, comments=True)
            env: dict[str, str] = {}
            while words and ASSIGNMENT.match(words[0]):
                name, _, value = words.pop(0).partition("=")
                env[name] = value
            if not words:
                continue
            assert words[0] == "fastnotebook", f"docs/cli.md:{line}: {source!r} runs no command"
            found.append((line, env, words[1:]))
    return found


def test_the_page_documents_commands_and_skips_few_blocks() -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    commands = documented_commands(text)
    names = {args[0] for _, _, args in commands}
    assert {"ingest", "embed", "search", "sources", "chunk", "serve"} <= names
    skipped = [reason for _, _, reason in sh_blocks(text) if reason is not None]
    assert len(skipped) <= 3, skipped  # only what needs another server


def documented_files(home: Path, cwd: Path) -> None:
    """Files at the paths the commands name (``~/papers``, ``notes/todo.md``, ``page.html``)."""
    papers = home / "papers"
    papers.mkdir(parents=True)
    for n in range(3):
        (papers / f"paper{n}.md").write_text(
            f"# Paper {n}\n\nHow do planets stay on course? Gravity bends their path. " * 20
        )
    (papers / "gone.md").write_text("# Gone\n\nThis file is removed before --prune.\n")
    (cwd / "notes").mkdir(parents=True)
    (cwd / "notes" / "todo.md").write_text("# Todo\n\n- water the plants\n- call home\n")
    (cwd / "page.html").write_text(
        "<html><body><h1>Page</h1><p>" + "Some words. " * 300 + "</p></body></html>"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def run_serve(args: list[str], env: dict[str, str], cwd: Path) -> None:
    """``serve`` as documented, on a free port (the documented one may be
    taken): it must answer HTTP within a minute; then it is stopped."""
    args = list(args)
    port = free_port()
    if "--port" in args:
        args[args.index("--port") + 1] = str(port)
    else:
        args += ["--port", str(port)]
    process = subprocess.Popen(
        [sys.executable, "-m", "fastnotebook", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.communicate()
            try:
                url = f"http://127.0.0.1:{port}/openapi.json"
                with urllib.request.urlopen(url, timeout=2) as answer:
                    assert answer.status == 200
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_every_documented_command_line_runs(tmp_path: Path) -> None:
    home, cwd, data = tmp_path / "home", tmp_path / "work", tmp_path / "data"
    documented_files(home, cwd)
    base = {**os.environ, **FAKE, "HOME": str(home), "FASTNOTEBOOK_DATA_DIR": str(data)}
    base.pop("SURREAL_URL", None)
    base.pop("FASTNOTEBOOK_FAULT", None)
    commands = documented_commands(CLI_DOC.read_text(encoding="utf-8"))
    for line, env, args in commands:
        args = [str(home / a[2:]) if a.startswith("~/") else a for a in args]  # as a shell
        environment = {**base, **env}
        if args[0] == "serve":
            run_serve(args, environment, cwd)
            continue
        if "--prune" in args:
            (home / "papers" / "gone.md").unlink(missing_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "fastnotebook", *args],
            env=environment,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
        )
        where = f"docs/cli.md:{line}: fastnotebook {shlex.join(args)}"
        assert done.returncode == 0, f"{where}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr, where
        assert "unexpected" not in done.stderr, where
    assert (data / "surrealdb").is_dir()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("```sh\nfastnotebook ingest a b  # comment\n```\n", [["ingest", "a", "b"]]),
        ("```sh\nX=1 fastnotebook \\\n  embed\n```\n", [["embed"]]),
        ("<!-- skip-test: needs a server -->\n```sh\nfastnotebook serve\n```\n", []),
        ("```\nfastnotebook not-a-command-block\n```\n", []),
    ],
)
def test_the_reader_of_the_page(text: str, expected: list[list[str]]) -> None:
    assert [args for _, _, args in documented_commands(text)] == expected
