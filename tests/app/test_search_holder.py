"""``fastnotebook search`` while ``fastnotebook serve`` holds the database:
the command asks the server (a real one, its own process on 127.0.0.1) and
prints what it prints when it searches itself; a server that is gone is
ignored."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from fastnotebook.app.cli.errors import CliError
from fastnotebook.app.cli.holder_client import ask_holder
from fastnotebook.app.database import DatabaseSettings
from helpers.cli import cli, environment
from helpers.pipeline import write_corpus

QUERY = "paragraph about the corpus"


@dataclass
class Store:
    data: Path
    local_text: str  # `search` before any server ran
    local_json: str


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("holder")
    write_corpus(root / "corpus", documents=4, paragraphs=3)
    data = root / "data"
    assert cli("ingest", str(root / "corpus"), "--quiet", data_dir=data).returncode == 0
    assert cli("embed", "--quiet", data_dir=data).returncode == 0
    text = cli("search", QUERY, "--min-score", "-1", data_dir=data)
    found = cli("search", QUERY, "--min-score", "-1", "--json", data_dir=data)
    assert text.returncode == 0 and found.returncode == 0, (text.stderr, found.stderr)
    assert json.loads(found.stdout)  # hits to compare
    return Store(data, text.stdout, found.stdout)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def server(store: Store) -> Iterator[subprocess.Popen[bytes]]:
    port = free_port()
    env = environment(FASTNOTEBOOK_DATA_DIR=str(store.data))
    log = (store.data.parent / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "fastnotebook", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (store.data.parent / "server.log").read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not start within 60 s"
            time.sleep(0.1)
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=20)
        log.close()


def holder_file(store: Store) -> Path:
    return store.data / "surrealdb.serve.json"


def test_search_asks_the_server_that_holds_the_database(
    store: Store, server: subprocess.Popen[bytes]
) -> None:
    named = json.loads(holder_file(store).read_text())
    assert named["pid"] == server.pid and named["url"].startswith("http://127.0.0.1:")
    # The server holds the database's lock: only through it can this work.
    text = cli("search", QUERY, "--min-score", "-1", data_dir=store.data)
    found = cli("search", QUERY, "--min-score", "-1", "--json", data_dir=store.data)
    assert (text.returncode, text.stderr) == (0, "")
    assert text.stdout == store.local_text
    assert found.stdout == store.local_json
    assert "POST /search" in (store.data.parent / "server.log").read_text()
    # A search the server refuses is a CliError with its message.
    settings = DatabaseSettings(DatabaseSettings.embedded_url(store.data))
    with pytest.raises(CliError, match=r"server holding the database .*greater than or equal"):
        ask_holder(settings.url, {"query": QUERY, "k": 0})
    # Stopped, it withdraws its name, and search opens the database itself.
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=20)
    assert not holder_file(store).exists()
    assert cli("search", QUERY, "--min-score", "-1", data_dir=store.data).stdout == store.local_text


def test_a_server_that_was_killed_is_ignored(store: Store, server: subprocess.Popen[bytes]) -> None:
    server.kill()
    server.wait(timeout=20)
    assert holder_file(store).exists()  # a kill leaves the name behind
    text = cli("search", QUERY, "--min-score", "-1", data_dir=store.data)
    assert (text.returncode, text.stdout) == (0, store.local_text), text.stderr
    holder_file(store).unlink()


def test_the_search_is_answered_before_the_command_line_is_imported(
    store: Store, server: subprocess.Popen[bytes]
) -> None:
    """``search_route`` answers with the holder's answer, printed as the
    command prints it, and imports neither the command line, the database,
    the SDK, numpy nor the drop-in's modules."""
    program = (
        "import sys\n"
        "from fastnotebook.app.cli.search_route import answer_search\n"
        f"code = answer_search(['search', {QUERY!r}, '--min-score', '-1', "
        f"'--data-dir', {str(store.data)!r}])\n"
        "heavy = ('surrealdb', 'numpy', 'loguru', 'fastnotebook.app.cli.dispatch', "
        "'fastnotebook.app.database.connection', 'fastnotebook.chunking')\n"
        "print(code, sorted(m for m in sys.modules if m.startswith(heavy)), file=sys.stderr)\n"
    )
    env = environment()
    done = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.stderr == "0 []\n"
    assert done.stdout == store.local_text


def test_a_closed_pipe_ends_the_answered_search_quietly(
    store: Store, server: subprocess.Popen[bytes]
) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line
    env = environment()
    done = subprocess.run(
        [sys.executable, "-m", "fastnotebook", "search", QUERY, "--data-dir", str(store.data)],
        env=env,
        stdout=write_end,
        stderr=subprocess.PIPE,
        timeout=120,
    )
    os.close(write_end)
    assert (done.returncode, done.stderr) == (141, b"")
    assert "POST /search" in (store.data.parent / "server.log").read_text()


@pytest.mark.parametrize(
    "argv",
    [
        ["ingest", "x"],
        ["search"],
        ["search", "  "],
        ["search", QUERY, "-k", "0"],
        ["search", QUERY, "--min-score", "2"],
        ["search", QUERY, "--exact", "--ann"],
        ["search", QUERY, "--help"],
        ["search", QUERY, "--debug"],
    ],
)
def test_what_the_route_leaves_to_the_command_line(
    store: Store,
    server: subprocess.Popen[bytes],
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not a search, a mistake in it, or help: nothing printed, the whole
    command line runs it (and says what is wrong)."""
    from fastnotebook.app.cli.search_route import answer_search

    for name in ("SURREAL_URL", "FASTNOTEBOOK_DATA_DIR"):  # restored after the test
        monkeypatch.delenv(name, raising=False)
    assert answer_search([*argv, "--data-dir", str(store.data)]) is None
    assert capsys.readouterr() == ("", "")
