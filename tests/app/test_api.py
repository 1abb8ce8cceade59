"""The HTTP API through a real HTTP client against `fastnotebook serve`,
running as its own process on 127.0.0.1 over an on-disk embedded database."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import TypeAdapter

from fastnotebook.app.database import DatabaseSettings, open_database, set_database
from fastnotebook.context_builder import ContextBuilder, ContextConfig, build_notebook_context
from helpers.notebooks import Seeded, seed

LEVELS_BODY = {"include_insights": True, "max_tokens": None}


@dataclass
class Server:
    client: httpx.Client
    made: Seeded
    expected: dict[str, Any]  # in-process results, as JSON


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def levels(made: Seeded) -> dict[str, Any]:
    s, n = made.sources, made.notes
    return {
        "sources": {
            s[0].id: "insights",
            s[1].id: "full content",
            (s[2].id or "").split(":", 1)[1]: "not in context",
        },
        "notes": {n[0].id: "full content", n[1].id: "not in context"},
    }


async def prepare(data_dir: Path) -> tuple[Seeded, dict[str, Any]]:
    """Seed the database the server will open, and build in-process what the
    server should answer."""
    db = await open_database(DatabaseSettings(DatabaseSettings.embedded_url(data_dir)))
    previous = set_database(db)
    try:
        made = await seed(sources=4, insights=2, notes=3)
        config = ContextConfig(**levels(made))
        expected = {
            "default": await build_notebook_context(made.id),
            "levels": await ContextBuilder(notebook_id=made.id, context_config=config).build(),
            "cut": await build_notebook_context(made.id, max_tokens=400),
        }
    finally:
        set_database(previous)
        await db.close()
    # As FastAPI serialises a dict[str, Any] response (datetimes as ISO 8601).
    return made, TypeAdapter(dict[str, Any]).dump_python(expected, mode="json")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp("api-data")
    made, expected = asyncio.run(prepare(data_dir))
    port = free_port()
    env = os.environ | {
        "FASTNOTEBOOK_DATA_DIR": str(data_dir),
        "FASTNOTEBOOK_FULL_TEXT_SEARCH": "0",
    }
    env.pop("SURREAL_URL", None)
    log = (data_dir / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "fastnotebook", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            deadline = time.monotonic() + 60
            while True:
                if process.poll() is not None:
                    pytest.fail(f"the server exited: {(data_dir / 'server.log').read_text()}")
                try:
                    if client.get("/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail("the server did not start within 60 s")
                time.sleep(0.1)
            yield Server(client, made, expected)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
    # uvicorn shuts down cleanly on SIGTERM, then exits by that signal.
    assert process.returncode in (0, -signal.SIGTERM), (data_dir / "server.log").read_text()
    assert "Application shutdown complete" in (data_dir / "server.log").read_text()


def test_health(server: Server) -> None:
    assert server.client.get("/health").json() == {"status": "ok"}


def test_notebook_context_matches_the_builder(server: Server) -> None:
    response = server.client.get(f"/notebooks/{server.made.id}/context")
    assert response.status_code == 200
    assert response.json() == server.expected["default"]


def test_chat_context_with_inclusion_levels(server: Server) -> None:
    body = {"notebook_id": server.made.id, "context_config": levels(server.made)}
    response = server.client.post("/chat/context", json=body)
    assert response.status_code == 200
    context = response.json()
    assert context == server.expected["levels"]
    assert [s["id"] for s in context["sources"]] == [s.id for s in server.made.sources[:2]]
    assert context["notebook_id"] == server.made.id


def test_budgets_and_switches(server: Server) -> None:
    nb = server.made.id
    cut = server.client.get(f"/notebooks/{nb}/context", params={"max_tokens": 400}).json()
    assert cut == server.expected["cut"] and cut["total_tokens"] <= 400
    body = {"notebook_id": nb, "context_config": {"max_tokens": 400}}
    assert server.client.post("/chat/context", json=body).json() == cut
    params = {"include_notes": "false", "include_insights": "false"}
    lean = server.client.get(f"/notebooks/{nb}/context", params=params).json()
    assert lean["notes"] == lean["insights"] == [] and len(lean["sources"]) == 4
    weights = {"notebook_id": nb, "context_config": {"priority_weights": {"note": 1000}}}
    ordered = server.client.post("/chat/context", json=weights).json()
    assert ordered["total_items"] == server.expected["default"]["total_items"]


def test_bare_notebook_ids(server: Server) -> None:
    bare = server.made.id.split(":", 1)[1]
    response = server.client.post("/chat/context", json={"notebook_id": bare})
    assert response.json()["total_items"] == server.expected["default"]["total_items"]


@pytest.mark.parametrize(
    "notebook_id", ["notebook:missing", "missing", "notebook:x; DELETE source"]
)
def test_unknown_notebooks_are_404(server: Server, notebook_id: str) -> None:
    for response in (
        server.client.post("/chat/context", json={"notebook_id": notebook_id}),
        server.client.get(f"/notebooks/{notebook_id}/context"),
    ):
        assert response.status_code == 404
        assert "not found" in response.json()["detail"]
    assert server.client.get(f"/notebooks/{server.made.id}/context").json()["total_items"] > 0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "notebook_id: Field required"),
        ({"notebook_id": ""}, "notebook_id: String should have at least 1 character"),
        ({"notebook_id": "notebook:"}, "the id after ':' is empty"),
        ({"notebook_id": "n", "context_config": {"max_tokens": 0}}, "max_tokens"),
        ({"notebook_id": "n", "context_config": {"max_tokens": "many"}}, "max_tokens"),
        ({"notebook_id": "n", "context_config": {"sources": {"s": "everything"}}}, "everything"),
        ({"notebook_id": "n", "context_config": {"notes": {"": "full content"}}}, "id is empty"),
        ({"notebook_id": "n", "context_config": {"priority_weights": {"pdf": 1}}}, "pdf"),
        ({"notebook_id": "n", "context_config": {"budget": 5}}, "budget"),
        ({"notebook_id": "n", "extra": True}, "extra"),
    ],
)
def test_invalid_requests_are_422_with_a_message(
    server: Server, body: dict[str, Any], message: str
) -> None:
    response = server.client.post("/chat/context", json=body)
    assert response.status_code == 422
    assert message in response.json()["detail"]


def test_invalid_query_parameters_are_422(server: Server) -> None:
    response = server.client.get(f"/notebooks/{server.made.id}/context?max_tokens=-1")
    assert response.status_code == 422 and "max_tokens" in response.json()["detail"]
    response = server.client.post(
        "/chat/context", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422 and "JSON" in response.json()["detail"]
