"""The model stage's side of the provider: how many requests are in flight,
what is retried, and how big a request may be.

``Provider.embed(texts)`` returns one result per text, a vector or a
``Failure``, never raising for what a provider does (only ``Stopped`` when
the run is stopped while it waits to retry). What it does with each
outcome of a model call:

- HTTP 429 or 503 (throttled): waits ``Retry-After`` when the response says
  so (every request waits that long: the server asked), or an exponential
  backoff with jitter, and tries again; the concurrency limit is halved (once
  per round of requests, as TCP does) and grows back by one for every
  ``limit`` successful calls (additive increase, multiplicative decrease);
- HTTP 400 or 413 on a batch of several texts (the provider's batch or
  request-size limit), or a timeout: the batch is split in halves, each sent
  on its own; when both halves succeed, their size is remembered and later
  batches are cut to it before they are sent;
- HTTP 5xx, a dropped connection, a malformed response: retried with
  backoff;
- another HTTP 4xx (401, 403, 404, 422...): a failure of those texts, not
  retried;
- any other exception (an in-process model): retried as
  ``fastnotebook.embedding.generate_embeddings`` does.

At most ``concurrency`` calls are in flight. For an HTTP provider (an
esperanto model with an httpx client), the run gets its own model object
with one httpx client whose pool holds at most ``concurrency`` connections,
the per-request timeout, and a response hook that turns an HTTP error into a
``ProviderHTTPError`` (status and ``Retry-After``), which esperanto's own
error message would otherwise lose. esperanto's OpenAI and OpenAI-compatible
models are called through ``fastnotebook.app.pipeline.openai_wire``: the same
requests, built by the model's own methods, and the same vectors, read by
the Rust core instead of a Python float per number.

A model of this process that has ``aembed_matrix(texts)`` (the local models
and the fake one) is called through it: its vectors stay the rows of one
numpy array on their way to the writer, which encodes them from arrays,
instead of becoming a Python float each and an array again.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeAlias

import httpx
import numpy as np
from numpy.typing import NDArray

from fastnotebook import embedding
from fastnotebook.ai import local_models, model_manager
from fastnotebook.app.pipeline import openai_wire
from fastnotebook.app.pipeline.fake_model import FAKE_PROVIDER
from fastnotebook.errors import ProviderHTTPError

__all__ = [
    "HTTP_CONCURRENCY",
    "IN_PROCESS_PROVIDERS",
    "AdaptiveLimit",
    "Failure",
    "Provider",
    "ProviderStats",
    "RetryPolicy",
    "Stopped",
    "Vector",
    "default_concurrency",
    "retry_after_seconds",
]

#: Providers that run in this process: one call at a time uses the CPU fully.
IN_PROCESS_PROVIDERS = frozenset(
    {
        local_models.ONNX_PROVIDER,
        local_models.STATIC_PROVIDER,
        FAKE_PROVIDER,
        "transformers",
    }
)
HTTP_CONCURRENCY = 8
#: One text's vector: a list from an HTTP provider, an array's row from a
#: model with ``aembed_matrix``.
Vector: TypeAlias = list[float] | NDArray[np.floating[Any]]
MAX_RETRY_AFTER = 600.0  # seconds; a longer Retry-After is capped
THROTTLED = frozenset({429, 503})
TOO_LARGE = frozenset({400, 413})


def default_concurrency(provider: str) -> int:
    """1 for a model in this process, ``HTTP_CONCURRENCY`` for a remote one."""
    return 1 if provider in IN_PROCESS_PROVIDERS else HTTP_CONCURRENCY


class Stopped(Exception):
    """The run was stopped while a batch waited to be retried."""


@dataclass(frozen=True)
class RetryPolicy:
    """``retries``: attempts after the first for throttled, 5xx, dropped or
    malformed calls; ``backoff``: the first wait without ``Retry-After``
    (doubled each time, up to ``max_backoff``, with jitter)."""

    retries: int = 8
    backoff: float = 1.0
    max_backoff: float = 60.0

    def delay(self, attempt: int) -> float:
        base = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        return float(base * random.uniform(0.5, 1.0))


@dataclass(frozen=True)
class Failure:
    """A text the provider did not embed: why, and whether the cause may be
    the text itself (then its record is tried alone before it is failed)."""

    message: str
    isolate: bool = True


class _Outcome(Enum):
    THROTTLED = "throttled"
    TOO_LARGE = "too large"
    TIMEOUT = "timeout"
    TRANSIENT = "transient"
    REFUSED = "refused"  # another 4xx
    OTHER = "other"  # not an HTTP error: an in-process model's exception


@dataclass
class ProviderStats:
    """What the provider did during a run (the summary's provider line)."""

    concurrency: int = 1
    requests: int = 0
    throttled: int = 0
    retried: int = 0
    split: int = 0
    timeouts: int = 0
    lowest_limit: int = 0
    peak_in_flight: int = 0
    batch_limit: int | None = None
    limit_history: list[tuple[float, float]] = field(default_factory=list)


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """A ``Retry-After`` header (seconds or an HTTP date) as seconds from now."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds):
        return None
    return min(MAX_RETRY_AFTER, max(0.0, seconds))


class AdaptiveLimit:
    """A concurrency limit between 1 and ``maximum`` that halves when the
    provider throttles and grows back by one per window of successes."""

    def __init__(self, maximum: int, on_busy: Callable[[float], None] | None = None) -> None:
        self.maximum = maximum
        self.limit = float(maximum)
        self.in_flight = 0
        self.peak = 0
        self.lowest = maximum
        self.round = 0  # bumped by every decrease
        self.not_before = 0.0  # monotonic time before which nothing is sent
        self.history: list[tuple[float, float]] = [(time.monotonic(), self.limit)]
        self._changed = asyncio.Event()
        self._on_busy = on_busy
        self._busy_since = 0.0

    async def acquire(self) -> int:
        """Wait for a free slot; returns the round the request starts in."""
        while True:
            wait = self.not_before - time.monotonic()
            if wait <= 0 and self.in_flight < int(self.limit):
                break
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), wait if wait > 0 else None)
        if self.in_flight == 0:
            self._busy_since = time.perf_counter()
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        return self.round

    def release(self) -> None:
        self.in_flight -= 1
        if self.in_flight == 0 and self._on_busy is not None:
            self._on_busy(time.perf_counter() - self._busy_since)
        self._changed.set()

    def succeeded(self) -> None:
        if self.limit < self.maximum:
            self._set(min(float(self.maximum), self.limit + 1.0 / int(self.limit)))

    def throttled(self, started_round: int, retry_after: float | None) -> None:
        """A request of ``started_round`` was throttled: halve the limit,
        once for the requests that were in flight together."""
        if retry_after:
            self.not_before = max(self.not_before, time.monotonic() + retry_after)
        if started_round == self.round:
            self.round += 1
            self._set(max(1.0, self.limit / 2))

    def _set(self, limit: float) -> None:
        if int(limit) != int(self.limit):
            self.history.append((time.monotonic(), float(int(limit))))
        self.limit = limit
        self.lowest = min(self.lowest, int(limit))
        self._changed.set()


def _http_error(error: BaseException) -> ProviderHTTPError | None:
    """The ``ProviderHTTPError`` behind ``error`` (esperanto wraps it)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, ProviderHTTPError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _chain(error: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _classify(error: BaseException) -> tuple[_Outcome, ProviderHTTPError | None]:
    http = _http_error(error)
    if http is not None:
        if http.status in THROTTLED:
            return _Outcome.THROTTLED, http
        if http.status in TOO_LARGE:
            return _Outcome.TOO_LARGE, http
        if http.status == 408:
            return _Outcome.TIMEOUT, http
        if http.status >= 500:
            return _Outcome.TRANSIENT, http
        return _Outcome.REFUSED, http
    chain = _chain(error)
    if any(isinstance(e, httpx.TimeoutException | TimeoutError) for e in chain):
        return _Outcome.TIMEOUT, None
    if any(isinstance(e, httpx.TransportError | json.JSONDecodeError | _Malformed) for e in chain):
        return _Outcome.TRANSIENT, None
    return _Outcome.OTHER, None


class _Malformed(Exception):
    """The provider answered, but not with one vector per text."""


def _message(error: BaseException) -> str:
    http = _http_error(error)
    if http is not None:
        return str(http)
    text = str(error)
    if isinstance(error, httpx.TimeoutException) or (
        not text and any(isinstance(e, httpx.TimeoutException) for e in _chain(error))
    ):
        return "the request timed out"
    return text or type(error).__name__


async def _raise_for_status(response: httpx.Response) -> None:
    """httpx response hook: an HTTP error as ``ProviderHTTPError``."""
    if response.status_code < 400:
        return
    await response.aread()
    detail = response.text.strip()
    try:
        data = json.loads(detail)
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            detail = error["message"]
        elif isinstance(error, str):
            detail = error
        elif isinstance(data, dict) and isinstance(data.get("message"), str):
            detail = data["message"]
    except (ValueError, AttributeError):
        pass
    raise ProviderHTTPError(
        response.status_code,
        " ".join(detail.split())[:300] or response.reason_phrase,
        retry_after_seconds(response.headers.get("retry-after")),
    )


def bounded_client(model: Any, concurrency: int, timeout: float | None) -> httpx.AsyncClient:
    """The httpx client a run gives an esperanto model: at most
    ``concurrency`` connections, ``timeout`` seconds per request (default:
    esperanto's own setting), HTTP errors raised with their status."""
    seconds = timeout if timeout is not None else float(model._get_timeout())
    return httpx.AsyncClient(
        timeout=httpx.Timeout(seconds),
        verify=model._get_ssl_verify(),
        limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        event_hooks={"response": [_raise_for_status]},
    )


def is_http_model(model: Any) -> bool:
    return isinstance(getattr(model, "async_client", None), httpx.AsyncClient)


def _model_call(model: Any, texts: list[str]) -> Any:
    """The model's vectors for ``texts``: through its ``aembed_matrix`` when
    it has one, through ``openai_wire`` for esperanto's OpenAI-style HTTP
    models (the same requests and vectors, without a Python float per
    number), through its ``aembed`` otherwise."""
    matrix = getattr(model, "aembed_matrix", None)
    if matrix is not None:
        return matrix(texts)
    if is_http_model(model) and openai_wire.supported(model):
        return openai_wire.aembed_matrix(model, texts)
    return model.aembed(texts)


class Provider:
    """The configured embedding model behind an adaptive in-flight window."""

    def __init__(
        self,
        model: Any,
        concurrency: int,
        policy: RetryPolicy,
        stop: asyncio.Event,
        on_busy: Callable[[float], None] | None = None,
        owned: bool = False,
    ) -> None:
        self.model = model
        self.policy = policy
        self.stop = stop
        self.window = AdaptiveLimit(concurrency, on_busy)
        self.stats = ProviderStats(concurrency=concurrency, lowest_limit=concurrency)
        self.batch_limit: int | None = None
        self._owned = owned

    @classmethod
    async def open(
        cls,
        concurrency: int = 0,
        timeout: float | None = None,
        policy: RetryPolicy | None = None,
        stop: asyncio.Event | None = None,
        on_busy: Callable[[float], None] | None = None,
    ) -> Provider:
        """The configured model (``model_manager``) with ``concurrency`` calls
        in flight (0: ``default_concurrency`` of its provider)."""
        config = model_manager.embedding_config()
        model = await model_manager.get_embedding_model()
        if config is None or model is None:
            raise ValueError(
                "No embedding model configured. Please configure one in the Models section."
            )
        concurrency = concurrency or default_concurrency(config.provider)
        owned = False
        if is_http_model(model):
            # A model object of its own, so that the cached one (used by
            # search and the API) keeps its client.
            model = model_manager.new_embedding_model()
            previous = model.async_client
            model.async_client = bounded_client(model, concurrency, timeout)
            await previous.aclose()
            owned = True
        return cls(
            model, concurrency, policy or RetryPolicy(), stop or asyncio.Event(), on_busy, owned
        )

    async def close(self) -> None:
        self.stats.lowest_limit = self.window.lowest
        self.stats.peak_in_flight = self.window.peak
        self.stats.batch_limit = self.batch_limit
        self.stats.limit_history = list(self.window.history)
        if self._owned:
            await self.model.aclose()
            self.model.close()

    def batch_size(self, wanted: int) -> int:
        """``wanted``, or less once a smaller batch was found to work."""
        return min(wanted, self.batch_limit) if self.batch_limit else wanted

    async def embed(self, texts: list[str], once: bool = False) -> list[Vector | Failure]:
        """A vector or a ``Failure`` for each text; with ``once`` (a record
        tried alone after its batch failed), an in-process model's error is
        not retried (throttling, 5xx, drops and timeouts still are)."""
        if not texts:
            return []
        size = self.batch_size(len(texts))
        if size < len(texts):
            results: list[Vector | Failure] = []
            for start in range(0, len(texts), size):
                results += await self._embed(texts[start : start + size], once)
            return results
        return await self._embed(texts, once)

    async def _embed(self, texts: list[str], once: bool) -> list[Vector | Failure]:
        attempt = 0
        while True:
            try:
                return list(await self._call(texts))
            except Stopped:
                raise
            except Exception as error:
                outcome, http = _classify(error)
                error_text = _message(error)
            if outcome is _Outcome.TIMEOUT:
                self.stats.timeouts += 1
            if outcome in (_Outcome.TOO_LARGE, _Outcome.TIMEOUT) and len(texts) > 1:
                return await self._split(texts, once)
            if outcome is _Outcome.THROTTLED:
                self.stats.throttled += 1
            if outcome is _Outcome.OTHER:
                # As generate_embeddings: a fixed number of tries, a fixed delay.
                limit = 0 if once else embedding.EMBEDDING_MAX_RETRIES - 1
                delay = float(embedding.EMBEDDING_RETRY_DELAY)
            elif outcome is _Outcome.REFUSED or (outcome is _Outcome.TOO_LARGE):
                limit, delay = 0, 0.0
            else:
                # Throttled, 5xx, dropped, timed out: not the texts' fault,
                # retried even for a record tried alone.
                limit = self.policy.retries
                delay = (
                    http.retry_after
                    if http is not None and http.retry_after is not None
                    else self.policy.delay(attempt + 1)
                )
            if attempt >= limit:
                # Only a refusal of the batch may be one record's fault; a
                # single text refused as too large, or a provider throttled or
                # down to the end, gains nothing from trying records alone.
                isolate = outcome in (_Outcome.OTHER, _Outcome.REFUSED)
                return [Failure(error_text, isolate)] * len(texts)
            attempt += 1
            self.stats.retried += 1
            await self._sleep(delay)

    async def _split(self, texts: list[str], once: bool) -> list[Vector | Failure]:
        self.stats.split += 1
        half = (len(texts) + 1) // 2
        left = await self.embed(texts[:half], once)
        right = await self.embed(texts[half:], once)
        if not any(isinstance(r, Failure) for r in left + right):
            # Both halves worked where the whole did not: a size limit.
            self.batch_limit = min(self.batch_limit or half, half)
        return left + right

    async def _call(self, texts: list[str]) -> list[Vector]:
        started = await self.window.acquire()
        self.stats.requests += 1
        try:
            vectors = await _model_call(self.model, texts)
        except Exception as error:
            self.window.release()
            http = _http_error(error)
            if http is not None and http.status in THROTTLED:
                self.window.throttled(started, http.retry_after)
            raise
        except BaseException:
            self.window.release()
            raise
        self.window.release()
        self.window.succeeded()
        if isinstance(vectors, np.ndarray) and vectors.ndim == 2:
            vectors = list(vectors)
        if not isinstance(vectors, list) or len(vectors) != len(texts):
            count = len(vectors) if isinstance(vectors, list) else type(vectors).__name__
            raise _Malformed(f"the model returned {count} vectors for {len(texts)} texts")
        return vectors

    async def _sleep(self, seconds: float) -> None:
        if seconds <= 0:
            if self.stop.is_set():
                raise Stopped
            return
        try:
            await asyncio.wait_for(self.stop.wait(), seconds)
        except TimeoutError:
            return
        raise Stopped
