"""The client that asks the process holding the database: what it reads as
the holder's answer, and what it leaves (another program on the port, a
response it cannot read whole), without a database."""

from __future__ import annotations

import json
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
from helpers.cli import environment


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


class Holder:
    """A server on 127.0.0.1 that answers each connection with ``response``
    and, unless ``close``, keeps it open afterwards; it keeps the requests."""

    def __init__(self, response: bytes, close: bool = True) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.response, self.close = response, close
        self.requests: list[bytes] = []
        self.done = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.requests.append(conn.recv(1 << 16))
            conn.sendall(self.response)
            if self.close:
                conn.close()
            else:
                threading.Thread(target=lambda c=conn: (self.done.wait(60), c.close())).start()

    @property
    def connections(self) -> int:
        return len(self.requests)

    def asked_once(self) -> bool:
        """One request came, the client's ``POST /search``."""
        return self.connections == 1 and self.requests[0].startswith(b"POST /search HTTP/1.1\r\n")

    def stop(self) -> None:
        self.done.set()
        self.listener.close()


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[DatabaseSettings]:
    yield DatabaseSettings(DatabaseSettings.embedded_url(tmp_path))


def http(status: str, body: dict[str, object]) -> bytes:
    payload = json.dumps(body).encode()
    return f"HTTP/1.1 {status}\r\nContent-Length: {len(payload)}\r\n\r\n".encode() + payload


def test_the_holder_answer_and_its_refusal(settings: DatabaseSettings) -> None:
    answer = {"hits": [], "paths": {}, "vault": None}
    holder = Holder(http("200 OK", answer))
    announce(settings.url, holder.url)  # this process, running: the holder
    assert ask_holder(settings.url, {"query": "q"}) == answer
    assert holder.asked_once()
    holder.stop()
    refusal = Holder(http("422 Unprocessable", {"detail": "k must be 1 or more"}))
    announce(settings.url, refusal.url)
    with pytest.raises(CliError, match=r"server holding the database .*: k must be 1 or more$"):
        ask_holder(settings.url, {"query": "q"})
    assert refusal.asked_once()
    refusal.stop()


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
    holder = Holder(response)
    announce(settings.url, holder.url)
    assert ask_holder(settings.url, {"query": "q"}) is None
    assert holder.asked_once()
    holder.stop()


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
    env = environment()
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


def test_an_answer_on_a_connection_left_open_is_read_at_its_length(
    settings: DatabaseSettings,
) -> None:
    answer = {"hits": [], "paths": {}, "vault": None}
    holder = Holder(http("200 OK", answer), close=False)
    announce(settings.url, holder.url)
    started = time.monotonic()
    try:
        assert ask_holder(settings.url, {"query": "q"}) == answer
        assert time.monotonic() - started < 30  # not the server's 60 s
    finally:
        holder.stop()


def test_a_holder_that_gave_no_answer_is_not_asked_again(settings: DatabaseSettings) -> None:
    holder = Holder(b"garbage")
    announce(settings.url, holder.url)
    try:
        assert ask_holder(settings.url, {"query": "q"}) is None
        assert ask_holder(settings.url, {"query": "q"}) is None  # the command line's turn
        assert holder.connections == 1
    finally:
        holder.stop()


def test_a_pid_that_no_process_can_have_is_no_holder(settings: DatabaseSettings) -> None:
    holder = Holder(http("200 OK", {"hits": [], "paths": {}, "vault": None}))
    named = settings.local_path
    assert named is not None
    for pid in (10**20, -5, 0, "12", True):
        named.with_name("surrealdb.serve.json").write_text(
            json.dumps({"url": holder.url, "pid": pid})
        )
        assert ask_holder(settings.url, {"query": "q"}) is None
    holder.stop()
    assert holder.connections == 0


def route(data: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``fastnotebook search`` through the route alone (exit code 99: left
    to the command line)."""
    program = (
        "import sys\n"
        "from fastnotebook.app.cli.search_route import answer_search\n"
        "code = answer_search(sys.argv[1:])\n"
        "sys.exit(99 if code is None else code)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", program, "search", *args],
        env=environment(FASTNOTEBOOK_DATA_DIR=str(data), **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


HIT = {"id": "source:a", "parent_id": "source:a", "title": "Café", "similarity": 0.5}


def test_the_routes_refusals_and_output_errors_are_one_line(tmp_path: Path) -> None:
    url = DatabaseSettings.embedded_url(tmp_path)
    refusal = Holder(http("422 Unprocessable", {"detail": "the model changed"}))
    announce(url, refusal.url)
    done = route(tmp_path, "words")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"fastnotebook search: the server holding the database ({refusal.url}): the model changed\n"
    )
    assert refusal.connections == 1
    refusal.stop()

    answer = {"hits": [HIT], "paths": {}, "vault": None}
    holder = Holder(http("200 OK", answer))
    announce(url, holder.url)
    done = route(tmp_path, "words")
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert "0.500  Café  [source:a]" in done.stdout
    done = route(tmp_path, "words", PYTHONIOENCODING="ascii")
    assert done.returncode == 1
    assert done.stderr.startswith("fastnotebook search: 'ascii' codec can't encode")
    assert done.stderr.count("\n") == 1
    holder.stop()


@pytest.mark.parametrize(
    "hits",
    [[{k: v for k, v in HIT.items() if k != "similarity"}], [{**HIT, "similarity": None}]],
)
def test_an_answer_this_version_cannot_print_is_left_to_the_command_line(
    tmp_path: Path, hits: list[dict[str, object]]
) -> None:
    holder = Holder(http("200 OK", {"hits": hits, "paths": {}, "vault": None}))
    announce(DatabaseSettings.embedded_url(tmp_path), holder.url)
    done = route(tmp_path, "words")
    assert (done.returncode, done.stdout, done.stderr) == (99, "", "")
    holder.stop()


def test_a_data_folder_that_cannot_be_resolved_is_left_to_the_command_line(
    tmp_path: Path,
) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    done = route(tmp_path, "words", "--data-dir", str(loop / "x"))
    assert (done.returncode, done.stdout, done.stderr) == (99, "", "")
