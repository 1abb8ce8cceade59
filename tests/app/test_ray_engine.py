"""``embed --engine ray`` (``fastnotebook.app.pipeline.ray_engine``) on a real
Ray: a local cluster of 2 CPUs started once for the module, and a cluster of
two nodes (a head and a worker started here) for the multi-node path.

The database sink must store exactly what the local pipeline stores, row for
row, and leave nothing for a later local ``embed``; a model actor killed in
the middle of a run must cost nothing but the retry."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'fastnotebook[ray]')")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is not installed")

from fastnotebook.ai import local_models, model_manager  # noqa: E402
from fastnotebook.app.database import Database, DatabaseSettings, open_database, set_database  # noqa: E402
from fastnotebook.app.domain import Note, Source  # noqa: E402
from fastnotebook.app.pipeline import embed, ingest, ray_engine  # noqa: E402
from fastnotebook.app.pipeline.ray_engine import RayOptions, embed_files_to_parquet, embed_ray  # noqa: E402
from helpers.cli import row as summary_row  # noqa: E402
from helpers.pipeline import expected_chunks, paragraph, stored_chunks, write_corpus  # noqa: E402

STATIC = {
    "FASTNOTEBOOK_EMBEDDING_PROVIDER": local_models.STATIC_PROVIDER,
    "FASTNOTEBOOK_FULL_TEXT_SEARCH": "0",
}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One local Ray (2 CPUs, no dashboard) for the module's tests."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture
def static_model() -> Iterator[None]:
    model_manager.configure_embedding_model(local_models.STATIC_PROVIDER)
    yield
    model_manager.reset()


async def _database() -> Database:
    return await open_database(DatabaseSettings("mem://", full_text_search=False))


async def _fill(db: Database, folder: Path) -> None:
    """The folder's files as sources, plus notes and an insight."""
    previous = set_database(db)
    try:
        await ingest([folder], db)
        for n, content in enumerate(
            ["A short note.", "\n\n".join(paragraph("notes", n) for n in range(10))]
        ):
            await Note(title=f"note {n}", content=content).save()
        source = Source(title="S", full_text=paragraph("pasted", 1))
        await source.save()
        await source.add_insight("summary", paragraph("insight", 1) * 4)
    finally:
        set_database(previous)


async def _store(db: Database) -> dict[str, Any]:
    """Everything the pipeline wrote, keyed by what is the same in two
    databases filled alike (file paths, titles), not by record ids."""
    chunks = await db.query(
        "SELECT source.asset.file_path AS path, source.title AS title, order, content, "
        "embedding FROM source_embedding;"
    )
    states = await db.query(
        "SELECT record.asset.file_path AS path, record.title AS title, "
        "record.source.title AS of, kind, content_hash, model, chunking, epoch, chunks "
        "FROM embedding_state;"
    )
    pooled = await db.query("SELECT title, embedding FROM note;")
    insights = await db.query("SELECT insight_type, embedding FROM source_insight;")
    key = json.dumps
    return {
        "chunks": sorted(key(r, sort_keys=True, default=str) for r in chunks),
        "states": sorted(key(r, sort_keys=True, default=str) for r in states),
        "notes": sorted(key(r, sort_keys=True, default=str) for r in pooled),
        "insights": sorted(key(r, sort_keys=True, default=str) for r in insights),
    }


@pytest.fixture
async def databases(tmp_path: Path) -> AsyncIterator[tuple[Database, Database, Path]]:
    folder = tmp_path / "corpus"
    write_corpus(folder, documents=6, paragraphs=8)
    (folder / "empty.txt").write_text("")
    one, two = await _database(), await _database()
    await _fill(one, folder)
    await _fill(two, folder)
    yield one, two, folder
    await one.close()
    await two.close()


