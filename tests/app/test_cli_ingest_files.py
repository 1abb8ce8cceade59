"""One file never stops ``ingest`` or ``notes import``: a symlink loop, a
broken symlink, a FIFO, a file that cannot be read and a file that is not
UTF-8 are each skipped, failed or decoded on their own, named in the summary,
and every other file is stored (docs/ROBUSTNESS.md, "Bad files").

The commands run in subprocesses on real on-disk databases with the
zero-cost fake model."""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from fastnotebook.app.database import DatabaseSettings, open_database
from fastnotebook.app.pipeline.documents import discover
from fastnotebook.app.pipeline.ingest import _read_batch
from fastnotebook.notes import read_vault
from fastnotebook.textcheck import text_file
from helpers.cli import cli, row

FRENCH = "Le café crème est servi à la française, très chaud.\nÀ bientôt, garçon !\n"
LATIN_1 = FRENCH.encode("latin-1")


def stored_texts(data_dir: Path) -> dict[str, str]:
    """Each source's text by its file path."""

    async def read() -> dict[str, str]:
        settings = DatabaseSettings(DatabaseSettings.embedded_url(data_dir), full_text_search=False)
        async with await open_database(settings) as db:
            rows = await db.query("SELECT asset.file_path AS path, full_text FROM source;")
            return {row["path"]: row["full_text"] for row in rows}

    return asyncio.run(read())


def bad_folder(folder: Path) -> dict[str, Path]:
    folder.mkdir()
    paths = {
        "good": folder / "good.md",
        "loop": folder / "selflink.md",
        "fifo": folder / "pipe.md",
        "broken": folder / "dangling.md",
        "latin": folder / "latin.txt",
    }
    paths["good"].write_text("# Good\n\nEvery word of this note is stored.\n")
    paths["loop"].symlink_to("selflink.md")  # a real loop: the link names itself
    os.mkfifo(paths["fifo"])  # reading it would wait forever
    paths["broken"].symlink_to("nowhere.md")
    paths["latin"].write_bytes(LATIN_1)
    return paths


def test_ingest_skips_a_symlink_loop_a_fifo_and_a_broken_link_and_stores_the_rest(
    tmp_path: Path,
) -> None:
    paths = bad_folder(tmp_path / "docs")
    data = tmp_path / "data"
    run = cli("ingest", str(paths["good"].parent), data_dir=data)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and "unexpected" not in run.stderr
    assert row(run.stdout, "files")[:5] == ["2", "2", "0", "0", "0"]
    assert "3 files skipped" in run.stdout
    assert f"  {paths['loop']}: a symlink loop" in run.stdout
    assert f"  {paths['fifo']}: not a regular file: a FIFO (named pipe)" in run.stdout
    assert f"  {paths['broken']}: a broken symlink (to nowhere.md: " in run.stdout
    texts = stored_texts(data)
    assert sorted(texts) == sorted(str(paths[k].resolve()) for k in ("good", "latin"))

    # Named on the command line, the loop is skipped the same way, not "not found".
    alone = cli("ingest", str(paths["loop"]), data_dir=data)
    assert alone.returncode == 0, alone.stderr
    assert f"  {paths['loop']}: a symlink loop" in alone.stdout


def test_a_latin_1_file_is_stored_as_its_text_with_a_warning(tmp_path: Path) -> None:
    paths = bad_folder(tmp_path / "docs")
    data = tmp_path / "data"
    run = cli("ingest", str(paths["latin"]), data_dir=data)
    assert run.returncode == 0, run.stderr
    latin = str(paths["latin"].resolve())
    assert stored_texts(data)[latin] == FRENCH
    assert "1 files not UTF-8, decoded" in run.stdout
    assert f"  {latin}: not UTF-8: decoded as cp1252 (detected" in run.stdout
    assert f"warning: {latin}: not UTF-8: decoded as cp1252" in run.stderr

    # --encoding names it; the text is the same, the warning says who chose.
    paths["latin"].write_bytes(LATIN_1 + "Noël\n".encode("latin-1"))
    named = cli("ingest", str(paths["latin"]), "--encoding", "latin-1", data_dir=data)
    assert named.returncode == 0, named.stderr
    assert f"  {latin}: not UTF-8: decoded as latin-1 (as --encoding says)" in named.stdout
    assert stored_texts(data)[latin] == FRENCH + "Noël\n"

    wrong = cli("ingest", str(paths["latin"]), "--encoding", "klingon", data_dir=data)
    assert wrong.returncode == 2
    assert wrong.stderr.strip().splitlines() == [
        "fastnotebook ingest: --encoding must be a text encoding such as latin-1, cp1252 "
        "or shift_jis, got 'klingon' (see `fastnotebook ingest --help`)"
    ]


