"""The client that asks the process holding the database: what it reads as
the holder's answer, and what it leaves (another program on the port, a
response it cannot read whole), without a database."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fastnotebook.app.cli.errors import CliError
from fastnotebook.app.cli.holder_client import _response, _Unreadable, ask_holder
from fastnotebook.app.database.holder import announce
from fastnotebook.app.database.settings import DatabaseSettings


def test_a_whole_response_is_read() -> None:
    assert _response(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}") == (200, b"{}")
    assert _response(b"HTTP/1.0 422 X\r\nContent-Length: 0\r\n\r\n") == (422, b"")


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"SSH-2.0-OpenSSH\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n{}",  # cut short
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n\r\n{}",  # no length
    ],
)
def test_what_is_not_read_as_an_answer(raw: bytes) -> None:
    with pytest.raises((_Unreadable, ValueError)):
        _response(raw)


def serve_once(response: bytes) -> tuple[str, threading.Thread]:
    """A server on 127.0.0.1 that answers one connection with ``response``."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def answer() -> None:
        with listener, listener.accept()[0] as conn:
            request = conn.recv(1 << 16)
            assert request.startswith(b"POST /search HTTP/1.1\r\n")
            conn.sendall(response)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return f"http://127.0.0.1:{port}", thread


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[DatabaseSettings]:
    yield DatabaseSettings(DatabaseSettings.embedded_url(tmp_path))


def http(status: str, body: dict[str, object]) -> bytes:
    payload = json.dumps(body).encode()
    return f"HTTP/1.1 {status}\r\nContent-Length: {len(payload)}\r\n\r\n".encode() + payload


def test_the_holder_answer_and_its_refusal(settings: DatabaseSettings) -> None:
    answer = {"hits": [], "paths": {}, "vault": None}
    url, thread = serve_once(http("200 OK", answer))
    announce(settings.url, url)  # this process, running: the holder
    assert ask_holder(settings.url, {"query": "q"}) == answer
    thread.join(5)
    url, thread = serve_once(http("422 Unprocessable", {"detail": "k must be 1 or more"}))
    announce(settings.url, url)
    with pytest.raises(CliError, match=r"server holding the database .*: k must be 1 or more$"):
        ask_holder(settings.url, {"query": "q"})
    thread.join(5)


@pytest.mark.parametrize(
    "response",
    [
        http("404 Not Found", {"error": "no such page"}),  # another program's answer
        http("200 OK", {"results": []}),  # not a search answer
        http("200 OK", {"hits": [], "paths": {}}),  # nor is this
        http("200 OK", {"hits": [1], "paths": {}, "vault": None}),
        b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{",  # closed mid-answer
        b"garbage",
    ],
)
def test_another_program_on_the_port_is_left_alone(
    settings: DatabaseSettings, response: bytes
) -> None:
    url, thread = serve_once(response)
    announce(settings.url, url)
    assert ask_holder(settings.url, {"query": "q"}) is None
    thread.join(5)


def test_no_holder_or_nobody_listening(settings: DatabaseSettings) -> None:
    assert ask_holder(settings.url, {"query": "q"}) is None  # no address file
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    announce(settings.url, f"http://127.0.0.1:{port}")
    assert ask_holder(settings.url, {"query": "q"}) is None


def test_ctrl_c_while_the_holder_thinks_is_one_line(tmp_path: Path) -> None:
    """A holder that takes its time: Ctrl-C ends the search with the
    command line's message and exit code, no traceback."""
    (tmp_path / "surrealdb").mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True)
    thread.start()
    announce(
        DatabaseSettings.embedded_url(tmp_path), f"http://127.0.0.1:{listener.getsockname()[1]}"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("SURREAL_URL", "FASTNOTEBOOK_DATA_DIR")}
    process = subprocess.Popen(
        [sys.executable, "-m", "fastnotebook", "search", "words", "--data-dir", str(tmp_path)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    thread.join(60)  # the request is on its way
    assert accepted, "the search did not ask the holder"
    time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert (process.returncode, out, err) == (130, "", "\nfastnotebook search: interrupted\n")
    accepted[0].close()
    listener.close()