async def test_ray_run_with_a_killed_actor_stores_what_a_local_run_stores(
    local_ray: None,
    static_model: None,
    databases: tuple[Database, Database, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first Ray run loses a model actor (SIGKILL, mid-run): Ray restarts
    it and retries its batch; nothing is lost or doubled."""
    local_db, ray_db, folder = databases
    local = await embed(None, local_db)
    marker = tmp_path / "killed"
    with monkeypatch.context() as patch:
        patch.setenv(ray_engine.FAULT_ENV, str(marker))
        report = await embed_ray(None, RayOptions(write_rows=16, batch_size=8), ray_db)
    # The actor's process really died: it wrote its pid, then SIGKILLed itself.
    assert marker.is_file() and int(marker.read_text()) > 0
    assert report.failures == [] and local.failures == []
    assert report.embedded == local.embedded == 10  # 6 files, a source, 2 notes, an insight
    for kind, counts in local.counts.items():
        assert report.counts[kind].embedded == counts.embedded
        assert report.counts[kind].chunks == counts.chunks
    stored, expected = await _store(ray_db), await _store(local_db)
    assert len(stored["chunks"]) == local.counts["source"].chunks > 20
    assert len(stored["states"]) == 10 and len(stored["notes"]) == 2
    assert stored == expected
    files = [
        p for p in folder.iterdir() if p.suffix in {".md", ".html", ".txt"} and p.stat().st_size
    ]
    from_files = {k: v for k, v in (await stored_chunks(ray_db)).items() if k is not None}
    assert from_files == expected_chunks(files)

    # A later local run finds nothing to do; a second Ray run schedules nothing.
    again = await embed(None, ray_db)
    assert again.embedded == 0 and sum(c.unchanged for c in again.counts.values()) == local.embedded
    scheduled: list[object] = []
    monkeypatch.setattr(ray.data, "from_arrow", lambda *a, **k: scheduled.append(a))
    second = await embed_ray(None, RayOptions(), ray_db)
    assert second.embedded == 0 and scheduled == []

    # One changed file: only it goes through Ray, and the stores agree again.
    monkeypatch.undo()
    changed = next(p for p in files if p.suffix == ".txt")
    changed.write_text(paragraph("changed", 1) * 5)
    for db in (local_db, ray_db):
        previous = set_database(db)
        await ingest([folder], db)
        set_database(previous)
    assert (await embed(None, local_db)).embedded == 1
    assert (await embed_ray(None, RayOptions(), ray_db)).embedded == 1
    assert await _store(ray_db) == await _store(local_db)


async def test_a_model_that_refuses_a_text_fails_that_record_only(
    local_ray: None, tmp_path: Path
) -> None:
    from fastnotebook.app.pipeline import fake_model

    model_manager.configure_embedding_model(
        fake_model.FAKE_PROVIDER, config={"dimension": 16, "fail_on": "poison"}
    )
    try:
        db = await _database()
        previous = set_database(db)
        for i in range(4):
            text = paragraph(f"s{i}", 1) + ("poison" if i == 2 else "")
            await Source(title=f"s{i}", full_text=text).save()
        report = await embed_ray(None, RayOptions(), db)
        set_database(previous)
        assert report.embedded == 3 and report.failed == 1
        assert "poison" in report.failures[0][1]
        await db.close()
    finally:
        model_manager.reset()


@pytest.fixture
async def sources_and_fake_model() -> AsyncIterator[Database]:
    """12 sources in a fresh database, the fake model configured."""
    from fastnotebook.app.pipeline import fake_model

    model_manager.configure_embedding_model(fake_model.FAKE_PROVIDER, config={"dimension": 16})
    db = await _database()
    previous = set_database(db)
    try:
        for i in range(12):
            await Source(title=f"s{i}", full_text=paragraph(f"s{i}", 1)).save()
        yield db
    finally:
        set_database(previous)
        model_manager.reset()
        await db.close()


async def test_the_database_sink_keeps_a_transaction_in_flight_per_lane(
    local_ray: None, sources_and_fake_model: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the local write stage: groups of sources two at a time, never two
    on one lane, a group of notes alone; the change counter stays exact; the
    dimension and indexes are settled after the last write."""
    from fastnotebook.app.database.vector_cache import store_changes
    from fastnotebook.app.pipeline.ray_engine import database as sink
    from fastnotebook.app.pipeline.vector_index import RunVectors

    db = sources_and_fake_model
    for i in range(4):
        await Note(title=f"n{i}", content=paragraph(f"n{i}", 1)).save()
    active: dict[int, str] = {}
    seen: list[dict[int, str]] = []
    original = sink.execute

    async def execute(db: Database, prepared: Any, lane: int = 0) -> None:
        assert lane not in active, "two transactions on one lane"
        active[lane] = "source" if "source_embedding" in prepared.sql else "pooled"
        seen.append(dict(active))
        await asyncio.sleep(0.05)
        await original(db, prepared, lane)
        del active[lane]

    finish = RunVectors.finish
    in_flight_at_finish: list[int] = []

    async def finish_after_the_writes(self: RunVectors) -> None:
        in_flight_at_finish.append(len(active))
        await finish(self)

    monkeypatch.setattr(sink, "execute", execute)
    monkeypatch.setattr(RunVectors, "finish", finish_after_the_writes)
    report = await embed_ray(None, RayOptions(write_rows=2), db)
    assert report.failures == [] and report.embedded == 16
    assert in_flight_at_finish == [0]
    assert any(len(now) == 2 for now in seen), seen
    assert all(len(now) == 1 for now in seen if "pooled" in now.values()), seen
    chunks = await db.query("SELECT count() FROM source_embedding GROUP ALL;")
    assert (await store_changes(db)).rows == chunks[0]["count"] + 4
    assert len(await db.query("SELECT * FROM embedding_state;")) == 16


async def test_a_failed_transaction_ends_the_sink_after_the_one_beside_it(
    local_ray: None, sources_and_fake_model: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error that is not the database's (no retry record by record) ends
    the run once the transaction in flight beside it has ended."""
    from fastnotebook.app.pipeline.ray_engine import database as sink

    events: list[str] = []
    release = asyncio.Event()

    async def execute(db: Database, prepared: Any, lane: int = 0) -> None:
        n = len(events)
        events.append(f"begin {n}")
        if n == 1:
            release.set()
            raise RuntimeError("boom")
        await release.wait()
        await asyncio.sleep(0.05)
        events.append(f"end {n}")

    monkeypatch.setattr(sink, "execute", execute)
    with pytest.raises(RuntimeError, match="boom"):
        await embed_ray(None, RayOptions(write_rows=2), sources_and_fake_model)
    assert events == ["begin 0", "begin 1", "end 0"]
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


async def test_cancelling_the_run_cancels_the_sinks_transactions(
    local_ray: None, sources_and_fake_model: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fastnotebook.app.pipeline.ray_engine import database as sink

    started, cancelled = [], []

    async def execute(db: Database, prepared: Any, lane: int = 0) -> None:
        started.append(lane)
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(lane)
            raise

    monkeypatch.setattr(sink, "execute", execute)
    run = asyncio.create_task(embed_ray(None, RayOptions(write_rows=2), sources_and_fake_model))
    async with asyncio.timeout(60):  # both lanes busy (one lane: fails, not hangs)
        while len(started) < 2:
            await asyncio.sleep(0.02)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert sorted(cancelled) == sorted(started) == [0, 1]


def _parquet_rows(folder: Path) -> list[dict[str, Any]]:
    import pyarrow.dataset as pads

    return pads.dataset(str(folder), format="parquet").to_table().to_pylist()  # type: ignore[no-any-return]


@pytest.mark.parametrize("as_uri", [False, True], ids=["path", "file-uri"])
def test_files_to_parquet_chunks_vectors_and_incremental(
    local_ray: None, static_model: None, tmp_path: Path, as_uri: bool
) -> None:
    folder, out = tmp_path / "in", tmp_path / "out"
    files = write_corpus(folder, documents=4, paragraphs=6)
    (folder / ".hidden.md").write_text("# hidden")
    source = f"file://{folder}" if as_uri else str(folder)
    target = f"file://{out}" if as_uri else str(out)
    report = embed_files_to_parquet(source, target, RayOptions())
    assert (report.files, report.embedded, report.unchanged, report.failures) == (4, 4, 0, [])
    rows = _parquet_rows(out)
    expected = expected_chunks(files)
    by_path: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_path.setdefault(row["path"], []).append(row)
    assert set(by_path) == set(expected)
    model = local_models.LocalStaticEmbeddingModel()
    for path, chunks in expected.items():
        got = sorted(by_path[path], key=lambda r: r["order"])
        assert [r["order"] for r in got] == list(range(len(chunks)))
        assert [r["text"] for r in got] == chunks
        assert [r["vector"] for r in got] == model.embed(chunks)
        raw = Path(path).read_bytes()
        import hashlib

        assert got[0]["source_hash"] == hashlib.sha256(raw).hexdigest()
    assert report.chunks == len(rows)

    again = embed_files_to_parquet(source, target, RayOptions())
    assert (again.unchanged, again.embedded, again.written) == (4, 0, [])
    files[1].write_text(paragraph("new", 1))
    third = embed_files_to_parquet(source, target, RayOptions())
    assert (third.unchanged, third.embedded) == (3, 1)
    latest: dict[str, str] = {}
    for row in _parquet_rows(out):
        latest[row["path"]] = max(latest.get(row["path"], ""), row["run"])
    newest = [r for r in _parquet_rows(out) if r["run"] == latest[r["path"]]]
    assert [r["text"] for r in newest if r["path"] == str(files[1])] == expected_chunks([files[1]])[
        str(files[1])
    ]


# --- the command line ---


def test_command_line_database_sink_then_local_embed_finds_nothing(
    local_ray: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from fastnotebook.app.cli import main

    for name, value in STATIC.items():
        monkeypatch.setenv(name, value)
    folder, data = tmp_path / "in", str(tmp_path / "db")
    files = write_corpus(folder, documents=3, paragraphs=4)
    assert main(["ingest", str(folder), "--data-dir", data, "-q"]) == 0
    assert main(["embed", "--engine", "ray", "--data-dir", data, "-q"]) == 0
    capsys.readouterr()
    assert main(["sources", "list", "--json", "--data-dir", data]) == 0
    listed = json.loads(capsys.readouterr().out)
    expected = expected_chunks(files)
    assert {s["path"]: s["chunks"] for s in listed} == {p: len(c) for p, c in expected.items()}
    assert all(s["embedded"] for s in listed)
    assert main(["embed", "--data-dir", data]) == 0
    # records, embedded, unchanged, failed: all done by the Ray run.
    assert summary_row(capsys.readouterr().out, "sources")[:4] == ["3", "0", "3", "0"]


def test_command_line_ray_options_need_the_ray_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fastnotebook.app.cli import main

    assert main(["embed", "--input", str(tmp_path), "--data-dir", str(tmp_path)]) == 2
    assert "need --engine ray" in capsys.readouterr().err
    assert main(["embed", "--engine", "ray", "--input", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--input needs --parquet" in err and len(err.strip().splitlines()) == 1
    assert (
        main(["embed", "--engine", "ray", "--stage-after", "1", "--data-dir", str(tmp_path)]) == 2
    )
    err = capsys.readouterr().err
    assert "--stage-after applies to the local engine" in err and len(err.strip().splitlines()) == 1


# --- two nodes ---------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ray_cli() -> str:
    return str(Path(sys.executable).parent / "ray")


def _stop_group(process: subprocess.Popen[bytes], signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signum)


def test_two_nodes_files_to_parquet_through_the_command_line(tmp_path: Path) -> None:
    """A head and a worker node (1 CPU each) started here; the command line
    joins them with --address: files read, chunked and embedded across both."""
    port = _free_port()
    address = f"127.0.0.1:{port}"
    env = {**os.environ, **STATIC, "RAY_AUTH_MODE": "disabled"}
    env.pop("SURREAL_URL", None)
    env.pop("FASTNOTEBOOK_DATA_DIR", None)
    common = ["--num-cpus", "1", "--block", "--disable-usage-stats"]
    temp = Path("/tmp") / f"fnray{port}"
    head = subprocess.Popen(
        [
            _ray_cli(),
            "start",
            "--head",
            "--port",
            str(port),
            "--node-ip-address",
            "127.0.0.1",
            "--include-dashboard",
            "false",
            "--temp-dir",
            str(temp),
            *common,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    nodes = [head]
    try:
        time.sleep(3)
        worker = subprocess.Popen(
            [_ray_cli(), "start", "--address", address, "--node-ip-address", "127.0.0.1", *common],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        nodes.append(worker)
        count = subprocess.run(
            [
                sys.executable,
                "-c",
                "import ray, time, sys\n"
                f"ray.init(address='{address}', log_to_driver=False)\n"
                "for _ in range(60):\n"
                "    alive = [n for n in ray.nodes() if n['Alive']]\n"
                "    if len(alive) == 2: break\n"
                "    time.sleep(0.5)\n"
                "print(len(alive))\n",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        assert count.stdout.strip() == "2", count.stderr[-2000:]

        folder, out = tmp_path / "in", tmp_path / "out"
        files = write_corpus(folder, documents=4, paragraphs=4)
        fastnotebook = [sys.executable, "-m", "fastnotebook"]

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            done = subprocess.run(
                [*fastnotebook, *args],
                env=env,
                capture_output=True,
                text=True,
                timeout=90,
                check=False,
            )
            assert done.returncode == 0, done.stderr[-3000:]
            return done

        expected = expected_chunks(files)
        ray_args = ["--engine", "ray", "--address", address, "--actors", "2"]
        ray_args += ["--actor-cpus", "0.5", "--task-cpus", "0.5"]
        parquet = run("embed", *ray_args, "--input", f"file://{folder}", "--parquet", str(out))
        assert "4 files embedded" in parquet.stdout, parquet.stdout
        rows = _parquet_rows(out)
        assert len(rows) == sum(len(c) for c in expected.values())
        assert {(r["path"], r["order"]): r["text"] for r in rows} == {
            (p, i): c for p, chunks in expected.items() for i, c in enumerate(chunks)
        }
    finally:
        # Each node is its own process group (the `ray start --block` started
        # here and the node's processes under it): stopped by its id.
        for node in reversed(nodes):
            _stop_group(node, signal.SIGTERM)
        for node in reversed(nodes):
            try:
                node.wait(timeout=5)
            except subprocess.TimeoutExpired:
                _stop_group(node, signal.SIGKILL)
                node.wait()
        shutil.rmtree(temp, ignore_errors=True)