def test_the_encoding_rule() -> None:
    """UTF-8 and byte order marks win over --encoding; detection prefers cp1252
    on a tie; other legacy encodings are found too."""
    assert text_file("déjà".encode(), "latin-1").text == "déjà"
    assert text_file("déjà".encode(), "latin-1").warning is None
    assert text_file("Café crème".encode("latin-1")).text == "Café crème"
    russian = "Привет, как дела? Это проверка кодировки текста."
    read = text_file(russian.encode("cp1251"))
    assert (read.text, read.encoding) == (russian, "cp1251")
    assert text_file(b"caf\xe9", "latin-1").encoding == "latin-1"


def test_notes_import_decodes_a_latin_1_note_and_names_the_bad_files(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Good.md").write_text("# Good\n\nA note in UTF-8.\n")
    (vault / "Latin.md").write_bytes(b"# Latin\n\n" + LATIN_1)
    (vault / "selflink.md").symlink_to("selflink.md")
    os.mkfifo(vault / "pipe.md")
    parsed = read_vault(vault)
    assert [n.path for n in parsed.notes] == ["Good.md", "Latin.md"]
    assert parsed.notes[1].body == "# Latin\n\n" + FRENCH
    assert [(w.path, w.message.split(" (")[0]) for w in parsed.warnings] == [
        ("Latin.md", "not UTF-8: decoded as cp1252")
    ]
    assert {e.path: e.message for e in parsed.errors} == {
        "pipe.md": "not a regular file: a FIFO (named pipe)",
        "selflink.md": "cannot read the file: Too many levels of symbolic links",
    }

    data = tmp_path / "data"
    run = cli("notes", "import", str(vault), "--encoding", "latin-1", data_dir=data)
    assert run.returncode == 1, run.stderr  # two files failed; the others are stored
    assert "not UTF-8, decoded (1; check their text; --encoding names the encoding):" in run.stdout
    assert "  Latin.md: not UTF-8: decoded as latin-1 (as --encoding says)" in run.stdout
    assert "  pipe.md: not a regular file: a FIFO (named pipe)" in run.stdout
    assert "  selflink.md: cannot read the file" in run.stdout
    found = cli("notes", "search", "café crème", "--json", data_dir=data)
    assert found.returncode == 0, found.stderr
    assert any(
        hit["path"] == "Latin.md" and "café" in hit["text"] for hit in json.loads(found.stdout)
    )


def _read_as_nobody(paths: list[Path], out: int) -> None:
    """In a forked child: drop root, read ``paths`` as ingest and notes
    import do, and send the results through the pipe ``out``."""
    try:
        os.setgid(65534)
        os.setuid(65534)
        read = _read_batch(paths)
        vault = read_vault(paths[0].parent)
        result = (
            [str(d.path) for d in read.documents],
            read.failures,
            [n.path for n in vault.notes],
            [(e.path, e.message) for e in vault.errors],
        )
        os.write(out, pickle.dumps(result))
    finally:
        os._exit(0)


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder every user may enter (pytest's own are closed to others)."""
    folder = Path(tempfile.mkdtemp(prefix="fastnotebook-test-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def test_a_file_that_cannot_be_read_fails_alone(open_folder: Path) -> None:
    """chmod 000 stops only a process without root's override: as root the
    reading runs in a forked child that gives up root first (no new
    interpreter is needed, so the test does not depend on where Python is)."""
    folder = open_folder
    locked, good = folder / "locked.md", folder / "good.md"
    locked.write_text("# Locked\n\nsecret\n")
    good.write_text("# Good\n\nopen\n")
    locked.chmod(0)
    good.chmod(0o644)
    files = discover([folder]).files
    if os.getuid() != 0:
        read = _read_batch(files)
        result = (
            [str(d.path) for d in read.documents],
            read.failures,
            [n.path for n in read_vault(folder).notes],
            [(e.path, e.message) for e in read_vault(folder).errors],
        )
    else:
        if any(not p.stat().st_mode & 0o001 for p in folder.parents):
            pytest.skip(f"a parent of {folder} is closed to other users: cannot drop root")
        inside, outside = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(inside)
            _read_as_nobody(files, outside)
        os.close(outside)
        with os.fdopen(inside, "rb") as pipe:
            data = pipe.read()
        os.waitpid(child, 0)
        assert data, "the child could not read as nobody"
        result = pickle.loads(data)
    documents, failures, notes, errors = result
    assert documents == [str(good.resolve())]
    assert failures == [(str(locked.resolve()), "Permission denied")]
    assert notes == ["good.md"]
    assert errors == [("locked.md", "cannot read the file: Permission denied")]
