"""`fastnotebook bench --langchain`: every class against LangChain's, with
the check that both gave the same output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fastnotebook.app.cli import main
from fastnotebook.bench import corpus, timing
from fastnotebook.bench.langchain import bench_langchain, langchain_rows

HTML = "<html><body><h1>T</h1>" + "<p>Some words here. " * 100 + "</p><h2>B</h2><p>x</p></body>"
MARKDOWN = "# Title\n\n" + "A line of text with `code`.\n" * 60 + "## Two\n\nend\n"
PLAIN = "Plain words in sentences.\n\n" * 200


@pytest.fixture(autouse=True)
def _setup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timing, "MIN_TIMING_SECONDS", 0.0)


def _corpus(folder: Path) -> Path:
    folder.mkdir()
    (folder / "page.html").write_text(HTML)
    (folder / "notes.md").write_text(MARKDOWN)
    (folder / "text.txt").write_text(PLAIN)
    return folder


def test_every_class_and_call_is_timed_and_checked(tmp_path: Path) -> None:
    results = bench_langchain(corpus.load(_corpus(tmp_path / "c")), repeats=1)
    rows = {(r.cls, r.settings, r.call) for r in results}
    assert ("RecursiveCharacterTextSplitter", "1000/200", "split_documents") in rows
    assert {r.cls for r in results} >= {
        "RecursiveCharacterTextSplitter",
        "CharacterTextSplitter",
        "TokenTextSplitter",
        "MarkdownTextSplitter",
        "MarkdownHeaderTextSplitter",
        "HTMLHeaderTextSplitter",
    }
    assert all(r.identical for r in results)
    assert all(r.ours.median > 0 and r.theirs.median > 0 for r in results)
    assert all(row[-1] == "yes" for row in langchain_rows(results))


def test_command_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = main(
        [
            "bench",
            "--langchain",
            "--langchain-classes",
            "CharacterTextSplitter",
            "--corpus",
            str(_corpus(tmp_path / "c")),
            "--out",
            str(out),
            "--repeats",
            "1",
        ]
    )
    assert code == 0
    assert "LangChain splitters" in (out / "bench.md").read_text()
    saved = json.loads((out / "bench.json").read_text())
    assert {r["cls"] for r in saved["langchain"]} == {"CharacterTextSplitter"}
