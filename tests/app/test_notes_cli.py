"""``fastnotebook notes ...`` in a subprocess (the zero-cost fake model):
the commands on the mini-vault and on a real vault, mistakes as one line,
and imports killed (SIGKILL) at several points then run again.

Kill points are made deterministic by ``FASTNOTEBOOK_FAULT``
(``fastnotebook.app.pipeline.faults``): ``writing`` is just before a write
transaction is sent (with a delay, the signal lands while it is in flight),
``written`` just after one committed, ``embedded`` after a model batch."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from loguru import logger

from fastnotebook.ai import model_manager
from fastnotebook.app.cli import main
from fastnotebook.app.database import DatabaseSettings, open_database
from fastnotebook.app.pipeline import fake_model
from fastnotebook.app.vault.audit import audit_vault
from fastnotebook.app.vault.export import export_vault
from fastnotebook.app.vault.store import import_vault
from fastnotebook.notes import read_vault
from helpers.cli import cli
from helpers.notes_store import assert_same_files, markdown_files, real_vaults
from helpers.vault import write_mini_vault


def stored(data_dir: Path, out: Path | None = None) -> dict[str, Any]:
    """The audit of an on-disk database no process holds (and its export to ``out``)."""

    async def read() -> dict[str, Any]:
        settings = DatabaseSettings(DatabaseSettings.embedded_url(data_dir), full_text_search=False)
        async with await open_database(settings) as db:
            audit = await audit_vault(db)
            if out is not None:
                await export_vault(out, db)
            chunk_ids = await db.query("SELECT VALUE chunk_id FROM vault_chunk;")
            return {"audit": audit, "chunk_ids": chunk_ids}

    return asyncio.run(read())


def expected_files(vault: Path) -> dict[str, bytes]:
    parsed = read_vault(vault)
    files = markdown_files(vault)
    return {n.path: files[n.path] for n in parsed.notes}


def one_line_error(run: Any, code: int, text: str) -> None:
    assert run.returncode == code, (run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert text in lines[0], lines[0]


def test_the_commands_on_the_mini_vault(tmp_path: Path) -> None:
    vault, data = tmp_path / "vault", tmp_path / "data"
    mini = write_mini_vault(vault)
    run = cli("notes", "import", str(vault), data_dir=data)
    # Broken files are reported and skipped; everything else is imported.
    assert run.returncode == 1, run.stderr
    for path in mini.broken:
        assert f"  {path}: " in run.stdout
    report = json.loads(cli("notes", "import", str(vault), "--json", data_dir=data).stdout)
    assert report["unchanged"] == report["notes"] and report["chunks_written"] == 0
    audit = cli("notes", "audit", "--json", data_dir=data)
    assert audit.returncode == 0, audit.stderr
    counts = json.loads(audit.stdout)
    assert counts["ok"] and counts["counts"]["notes"] == report["notes"]
    assert all(i["ok"] for i in counts["invariants"])
    expected = expected_files(vault)
    for flag, name in (((), "text"), (("--from-chunks",), "chunks")):
        exported = cli("notes", "export", str(tmp_path / name), *flag, data_dir=data)
        assert exported.returncode == 0, exported.stderr
        assert f"wrote {len(expected)} files" in exported.stdout
        assert_same_files(expected, tmp_path / name)
    found = cli(
        "notes", "search", "vault graph link", "-k", "2", "--json", "--expand-links", data_dir=data
    )
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert len(hits) == 2 and {"note_id", "section_path", "neighbours", "linked"} <= set(hits[0])
    qdrant = cli("notes", "qdrant-export", str(tmp_path / "q"), data_dir=data)
    assert qdrant.returncode == 0, qdrant.stderr
    assert f"{counts['counts']['chunks']} chunks" in qdrant.stdout
    assert sorted(p.name for p in (tmp_path / "q").iterdir()) == [
        "chunks.jsonl",
        "edges.jsonl",
        "notes.jsonl",
    ]


MISTAKES = [
    (("notes", "import", "{tmp}/nowhere"), 1, "fastnotebook notes import: no vault at"),
    (("notes", "import", "{tmp}/file.md"), 1, "is a file: give the vault's folder"),
    (("notes", "import", "{tmp}/empty", "--no-embed"), 1, "no Markdown notes (*.md) in"),
    (("notes", "audit", "--data-dir", "{tmp}/none"), 1, "no database in"),
    (("notes", "search", "x", "-k", "0"), 2, "-k/--k must be a positive integer"),
    (("notes", "search", "x", "-k", "many"), 2, "-k/--k must be a positive integer"),
    (("notes", "search", "  "), 2, "the query is empty"),
    (("notes", "import", "{tmp}", "--sizes", "task=1,2"), 2, "TYPE=TARGET_MIN,TARGET_MAX"),
    (("notes", "import", "{tmp}", "--sizes", "task=300,200,600,80"), 2, "sizes['task']"),
    (("notes", "export", "{tmp}/file.md"), 1, "is a file: give a folder"),
    (("notes", "qdrant-export", "{tmp}/file.md"), 1, "is a file: give a folder"),
]


def test_mistakes_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process through ``main`` (what the command runs), then one in a
    real process; nothing is created where the command only reads."""
    (tmp_path / "file.md").write_text("# A\n")
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("FASTNOTEBOOK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FASTNOTEBOOK_EMBEDDING_PROVIDER", "fastnotebook-fake")
    for argv, code, text in MISTAKES:
        args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
        try:
            got = main(args)
        except SystemExit as e:  # argparse's mistakes
            got = int(e.code or 0)
        finally:
            logger.remove()  # main() logs to the captured stderr: back to the default
            logger.add(sys.stderr)
        err = capsys.readouterr().err
        lines = err.strip().splitlines()
        assert got == code, (args, err)
        assert len(lines) == 1 and "Traceback" not in err and text in lines[0], (args, err)
    assert not (tmp_path / "data").exists() and not (tmp_path / "none").exists()
    one_line_error(
        cli("notes", "import", str(tmp_path / "nowhere"), data_dir=tmp_path / "d"),
        1,
        "fastnotebook notes import: no vault at",
    )


