"""The evaluation's data: corpora and questions with reference excerpts.

- ``load_chroma(path)``: Chroma's general evaluation data (5 corpora, 472
  questions; MIT), from a checkout of github.com/brandonstarxel/chunking_evaluation,
  its ``general_evaluation_data`` folder, or any folder holding
  ``questions_df.csv`` and ``corpora/<corpus_id>.md``.
- ``load_corpus(folder, questions)``: a folder of text files and a questions
  file, CSV or JSON Lines. Each question has ``question``, ``references`` (a
  list of ``{"start_index": a, "end_index": b}`` character ranges, of
  ``{"content": "excerpt"}``, or of excerpt strings; an excerpt is located in
  the corpus) and optionally ``corpus_id`` (the file's path relative to the
  folder; without it the file that holds the excerpts).
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastnotebook.bench.quality.metrics import Range

__all__ = [
    "CHROMA_ENV",
    "Dataset",
    "Question",
    "chroma_path",
    "find_text",
    "load_chroma",
    "load_corpus",
    "subset",
]

CHROMA_ENV = "FASTNOTEBOOK_CHROMA_EVAL"
"""The environment variable naming the Chroma data (see ``load_chroma``)."""

_CHROMA_DATA = Path("chunking_evaluation", "evaluation_framework", "general_evaluation_data")
_TEXT_SUFFIXES = {".md", ".markdown", ".txt", ".text", ".rst", ".html", ".htm", ".json"}


@dataclass(frozen=True)
class Question:
    text: str
    corpus_id: str
    references: tuple[Range, ...]


@dataclass
class Dataset:
    name: str
    corpora: dict[str, str]
    questions: list[Question] = field(default_factory=list)

    def check(self) -> None:
        """``ValueError`` if a question names a missing corpus or a range
        outside it or empty."""
        for i, q in enumerate(self.questions):
            corpus = self.corpora.get(q.corpus_id)
            if corpus is None:
                raise ValueError(f"question {i + 1} names corpus {q.corpus_id!r}, which is absent")
            if not q.references:
                raise ValueError(f"question {i + 1} has no references")
            for a, b in q.references:
                if not 0 <= a < b <= len(corpus):
                    raise ValueError(
                        f"question {i + 1}: reference [{a}:{b}] is not a range of "
                        f"{q.corpus_id!r} ({len(corpus)} characters)"
                    )


def chroma_path(path: str | os.PathLike[str] | None = None) -> Path | None:
    """The folder of Chroma's data: ``path``, else ``$FASTNOTEBOOK_CHROMA_EVAL``;
    ``None`` if neither is given."""
    raw = path if path is not None else os.environ.get(CHROMA_ENV)
    if not raw:
        return None
    root = Path(raw)
    for candidate in (root, root / _CHROMA_DATA, root / _CHROMA_DATA.name):
        if (candidate / "questions_df.csv").is_file():
            return candidate
    raise ValueError(
        f"{root} holds no questions_df.csv (give a checkout of chunking_evaluation, "
        "its general_evaluation_data folder, or a folder with questions_df.csv and corpora/)"
    )


def load_chroma(path: str | os.PathLike[str] | None = None) -> Dataset:
    """Chroma's general evaluation data (see the module's docstring)."""
    folder = chroma_path(path)
    if folder is None:
        raise ValueError(f"no data: give a path or set {CHROMA_ENV}")
    questions = list(_read_questions(folder / "questions_df.csv"))
    corpora: dict[str, str] = {}
    for row in questions:
        corpus_id = str(row.get("corpus_id") or "")
        if corpus_id and corpus_id not in corpora:
            file = folder / "corpora" / f"{corpus_id}.md"
            if not file.is_file():
                raise ValueError(f"{folder}: questions name corpus {corpus_id!r}, no {file}")
            corpora[corpus_id] = file.read_text(encoding="utf-8")
    dataset = Dataset(
        "chroma", corpora, [_question(i, row, corpora) for i, row in enumerate(questions)]
    )
    dataset.check()
    return dataset


def load_corpus(folder: str | os.PathLike[str], questions: str | os.PathLike[str]) -> Dataset:
    """A folder of text files and its questions (see the module's docstring)."""
    from fastnotebook.textcheck import BinaryFileError, read_text_file

    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"{root} is not a folder")
    corpora: dict[str, str] = {}
    for file in sorted(root.rglob("*")):
        if file.is_file() and file.suffix.lower() in _TEXT_SUFFIXES:
            try:
                corpora[file.relative_to(root).as_posix()] = read_text_file(file).text
            except BinaryFileError:
                continue
    if not corpora:
        raise ValueError(f"{root} holds no text files ({', '.join(sorted(_TEXT_SUFFIXES))})")
    rows = list(_read_questions(Path(questions)))
    dataset = Dataset(
        root.name, corpora, [_question(i, row, corpora) for i, row in enumerate(rows)]
    )
    dataset.check()
    return dataset


