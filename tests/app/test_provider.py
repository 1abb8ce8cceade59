"""``embed`` against a real HTTP server: esperanto's ``openai-compatible``
provider, configured as a user would, pointed at the OpenAI-compatible test
server of ``helpers.embedding_server`` on 127.0.0.1. Concurrency, rate
limits, batch limits, timeouts, malformed answers, dropped connections,
refused texts, a killed run; and the provider module's own parts."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fastnotebook.ai import model_manager
from fastnotebook.app.cli import build_parser
from fastnotebook.app.database import Database, DatabaseSettings, open_database
from fastnotebook.app.domain import Source
from fastnotebook.app.pipeline import EmbedOptions, EmbedReport, embed
from fastnotebook.app.pipeline.provider import (
    AdaptiveLimit,
    RetryPolicy,
    default_concurrency,
    retry_after_seconds,
)
from helpers.cli import cli, row
from helpers.embedding_server import (
    EmbeddingServer,
    cleaned,
    embedding_server,
    expected_vector,
    provider_config,
)
from helpers.pipeline import expected_chunks, paragraph, stored_chunks, write_corpus

FAST = 0.01  # seconds before a retry: the tests do not wait


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    with embedding_server() as running:
        model_manager.configure_embedding_model(
            "openai-compatible", "test-embed", provider_config(running)
        )
        yield running
        model_manager.reset()


async def many_sources(count: int, paragraphs: int = 1) -> None:
    for i in range(count):
        body = "".join(paragraph(f"s{i}", n) for n in range(paragraphs))
        await Source(title=f"s{i}", full_text=body).save()


async def assert_store_is_exact(db: Database, server: EmbeddingServer, sources: int) -> None:
    """Every chunk once, in order, with its deterministic vector; one state
    row per source; the server embedded no chunk that was not asked for."""
    rows = await db.query("SELECT source, order, content, embedding FROM source_embedding;")
    by_source: dict[str, list[tuple[int, str]]] = {}
    for r in rows:
        assert r["embedding"] == expected_vector(r["content"]), r["content"][:40]
        by_source.setdefault(str(r["source"]), []).append((r["order"], r["content"]))
    assert len(by_source) == sources
    for items in by_source.values():
        assert sorted(o for o, _ in items) == list(range(len(items)))
    states = await db.query("SELECT VALUE record FROM embedding_state;")
    assert len(states) == len(set(map(str, states))) == sources
    assert {cleaned(r["content"]) for r in rows} <= set(server.embedded)


# --- the provider module's parts ------------------------------------------------


def test_default_concurrency_by_provider_kind() -> None:
    assert default_concurrency("fastnotebook-onnx") == 1
    assert default_concurrency("fastnotebook-static") == 1
    assert default_concurrency("openai-compatible") == 8
    assert default_concurrency("mistral") == 8


def test_retry_after_in_seconds_or_as_a_date() -> None:
    assert retry_after_seconds("2") == 2.0 and retry_after_seconds("0.25") == 0.25
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    assert retry_after_seconds("-3") == 0.0 and retry_after_seconds("99999") == 600.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0


def test_backoff_doubles_up_to_its_cap() -> None:
    policy = RetryPolicy(backoff=1.0, max_backoff=4.0)
    for attempt, top in ((1, 1.0), (2, 2.0), (3, 4.0), (6, 4.0)):
        assert top / 2 <= policy.delay(attempt) <= top


async def test_the_limit_halves_once_per_round_and_grows_back() -> None:
    window = AdaptiveLimit(8)
    rounds = [await window.acquire() for _ in range(8)]
    assert window.in_flight == 8 == window.peak
    for started in rounds:  # eight 429s of one round: one halving
        window.release()
        window.throttled(started, None)
    assert int(window.limit) == 4
    window.throttled(await window.acquire(), None)  # a new round halves again
    window.release()
    assert int(window.limit) == 2 and window.lowest == 2
    successes = 0
    while window.limit < 8:
        window.succeeded()
        successes += 1
    assert successes == 2 + 3 + 4 + 5 + 6 + 7  # one more per window of successes


async def test_a_slot_waits_for_retry_after() -> None:
    window = AdaptiveLimit(2)
    window.throttled(await window.acquire(), 0.2)
    window.release()
    start = time.monotonic()
    await window.acquire()
    assert time.monotonic() - start >= 0.18


# --- embed against the server ---------------------------------------------------


async def test_n_batches_in_flight_over_a_bounded_pool(
    db: Database, server: EmbeddingServer
) -> None:
    await many_sources(30)
    server.latency = 0.08
    report = await embed(EmbedOptions(batch_size=1, concurrency=4, backoff=FAST), db)
    assert report.failures == [] and report.counts["source"].embedded == 30
    assert server.max_in_flight == 4 == report.provider.peak_in_flight
    assert server.connections <= 4
    assert report.provider.requests == len(server.requests) == 30
    await assert_store_is_exact(db, server, 30)
    again = await embed(EmbedOptions(backoff=FAST), db)
    assert again.counts["source"].unchanged == 30 and len(server.requests) == 30


async def test_http_providers_default_to_eight_in_flight(
    db: Database, server: EmbeddingServer
) -> None:
    await many_sources(24)
    server.latency = 0.1
    report = await embed(EmbedOptions(batch_size=1, backoff=FAST), db)
    assert report.provider.concurrency == 8 and server.max_in_flight == 8
    assert server.max_open_connections <= 8
    await assert_store_is_exact(db, server, 24)


async def test_throttling_with_and_without_retry_after_loses_and_doubles_nothing(
    db: Database, server: EmbeddingServer
) -> None:
    await many_sources(12, paragraphs=2)
    server.script = ["429:0.3", "429", "503", "429:0", "503:0.05", "500", "429"]
    started = time.monotonic()
    report = await embed(EmbedOptions(batch_size=2, concurrency=3, backoff=FAST), db)
    assert report.failures == [] and report.counts["source"].embedded == 12
    statuses = server.statuses()
    assert (statuses[429], statuses[503], statuses[500]) == (4, 2, 1)
    assert report.provider.throttled == 6 and report.provider.retried == 7
    # Retry-After: 0.3 held every request back, not just the throttled one
    # (those sent before its answer arrived, within a few ms, aside).
    [first] = [r for r in server.requests if r.action == "429:0.3"]
    held = [r for r in server.requests if first.end + 0.03 < r.start < first.end + 0.25]
    assert held == [] and time.monotonic() - started >= 0.3
    assert any(r.start >= first.end + 0.25 for r in server.requests)
    await assert_store_is_exact(db, server, 12)


async def test_concurrency_adapts_down_under_429s_and_back_up_after(
    db: Database, server: EmbeddingServer
) -> None:
    await many_sources(150)
    server.latency = 0.01
    server.throttle_above, server.throttle_requests = 2, 40  # a limit that goes away
    report = await embed(EmbedOptions(batch_size=1, concurrency=8, backoff=FAST), db)
    assert report.failures == [] and report.counts["source"].embedded == 150
    p = report.provider
    assert p.throttled > 0 and p.lowest_limit <= 2
    limits = [limit for _, limit in p.limit_history]
    assert limits[0] == 8 and min(limits) <= 2 and limits[-1] == 8
    # After the limit went away the window opened up again.
    late = server.requests[-40:]
    assert max(sum(1 for o in late if o.start < r.end and r.start < o.end) for r in late) > 2
    await assert_store_is_exact(db, server, 150)


@pytest.mark.parametrize("status", [413, 400])
async def test_a_batch_over_the_limit_is_split_and_the_size_remembered(
    db: Database, server: EmbeddingServer, status: int
) -> None:
    await many_sources(20, paragraphs=3)
    server.max_batch, server.too_large_status = 3, status
    report = await embed(EmbedOptions(batch_size=10, concurrency=2, backoff=FAST), db)
    assert report.failures == [] and report.counts["source"].embedded == 20
    assert report.provider.batch_limit is not None and report.provider.batch_limit <= 3
    rejected = [r for r in server.requests if r.status == status]
    assert 1 <= len(rejected) <= 4  # the first batches in flight, then never again
    assert all(r.size <= 3 for r in server.requests[len(server.requests) // 2 :])
    await assert_store_is_exact(db, server, 20)


async def test_a_timeout_makes_the_batch_smaller_instead_of_failing(
    db: Database, server: EmbeddingServer
) -> None:
    await many_sources(8, paragraphs=2)
    server.slow_above, server.slow_latency = 2, 1.5  # big batches outlast the timeout
    report = await embed(EmbedOptions(batch_size=8, concurrency=2, timeout=0.4, backoff=FAST), db)
    assert report.failures == [] and report.counts["source"].embedded == 8
    assert report.provider.timeouts >= 1 and report.provider.batch_limit == 2
    await assert_store_is_exact(db, server, 8)


async def test_malformed_answers_and_dropped_connections_are_retried(
    db: Database, server: EmbeddingServer
) -> None:
    await many_sources(10, paragraphs=2)
    server.script = ["malformed", "drop", "ok", "drop", "malformed"]
    report = await embed(EmbedOptions(batch_size=3, concurrency=3, backoff=FAST), db)
    assert report.failures == [] and report.counts["source"].embedded == 10
    assert report.provider.retried == 4
    assert server.connections <= 3 + 2  # the pool, and one new connection per drop
    await assert_store_is_exact(db, server, 10)


async def test_a_refused_text_fails_only_its_record_named_by_id(
    db: Database, server: EmbeddingServer
) -> None:
    await many_sources(9, paragraphs=2)
    poisoned = Source(title="bad", full_text=paragraph("POISON", 0) + paragraph("fine", 1))
    await poisoned.save()
    server.refuse = "POISON"
    report = await embed(EmbedOptions(batch_size=4, concurrency=3, backoff=FAST), db)
    assert report.counts["source"].embedded == 9 and report.failed == 1
    [(what, why)] = report.failures
    assert what == str(poisoned.id) and "HTTP 422" in why and "POISON" in why
    assert str(poisoned.id) not in {str(r) for r in await stored_states(db)}
    await assert_store_is_exact(db, server, 9)
    assert (await embed(EmbedOptions(backoff=FAST), db)).failed == 1  # still due, still refused


async def stored_states(db: Database) -> list[Any]:
    return list(await db.query("SELECT VALUE record FROM embedding_state;"))


async def test_a_provider_that_stays_down_fails_its_records_without_hanging(
    db: Database, server: EmbeddingServer
) -> None:
    await many_sources(4)
    server.script = ["503"] * 100
    report = await embed(EmbedOptions(batch_size=2, concurrency=2, retries=2, backoff=FAST), db)
    assert report.failed == 4 and report.embedded == 0
    assert all("HTTP 503" in why for _, why in report.failures)
    assert len(server.requests) == 2 * 3  # two batches, three tries each, no isolation


async def test_stopping_during_a_long_retry_after_leaves_the_records_due(
    db: Database, server: EmbeddingServer
) -> None:
    await many_sources(4)
    server.script = ["429:30"] * 4
    stop = asyncio.Event()
    asyncio.get_running_loop().call_later(0.5, stop.set)
    started = time.monotonic()
    report = await embed(EmbedOptions(batch_size=2, concurrency=2, backoff=FAST), db, stop=stop)
    assert time.monotonic() - started < 5
    assert report.interrupted and report.failures == [] and report.embedded == 0
    server.script = []
    assert (await embed(EmbedOptions(backoff=FAST), db)).embedded == 4
    await assert_store_is_exact(db, server, 4)


# --- the command line: --concurrency, and a run killed mid-way ----------------------


def provider_env(server: EmbeddingServer) -> dict[str, str]:
    return {
        "FASTNOTEBOOK_EMBEDDING_PROVIDER": "openai-compatible",
        "FASTNOTEBOOK_EMBEDDING_MODEL": "test-embed",
        "FASTNOTEBOOK_EMBEDDING_CONFIG": json.dumps(provider_config(server)),
    }


def stored(data_dir: Path) -> tuple[dict[str, list[str]], list[tuple[str, list[float]]], int]:
    async def read() -> tuple[dict[str, list[str]], list[tuple[str, list[float]]], int]:
        settings = DatabaseSettings(DatabaseSettings.embedded_url(data_dir), full_text_search=False)
        async with await open_database(settings) as db:
            rows = await db.query(
                "SELECT content, embedding FROM source_embedding ORDER BY content;"
            )
            states = await db.query("SELECT VALUE record FROM embedding_state;")
            return (
                await stored_chunks(db),
                [(r["content"], r["embedding"]) for r in rows],
                len(states),
            )

    return asyncio.run(read())


@pytest.mark.parametrize("fault", ["embedded:3", "written:2"])
def test_a_killed_concurrent_run_resumes_to_the_same_store(
    tmp_path: Path, server: EmbeddingServer, fault: str
) -> None:
    paths = write_corpus(tmp_path / "corpus", documents=9, paragraphs=5)
    server.latency = 0.02
    env = provider_env(server)
    data = tmp_path / "data"
    assert cli("ingest", str(tmp_path / "corpus"), "--quiet", data_dir=data).returncode == 0
    args = ("embed", "--quiet", "--batch-size", "3", "--concurrency", "4")
    killed = cli(*args, data_dir=data, FASTNOTEBOOK_FAULT=fault, **env)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    resumed = cli("embed", "--concurrency", "4", "--batch-size", "3", data_dir=data, **env)
    assert resumed.returncode == 0, resumed.stderr
    assert "provider: concurrency 4" in resumed.stdout
    chunks, vectors, states = stored(data)
    assert chunks == expected_chunks(paths) and states == len(paths)
    assert all(vector == expected_vector(text) for text, vector in vectors)
    assert server.max_in_flight <= 4
    done, redone = (int(n) for n in row(resumed.stdout, "sources")[1:3][::-1])
    assert done + redone == 9 and done < 9
    if fault.startswith("written"):
        assert done > 0  # what the killed run committed was kept, not redone


def test_the_command_line_checks_concurrency_timeout_and_stage_after(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = build_parser()
    parsed = parser.parse_args(
        ["embed", "--concurrency", "16", "--timeout", "90", "--stage-after", "0"]
    )
    assert (parsed.concurrency, parsed.timeout, parsed.stage_after) == (16, 90.0, 0.0)
    assert parser.parse_args(["embed"]).concurrency == 0  # the provider's default
    assert parser.parse_args(["embed"]).stage_after is None  # EmbedOptions' default
    for bad in (
        ("--concurrency", "0"),
        ("--timeout", "-1"),
        ("--timeout", "soon"),
        ("--stage-after", "-1"),
        ("--stage-after", "inf"),
        ("--stage-after", "nan"),
    ):
        with pytest.raises(SystemExit) as exited:
            parser.parse_args(["embed", *bad])
        assert exited.value.code == 2 and bad[0] in capsys.readouterr().err


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        EmbedOptions(concurrency=-1)
    with pytest.raises(ValueError, match="timeout"):
        EmbedOptions(timeout=0)
    with pytest.raises(ValueError, match="stage_after"):
        EmbedOptions(stage_after=-1)
    with pytest.raises(ValueError, match="write_rows"):
        EmbedOptions(write_rows=0)


def test_report_type() -> None:
    assert EmbedReport("m", "c").provider.requests == 0


async def test_an_in_process_model_defaults_to_one_call_at_a_time(db: Database) -> None:
    await many_sources(6)
    model_manager.configure_embedding_model("fastnotebook-fake", config={"delay": 0.02})
    try:
        alone = await embed(EmbedOptions(batch_size=1), db)
        assert alone.provider.concurrency == 1 == alone.provider.peak_in_flight
        together = await embed(EmbedOptions(batch_size=1, concurrency=3, rebuild="all"), db)
        assert together.provider.peak_in_flight == 3 and together.embedded == 6
    finally:
        model_manager.reset()
