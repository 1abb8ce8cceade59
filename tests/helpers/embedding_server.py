"""An OpenAI-compatible embeddings server on 127.0.0.1 for the provider tests
and the concurrency benchmark: ``POST /v1/embeddings`` answers each text with
its deterministic hash vector (``fake_model.hash_vectors`` of the text as
received), after a configurable latency, and misbehaves on demand.

What it can do (attributes, changeable while it runs):

- ``latency``: seconds each request takes;
- ``max_batch`` / ``too_large_status``: more texts than that in one request
  get that status (400 or 413), as Mistral or OpenAI's input limits;
- ``slow_above`` / ``slow_latency``: a request of more texts takes longer
  (a local server that cannot keep up with a big batch);
- ``throttle_above`` / ``throttle_requests``: 429 while more than that many
  requests are in flight, for the first ``throttle_requests`` requests (a
  provider's concurrency limit that goes away);
- ``refuse``: a request with a text containing that string gets 422;
- ``script``: the actions of the next requests, in order: ``"429"``,
  ``"429:<retry-after>"``, ``"503"``, ``"503:<retry-after>"``, ``"500"``,
  ``"malformed"`` (200 with a body that is not JSON), ``"drop"`` (the
  connection closed without an answer), ``"ok"``.

It counts requests in flight (and their maximum), TCP connections (and the
most open at once), the texts it embedded (a ``Counter``) and every request's
(size, status, start, end).
"""

from __future__ import annotations

import functools
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import orjson

from fastnotebook.app.pipeline.fake_model import hash_vectors

DIMENSION = 24


@dataclass
class Request:
    size: int
    status: int  # 0: dropped
    start: float
    end: float
    action: str = "ok"  # the scripted action it got


class EmbeddingServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the listen backlog: every client connection at once

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.latency = 0.0
        self.dimension = DIMENSION
        self.max_batch: int | None = None
        self.too_large_status = 413
        self.slow_above: int | None = None
        self.slow_latency = 0.0
        self.throttle_above: int | None = None
        self.throttle_requests = 0
        self.refuse: str | None = None
        self.script: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.connections = 0
        self.open_connections = 0
        self.max_open_connections = 0
        self.embedded: Counter[str] = Counter()
        self.requests: list[Request] = []

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and left: the answer goes nowhere

    def statuses(self) -> Counter[int]:
        with self.lock:
            return Counter(r.status for r in self.requests)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a client's pool is visible
    server: EmbeddingServer

    def setup(self) -> None:
        super().setup()
        # Headers and body are two writes: without this, Nagle's algorithm and
        # the client's delayed ACK add 40 ms to every answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s = self.server
        with s.lock:
            s.connections += 1
            s.open_connections += 1
            s.max_open_connections = max(s.max_open_connections, s.open_connections)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            with self.server.lock:
                self.server.open_connections -= 1

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, retry_after: str | None = None) -> None:
        body = json.dumps({"error": {"message": message, "type": "test"}}).encode()
        self._reply(status, body, {"Retry-After": retry_after} if retry_after else None)

    def do_POST(self) -> None:
        s = self.server
        length = int(self.headers.get("Content-Length") or 0)
        payload = json.loads(self.rfile.read(length) or b"{}")
        texts = payload.get("input") or []
        texts = [texts] if isinstance(texts, str) else list(texts)
        start = time.monotonic()
        with s.lock:
            s.in_flight += 1
            s.max_in_flight = max(s.max_in_flight, s.in_flight)
            action = s.script.pop(0) if s.script else "ok"
            number = len(s.requests) + s.in_flight
            throttle = (
                s.throttle_above is not None
                and s.in_flight > s.throttle_above
                and number <= s.throttle_requests
            )
        status = 200
        try:
            delay = s.latency
            if s.slow_above is not None and len(texts) > s.slow_above:
                delay = s.slow_latency
            time.sleep(delay)
            if self.path != "/v1/embeddings":
                status = 404
                self._error(404, f"no such path {self.path}")
            elif action == "drop":
                status = 0
                self.close_connection = True
            elif action.startswith(("429", "503", "500")):
                code, _, retry_after = action.partition(":")
                status = int(code)
                self._error(status, f"scripted {code}", retry_after or None)
            elif throttle:
                status = 429
                self._error(429, "Rate limit reached: too many requests in flight")
            elif s.max_batch is not None and len(texts) > s.max_batch:
                status = s.too_large_status
                self._error(status, f"too many inputs: {len(texts)} > {s.max_batch}")
            elif s.refuse is not None and any(s.refuse in t for t in texts):
                status = 422
                self._error(422, f"input contains {s.refuse!r}")
            elif action == "malformed":
                self._reply(200, b'{"data": [{"embedding": [0.1, ')
            else:
                # float64 rows: orjson writes each number's shortest repr, as
                # json.dumps does for the same floats (the same values parsed).
                vectors = hash_vectors(texts, s.dimension).astype(np.float64)
                body = {
                    "object": "list",
                    "data": [
                        {"object": "embedding", "index": i, "embedding": v}
                        for i, v in enumerate(vectors)
                    ],
                    "model": payload.get("model"),
                    "usage": {"prompt_tokens": 0, "total_tokens": 0},
                }
                with s.lock:
                    s.embedded.update(texts)
                self._reply(200, orjson.dumps(body, option=orjson.OPT_SERIALIZE_NUMPY))
        finally:
            with s.lock:
                s.in_flight -= 1
                s.requests.append(Request(len(texts), status, start, time.monotonic(), action))


@contextmanager
def embedding_server() -> Iterator[EmbeddingServer]:
    server = EmbeddingServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def provider_config(server: EmbeddingServer, **extra: Any) -> dict[str, Any]:
    """esperanto's ``openai-compatible`` provider pointed at ``server``."""
    return {"base_url": server.url, "api_key": "test-key", **extra}


@functools.cache
def _esperanto_model() -> Any:
    from esperanto.providers.embedding.openai_compatible import OpenAICompatibleEmbeddingModel

    return OpenAICompatibleEmbeddingModel(model_name="m", base_url="http://127.0.0.1:9/v1")


def cleaned(text: str) -> str:
    """The text as esperanto sends it (its ``_clean_text``)."""
    return _esperanto_model()._clean_text(text)  # type: ignore[no-any-return]


def expected_vector(text: str, dimension: int = DIMENSION) -> list[float]:
    return hash_vectors([cleaned(text)], dimension)[0].tolist()  # type: ignore[no-any-return]