def test_no_embed_then_fastnotebook_embed_fills_the_vectors(tmp_path: Path) -> None:
    vault, data = tmp_path / "vault", tmp_path / "data"
    write_mini_vault(vault, extra_notes=2)
    report = json.loads(
        cli("notes", "import", str(vault), "--no-embed", "--json", data_dir=data).stdout
    )
    assert report["embedded"] == 0 and report["missing_vectors"] > 0
    embedded = cli("embed", data_dir=data)
    assert embedded.returncode == 0, embedded.stderr
    assert f"vault chunks: embedded {report['missing_vectors']} of" in embedded.stdout
    audit = stored(data)["audit"]
    assert audit.ok and audit.counts["missing_vectors"] == 0

    async def corrupt() -> None:
        settings = DatabaseSettings(DatabaseSettings.embedded_url(data), full_text_search=False)
        async with await open_database(settings) as db:
            await db.query(
                "DELETE (SELECT VALUE id FROM vault_edge WHERE kind = 'belongs_to' LIMIT 1);"
            )

    asyncio.run(corrupt())
    damaged = cli("notes", "audit", data_dir=data)
    assert damaged.returncode == 1, damaged.stderr
    assert "VIOLATED" in damaged.stdout and "--rewrite" in damaged.stdout
    as_json = json.loads(cli("notes", "audit", "--json", data_dir=data).stdout)
    assert not as_json["ok"]
    assert [i["name"] for i in as_json["invariants"] if not i["ok"]] == ["belongs_to == chunks"]
    assert cli("notes", "import", str(vault), "-q", data_dir=data).returncode == 1  # broken files
    assert cli("notes", "audit", "-q", data_dir=data).returncode == 0


