"""Every path of the command line ends in one clear line or a useful answer:
the demo of an installed package, a data folder that is a file, ``search``
on a database that holds a note vault, and sources whose files changed.

The commands run in subprocesses with the zero-cost fake model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from helpers.cli import FAKE, cli, row
from helpers.corpus import ROOT


def test_demo_runs_from_an_installed_package(tmp_path: Path) -> None:
    """The package copied out of the repository, as pip installs it: the demo
    finds its shipped samples and keeps its database in the user's data
    folder, apart from the user's own."""
    site = tmp_path / "site"
    shutil.copytree(
        ROOT / "python" / "fastnotebook",
        site / "fastnotebook",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    env = {**os.environ, **FAKE, "PYTHONPATH": str(site), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    env.pop("SURREAL_URL", None)
    env["FASTNOTEBOOK_DATA_DIR"] = str(tmp_path / "users-own")  # never touched by the demo
    run = subprocess.run(
        [sys.executable, "-m", "fastnotebook", "demo", "--query", "secrets", "-k", "1", "-q"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    shipped = site / "fastnotebook" / "app" / "cli" / "demo_samples"
    files = sum(1 for p in shipped.rglob("*") if p.is_file())
    assert row(run.stdout, "files")[:2] == [str(files), str(files)]
    assert f"database: {tmp_path / 'xdg' / 'fastnotebook' / 'demo'}" in run.stdout
    assert 'search "secrets"' in run.stdout and " 1. " in run.stdout
    assert (tmp_path / "xdg" / "fastnotebook" / "demo" / "surrealdb").is_dir()
    assert not (tmp_path / "users-own").exists()


def test_a_data_folder_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    note = tmp_path / "a.md"
    note.write_text("# A\n\nwords\n")
    a_file = tmp_path / "data.txt"
    a_file.write_text("not a folder")
    for command, data in [
        (["ingest", str(note)], a_file),
        (["ingest", str(note)], a_file / "below"),
        (["search", "words"], a_file),
        (["sources", "list"], a_file),
        (["notes", "audit"], a_file),
        (["demo", str(note)], a_file),
    ]:
        run = cli(*command, data_dir=data)
        assert run.returncode == 1, (command, run.stderr)
        [line] = run.stderr.strip().splitlines()
        name = " ".join(command[:2] if command[0] in ("sources", "notes") else command[:1])
        blocked = "is a file" if data == a_file else f"is under {a_file}, a file"
        assert line == (
            f"fastnotebook {name}: the database folder {data} {blocked}: "
            "point --data-dir (or $FASTNOTEBOOK_DATA_DIR) at a folder"
        ), line
    assert a_file.read_text() == "not a folder"
    by_env = cli("sources", "list", FASTNOTEBOOK_DATA_DIR=str(a_file))
    assert by_env.returncode == 1 and "is a file" in by_env.stderr


def test_search_on_a_vault_database_points_to_notes_search(tmp_path: Path) -> None:
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    (vault / "Lighthouse.md").write_text("# Lighthouse\n\nThe keeper trims the wick.\n")
    assert cli("notes", "import", str(vault), "-q", data_dir=data).returncode == 0
    run = cli("search", "The keeper trims the wick.", data_dir=data)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "no hits",
        f"this database holds the note vault {vault}, which `notes search` searches: "
        "fastnotebook notes search 'The keeper trims the wick.'",
    ]
    found = cli("notes", "search", "The keeper trims the wick.", "--json", data_dir=data)
    assert json.loads(found.stdout)[0]["path"] == "Lighthouse.md"


def test_sources_list_shows_files_changed_since_ingest(tmp_path: Path) -> None:
    folder, data = tmp_path / "docs", tmp_path / "data"
    folder.mkdir()
    edited, touched, same = (folder / f"{n}.md" for n in ("edited", "touched", "same"))
    for path in (edited, touched, same):
        path.write_text(f"# {path.stem}\n\nSome text.\n")
    assert cli("ingest", str(folder), "-q", data_dir=data).returncode == 0
    listed = cli("sources", "list", data_dir=data)
    assert "changed" not in listed.stdout, listed.stdout

    edited.write_text("# edited\n\nOther text, longer than before.\n")
    stat = touched.stat()
    os.utime(touched, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    listed = cli("sources", "list", data_dir=data)
    assert listed.returncode == 0, listed.stderr
    states = {
        line.split()[-1]: line for line in listed.stdout.splitlines() if line.startswith("source:")
    }
    assert "changed, not embedded" in states[str(edited.resolve())]
    assert "changed, not embedded" in states[str(touched.resolve())]
    assert "changed" not in states[str(same.resolve())]
    assert listed.stdout.splitlines()[-1] == (
        "3 sources, 0 embedded, 2 changed on disk since ingested "
        "(`fastnotebook ingest` updates them)"
    )
    as_json = json.loads(cli("sources", "list", "--json", data_dir=data).stdout)
    assert {Path(s["path"]).name: s["changed"] for s in as_json} == {
        "edited.md": True,
        "touched.md": True,
        "same.md": False,
    }

    again = cli("ingest", str(folder), data_dir=data)
    assert row(again.stdout, "files")[:4] == ["3", "0", "1", "2"]  # touched: same text
    assert "changed" not in cli("sources", "list", data_dir=data).stdout