def subset(dataset: Dataset, corpus_ids: list[str]) -> Dataset:
    """The dataset restricted to ``corpus_ids`` (``ValueError`` naming an unknown one)."""
    unknown = [c for c in corpus_ids if c not in dataset.corpora]
    if unknown:
        raise ValueError(
            f"unknown corpus {', '.join(unknown)}; choose among {', '.join(dataset.corpora)}"
        )
    return Dataset(
        dataset.name,
        {c: dataset.corpora[c] for c in corpus_ids},
        [q for q in dataset.questions if q.corpus_id in corpus_ids],
    )


def _read_questions(path: Path) -> Iterator[dict[str, Any]]:
    if not path.is_file():
        raise ValueError(f"no questions file {path}")
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}, line {number}: not JSON ({e.msg})") from e
                if not isinstance(row, dict):
                    raise ValueError(f"{path}, line {number}: not a JSON object")
                yield row
        return
    reader = csv.DictReader(text.splitlines(keepends=True))
    if reader.fieldnames is None or not {"question", "references"} <= set(reader.fieldnames):
        raise ValueError(f"{path}: a CSV file needs the columns question and references")
    for number, row in enumerate(reader, 2):
        try:
            references = json.loads(row["references"])
        except json.JSONDecodeError:
            references = [row["references"]]  # one excerpt as plain text
        if not isinstance(references, list):
            raise ValueError(f"{path}, line {number}: references must be a JSON list")
        yield {**row, "references": references}


def _question(index: int, row: Mapping[str, Any], corpora: Mapping[str, str]) -> Question:
    where = f"question {index + 1}"
    text = row.get("question")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{where}: no question text")
    raw = row.get("references")
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"{where}: references must be a non-empty list")
    corpus_id = row.get("corpus_id") or row.get("corpus") or None
    if corpus_id is not None and str(corpus_id) not in corpora:
        raise ValueError(f"{where}: no corpus {corpus_id!r}")
    ranges: list[Range] = []
    for ref in raw:
        excerpt: str | None
        if isinstance(ref, str):
            excerpt, span = ref, None
        elif isinstance(ref, dict):
            excerpt = ref.get("content") or ref.get("text") or ref.get("excerpt")
            start, end = (
                ref.get("start_index", ref.get("start")),
                ref.get("end_index", ref.get("end")),
            )
            span = None if start is None or end is None else (int(start), int(end))
        elif isinstance(ref, list) and len(ref) == 2:
            excerpt, span = None, (int(ref[0]), int(ref[1]))
        else:
            raise ValueError(f"{where}: a reference is a range, an excerpt or an object of either")
        if span is None:
            if not excerpt:
                raise ValueError(f"{where}: a reference has neither a range nor an excerpt")
            corpus_id, span = _locate(where, excerpt, corpus_id, corpora)
        ranges.append(span)
    if corpus_id is None:
        if len(corpora) != 1:
            raise ValueError(f"{where}: ranges without corpus_id, and several corpora")
        corpus_id = next(iter(corpora))
    return Question(text, str(corpus_id), tuple(ranges))


def _locate(
    where: str, excerpt: str, corpus_id: str | None, corpora: Mapping[str, str]
) -> tuple[str, Range]:
    """The corpus and range of ``excerpt`` (verbatim, else with its runs of
    whitespace matching any whitespace)."""
    names = [corpus_id] if corpus_id is not None else list(corpora)
    for name in names:
        found = find_text(corpora[name], excerpt)
        if found is not None:
            return name, found
    in_what = f"corpus {corpus_id!r}" if corpus_id is not None else "any corpus"
    short = excerpt if len(excerpt) <= 60 else excerpt[:57] + "..."
    raise ValueError(f"{where}: the excerpt {short!r} is not in {in_what}")


def find_text(text: str, excerpt: str, start: int = 0) -> Range | None:
    """The first range of ``excerpt`` in ``text`` from ``start``: verbatim,
    else with each run of whitespace matching any run of whitespace (a
    chunker that rejoined lines), else with whitespace anywhere in ``text``
    between its characters (one that dropped a thin space inside a line);
    ``None`` if absent."""
    at = text.find(excerpt, start)
    if at >= 0:
        return at, at + len(excerpt)
    words = excerpt.split()
    if not words:
        return None
    match = re.compile(r"\s+".join(map(re.escape, words))).search(text, start)
    if match is None:
        glyphs = "".join(words)
        match = re.compile(r"\s*".join(map(re.escape, glyphs))).search(text, start)
    return None if match is None else (match.start(), match.end())
