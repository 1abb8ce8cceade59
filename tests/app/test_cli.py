"""The ``fastnotebook`` command line in subprocesses, on temporary databases:
the commands and their output, and runs killed (SIGKILL) or interrupted
(Ctrl-C) at chosen points, then resumed.

The kill points are made deterministic by ``FASTNOTEBOOK_FAULT`` (see
``fastnotebook.app.pipeline.faults``), the model is the zero-cost fake one."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any

import pytest

from fastnotebook.app.cli import build_parser
from fastnotebook.app.cli.demo import REPOSITORY
from fastnotebook.app.database import DatabaseSettings, open_database
from helpers.cli import cli, row
from helpers.pipeline import expected_chunks, stored_chunks, write_corpus


def database_state(data_dir: Path) -> dict[str, Any]:
    """Sources, chunks and states of an on-disk database no process holds."""

    async def read() -> dict[str, Any]:
        settings = DatabaseSettings(DatabaseSettings.embedded_url(data_dir), full_text_search=False)
        async with await open_database(settings) as db:
            return {
                "sources": await db.query("SELECT VALUE asset.file_path FROM source;"),
                "chunks": await stored_chunks(db),
                "states": await db.query("SELECT VALUE record FROM embedding_state;"),
            }

    return asyncio.run(read())


def test_the_parser_knows_every_command() -> None:
    parser = build_parser()
    for argv in (
        ["ingest", "x"],
        ["embed", "--rebuild", "all", "--notes", "--quiet"],
        ["search", "q", "-k", "3"],
        ["chunk", "f", "--json"],
        ["demo"],
        ["bench"],
        ["serve"],
    ):
        assert parser.parse_args(argv).run
    with pytest.raises(SystemExit):
        parser.parse_args(["embed", "--rebuild", "some"])


def test_ingest_embed_search_and_chunk(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path / "corpus")
    data = tmp_path / "data"
    ingested = cli("ingest", str(tmp_path / "corpus"), data_dir=data)
    assert ingested.returncode == 0, ingested.stderr
    assert row(ingested.stdout, "files")[:4] == ["6", "6", "0", "0"]
    assert "1 files skipped (type not supported)" in ingested.stdout
    assert "[####################]  ingest 6/6 files" in ingested.stderr
    embedded = cli("embed", data_dir=data)
    assert embedded.returncode == 0, embedded.stderr
    assert "[####################]  embed 6/6 records" in embedded.stderr
    assert row(embedded.stdout, "sources")[:4] == ["6", "6", "0", "0"]
    assert "model fastnotebook-fake/hash-vectors" in embedded.stdout
    assert "busy time: model" in embedded.stdout
    again = cli("embed", "--quiet", data_dir=data)
    assert (again.returncode, again.stdout) == (0, "")
    quiet = cli("embed", "--quiet", "--rebuild", "all", data_dir=data)
    assert (quiet.returncode, quiet.stdout) == (0, "") and "records" not in quiet.stderr
    rebuilt = cli("embed", "--rebuild", "all", "--sources", data_dir=data)
    assert row(rebuilt.stdout, "sources")[:3] == ["6", "6", "0"]
    assert "notes" not in rebuilt.stdout
    # The fake model's vectors carry no meaning: a chunk's own text finds it.
    expected = expected_chunks(paths)
    some_chunk = expected[str(paths[1].resolve())][-1]
    found = cli("search", some_chunk, "-k", "2", data_dir=data)
    assert found.returncode == 0, found.stderr
    head, first = found.stdout.splitlines()[:2]
    assert head == "2 sources (2 chunks)"
    assert first == " 1. 1.000  Page 1  [" + str(paths[1].resolve()) + "]"
    as_json = json.loads(cli("search", some_chunk, "--json", data_dir=data).stdout)
    assert as_json[0]["similarity"] == pytest.approx(1.0)
    chunked = cli("chunk", str(paths[2]), "--json")
    assert json.loads(chunked.stdout)["chunks"] == expected[str(paths[2].resolve())]
    assert database_state(data)["chunks"] == expected


def test_failures_are_reported_and_set_the_exit_code(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path / "corpus", documents=4)
    paths[0].write_text("POISON " * 10)
    data = tmp_path / "data"
    cli("ingest", str(tmp_path / "corpus"), "--quiet", data_dir=data)
    config = json.dumps({"dimension": 16, "fail_on": "POISON"})
    run = cli("embed", data_dir=data, FASTNOTEBOOK_EMBEDDING_CONFIG=config)
    assert run.returncode == 1
    assert "failed (1):" in run.stdout and "refuses texts containing 'POISON'" in run.stdout
    assert row(run.stdout, "sources")[:4] == ["4", "3", "0", "1"]
    missing = cli("ingest", str(tmp_path / "nowhere"), data_dir=data)
    assert missing.returncode == 1 and "not found" in missing.stderr
    other_model = json.dumps({"dimension": 8})
    mismatch = cli("search", "x", data_dir=data, FASTNOTEBOOK_EMBEDDING_CONFIG=other_model)
    assert mismatch.returncode == 1
    assert mismatch.stderr.strip().endswith(
        "fastnotebook search: the query has dimension 8 but the stored vectors have 16"
    )


KILL_POINTS = [
    ("ingest", "writing:1:KILL:0.002"),
    ("ingest", "ingested:1"),
    ("embed", "embedded:2"),
    ("embed", "writing:2:KILL:0.003"),
    ("embed", "written:1"),
    ("embed", "written:3"),
]


@pytest.mark.parametrize(("command", "fault"), KILL_POINTS)
def test_a_killed_run_resumes_to_exactly_the_expected_rows(
    tmp_path: Path, command: str, fault: str
) -> None:
    paths = write_corpus(tmp_path / "corpus", documents=9, paragraphs=5)
    data = tmp_path / "data"
    corpus = str(tmp_path / "corpus")
    steps = [("ingest", corpus, "--quiet"), ("embed", "--quiet", "--batch-size", "3")]
    for step in steps:
        env = {"FASTNOTEBOOK_FAULT": fault} if step[0] == command else {}
        run = cli(*step, data_dir=data, **env)
        if step[0] == command:
            assert run.returncode == -signal.SIGKILL, (run.stdout, run.stderr)
            break
        assert run.returncode == 0, run.stderr
    for step in steps:
        resumed = cli(*step, data_dir=data)
        assert resumed.returncode == 0, resumed.stderr
    state = database_state(data)
    expected = expected_chunks(paths)
    assert sorted(state["sources"]) == sorted(expected)
    assert state["chunks"] == expected
    assert len(state["states"]) == len(set(map(str, state["states"]))) == len(paths)
    final = cli("embed", data_dir=data)
    assert row(final.stdout, "sources")[:3] == ["9", "0", "9"]


def test_ctrl_c_stops_after_the_batch_in_flight(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path / "corpus", documents=9, paragraphs=5)
    data = tmp_path / "data"
    cli("ingest", str(tmp_path / "corpus"), "--quiet", data_dir=data)
    run = cli("embed", "--batch-size", "3", data_dir=data, FASTNOTEBOOK_FAULT="embedded:4:INT")
    assert run.returncode == 130, run.stderr
    assert "stopping after the batch in flight" in run.stderr
    assert "interrupted: run `fastnotebook embed` again to finish" in run.stdout
    partial = database_state(data)["chunks"]
    expected = expected_chunks(paths)
    assert 0 < len(partial) < len(paths)
    assert all(expected[path] == chunks for path, chunks in partial.items())
    assert cli("embed", "--quiet", data_dir=data).returncode == 0
    assert database_state(data)["chunks"] == expected


def test_demo_is_idempotent(tmp_path: Path) -> None:
    assert any((REPOSITORY / "samples").rglob("*.md")), "the bundled samples are missing"
    write_corpus(tmp_path / "corpus", documents=3)
    args = ("demo", str(tmp_path / "corpus"), "--query", "topic1 detail", "-k", "1")
    first = cli(*args, data_dir=tmp_path / "data")
    assert first.returncode == 0, first.stderr
    assert 'search "topic1 detail"' in first.stdout and " 1. " in first.stdout
    second = cli(*args, data_dir=tmp_path / "data")
    assert row(second.stdout, "sources")[:3] == ["3", "0", "3"]