# (vault state before the killed run, fault): each run is killed at the fault.
KILL_POINTS = [
    ("fresh", "writing:2:KILL:0.003"),
    ("fresh", "embedded:3"),
    ("edited", "written:1"),
    ("edited", "writing:3:KILL:0.002"),
]


def _edit(vault: Path) -> None:
    """An edit, a rename, a deletion and a new note that resolves a link."""
    journal = vault / "journal/2024-01-01.md"
    journal.write_bytes(journal.read_bytes() + b"\nAn added line.\n")
    (vault / "folder/Sub Note.md").rename(vault / "folder/Renamed.md")
    (vault / "beta.md").unlink()
    (vault / "Missing Note.md").write_text("Now here: [[Index]].\n")


@pytest.mark.parametrize(("state", "fault"), KILL_POINTS)
def test_a_killed_import_resumes_to_exactly_the_expected_store(
    tmp_path: Path, state: str, fault: str
) -> None:
    vault, data = tmp_path / "vault", tmp_path / "data"
    write_mini_vault(vault, extra_notes=2)
    batches = ("--batch-notes", "3")
    if state == "edited":
        assert cli("notes", "import", str(vault), "-q", data_dir=data).returncode == 1
        _edit(vault)
    killed = cli(
        "notes", "import", str(vault), "-q", *batches, data_dir=data, FASTNOTEBOOK_FAULT=fault
    )
    assert killed.returncode == -signal.SIGKILL, (killed.stdout, killed.stderr)
    resumed = cli("notes", "import", str(vault), "--json", *batches, data_dir=data)
    assert resumed.returncode == 1, resumed.stderr  # the broken files, reported again
    assert json.loads(resumed.stdout)["added"] + json.loads(resumed.stdout)["changed"] > 0
    state_now = stored(data, tmp_path / "out")
    audit = state_now["audit"]
    assert audit.ok, audit.violated
    parsed = read_vault(vault)
    expected_chunks = sorted(c.id for chunks in parsed.chunks.values() for c in chunks)
    assert sorted(state_now["chunk_ids"]) == expected_chunks  # nothing lost or doubled
    assert audit.counts["edges"] == len(parsed.edges)
    assert audit.counts["missing_vectors"] == 0
    assert_same_files(expected_files(vault), tmp_path / "out")
    final = json.loads(cli("notes", "import", str(vault), "--json", data_dir=data).stdout)
    assert final["unchanged"] == final["notes"] == len(parsed.notes)


@pytest.fixture
def fake_in_process() -> Any:
    model_manager.configure_embedding_model(fake_model.FAKE_PROVIDER, config={"dimension": 16})
    yield
    model_manager.reset()


def test_a_real_vault_round_trips_and_audits(tmp_path: Path, fake_in_process: None) -> None:
    """Each folder of ``FASTNOTEBOOK_TEST_VAULT`` (e.g. obsidian-help's en and
    de): import, audit, export from the text and from the chunks, byte-compare."""
    for number, vault in enumerate(real_vaults()):

        async def run(vault: Path = vault, number: int = number) -> None:
            settings = DatabaseSettings("mem://", full_text_search=False)
            async with await open_database(settings) as db:
                report = await import_vault(vault, db)
                assert report.notes > 0 and report.missing_vectors == 0
                audit = await audit_vault(db)
                assert audit.ok, (vault, audit.violated)
                assert audit.counts["chunks"] > report.notes
                expected = {
                    path: data
                    for path, data in markdown_files(vault).items()
                    if path not in {e.path for e in report.errors}
                }
                for from_chunks in (False, True):
                    out = tmp_path / f"{number}-{from_chunks}"
                    exported = await export_vault(out, db, from_chunks=from_chunks)
                    assert not exported.mismatches
                    assert_same_files(expected, out)

        asyncio.run(run())
