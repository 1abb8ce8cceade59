"""``fastnotebook.open_notebook``: the names, constants, environment rules and
app-facing behaviour of Open Notebook's current utils modules."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from loguru import logger

from fastnotebook import text_utils as fn_text_utils
from fastnotebook.bench import reference
from fastnotebook.open_notebook import (
    MODULES,
    chunking,
    context_builder,
    embedding,
    text_utils,
    token_utils,
    version_utils,
)
from helpers.open_notebook import (
    forget_app_modules,
    open_notebook_src,
    public_signatures,
    write_fake_app,
)

ENV_NAMES = (
    "OPEN_NOTEBOOK_CHUNK_SIZE",
    "OPEN_NOTEBOOK_CHUNK_OVERLAP",
    "OPEN_NOTEBOOK_MIN_CHUNK_SIZE",
    "OPEN_NOTEBOOK_EMBEDDING_BATCH_SIZE",
)

#: The public names of each module at Open Notebook 1.14 (206d77ca).
HEAD_NAMES: dict[str, set[str]] = {
    "chunking": {
        "CHUNK_SIZE",
        "CHUNK_OVERLAP",
        "MIN_CHUNK_SIZE",
        "HIGH_CONFIDENCE_THRESHOLD",
        "ContentType",
        "chunk_text",
        "detect_content_type",
        "detect_content_type_from_extension",
        "detect_content_type_from_heuristics",
        "token_count",
    },
    "token_utils": {"token_count", "token_cost", "TIKTOKEN_CACHE_DIR"},
    "embedding": {
        "EMBEDDING_BATCH_SIZE",
        "EMBEDDING_MAX_RETRIES",
        "EMBEDDING_RETRY_DELAY",
        "CHUNK_SIZE",
        "ContentType",
        "chunk_text",
        "token_count",
        "mean_pool_embeddings",
        "generate_embeddings",
        "generate_embedding",
    },
    "text_utils": {
        "THINK_PATTERN",
        "THINK_PATTERN_NO_OPEN",
        "remove_non_ascii",
        "remove_non_printable",
        "parse_thinking_content",
        "clean_thinking_content",
        "extract_text_content",
    },
    "version_utils": {
        "get_version_from_github_async",
        "get_version_from_github",
        "get_installed_version",
        "compare_versions",
    },
    "context_builder": {
        "Note",
        "Notebook",
        "Source",
        "SourceInsight",
        "DatabaseOperationError",
        "NotFoundError",
        "token_count",
        "build_notebook_context",
        "build_source_context",
    },
}


@pytest.fixture
def fake_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """A stand-in ``open_notebook`` package on sys.path; yields its domain module."""
    forget_app_modules()
    monkeypatch.syspath_prepend(str(write_fake_app(tmp_path / "app")))
    for name in context_builder._APP_NAMES:
        context_builder.__dict__.pop(name, None)
    yield importlib.import_module("open_notebook.domain.notebook")
    for name in context_builder._APP_NAMES:
        context_builder.__dict__.pop(name, None)
    forget_app_modules()


@pytest.fixture
def no_app(monkeypatch: pytest.MonkeyPatch) -> None:
    """No importable ``open_notebook`` (whatever the environment holds)."""
    forget_app_modules()
    monkeypatch.setitem(sys.modules, "open_notebook", None)  # type: ignore[arg-type]
    for name in context_builder._APP_NAMES:
        context_builder.__dict__.pop(name, None)


@pytest.mark.parametrize("name", MODULES)
def test_every_public_name_of_the_release_exists(name: str) -> None:
    module = importlib.import_module(f"fastnotebook.open_notebook.{name}")
    missing = sorted(n for n in HEAD_NAMES[name] if n not in dir(module))
    assert not missing, f"fastnotebook.open_notebook.{name} lacks {missing}"


@pytest.mark.parametrize("name", MODULES)
def test_names_and_signatures_match_the_checkout(name: str) -> None:
    head = public_signatures(open_notebook_src() / "open_notebook" / "utils" / f"{name}.py")
    assert set(head) - {"logger"} == HEAD_NAMES[name], f"{name}: the names differ"
    module = importlib.import_module(f"fastnotebook.open_notebook.{name}")
    for attr, params in head.items():
        if attr == "logger":
            continue
        if params is None:
            continue
        ours = inspect.signature(getattr(module, attr))
        text = ", ".join(
            p.name + ("" if p.default is inspect.Parameter.empty else "=" + repr(p.default))
            for p in ours.parameters.values()
        )
        assert text == params, f"{name}.{attr}({text}) differs from the original ({params})"


def test_defaults_are_the_releases() -> None:
    for var in ENV_NAMES:
        if var in os.environ:
            pytest.skip(f"{var} is set in this environment")
    assert (chunking.CHUNK_SIZE, chunking.CHUNK_OVERLAP, chunking.MIN_CHUNK_SIZE) == (400, 60, 5)
    assert chunking.HIGH_CONFIDENCE_THRESHOLD == 0.8
    assert embedding.EMBEDDING_BATCH_SIZE == 50
    assert (embedding.EMBEDDING_MAX_RETRIES, embedding.EMBEDDING_RETRY_DELAY) == (3, 2)
    assert embedding.CHUNK_SIZE == chunking.CHUNK_SIZE


@pytest.fixture
def reload_with_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Re-imports chunking and embedding under a given environment, and
    restores them under a clean one afterwards."""

    def reload(env: dict[str, str]) -> tuple[ModuleType, ModuleType]:
        for var in ENV_NAMES:
            monkeypatch.delenv(var, raising=False)
        for var, value in env.items():
            monkeypatch.setenv(var, value)
        return importlib.reload(chunking), importlib.reload(embedding)

    yield reload
    for var in ENV_NAMES:
        monkeypatch.delenv(var, raising=False)
    importlib.reload(chunking)
    importlib.reload(embedding)


@pytest.mark.parametrize(
    ("env", "sizes", "message"),
    [
        ({"OPEN_NOTEBOOK_CHUNK_SIZE": "50"}, (100, 15, 5), "is too small"),
        ({"OPEN_NOTEBOOK_CHUNK_SIZE": "9000"}, (9000, 1350, 5), "is very large"),
        ({"OPEN_NOTEBOOK_CHUNK_SIZE": "abc"}, (400, 60, 5), "Invalid OPEN_NOTEBOOK_CHUNK_SIZE"),
        ({"OPEN_NOTEBOOK_CHUNK_SIZE": ""}, (400, 60, 5), None),
        ({"OPEN_NOTEBOOK_CHUNK_OVERLAP": "-3"}, (400, 0, 5), "cannot be negative"),
        ({"OPEN_NOTEBOOK_CHUNK_OVERLAP": "400"}, (400, 60, 5), "cannot be >= chunk size"),
        ({"OPEN_NOTEBOOK_CHUNK_OVERLAP": "x"}, (400, 60, 5), "Invalid OPEN_NOTEBOOK_CHUNK_OVERLAP"),
        ({"OPEN_NOTEBOOK_MIN_CHUNK_SIZE": "-1"}, (400, 60, 0), "cannot be negative"),
        (
            {"OPEN_NOTEBOOK_MIN_CHUNK_SIZE": ""},
            (400, 60, 5),
            "Invalid OPEN_NOTEBOOK_MIN_CHUNK_SIZE",
        ),
        ({"OPEN_NOTEBOOK_MIN_CHUNK_SIZE": "12"}, (400, 60, 12), None),
        (
            {"OPEN_NOTEBOOK_CHUNK_SIZE": "200", "OPEN_NOTEBOOK_CHUNK_OVERLAP": "20"},
            (200, 20, 5),
            "Using custom chunk overlap: 20 tokens",
        ),
    ],
)
def test_environment_is_read_at_import_and_clamped(
    reload_with_env: Any, env: dict[str, str], sizes: tuple[int, int, int], message: str | None
) -> None:
    messages: list[str] = []
    sink = logger.add(lambda m: messages.append(m.record["message"]), level="INFO")
    try:
        on_chunking, on_embedding = reload_with_env(env)
    finally:
        logger.remove(sink)
    assert sizes == (on_chunking.CHUNK_SIZE, on_chunking.CHUNK_OVERLAP, on_chunking.MIN_CHUNK_SIZE)
    assert sizes[0] == on_embedding.CHUNK_SIZE
    if message:
        assert any(message in m for m in messages), messages
    text = "A sentence of several tokens, said twice. " * 400
    expected = reference.chunk_text(
        text,
        "plain",
        unit="tokens",
        chunk_size=sizes[0],
        chunk_overlap=sizes[1],
        min_chunk_size=sizes[2],
    )
    assert on_chunking.chunk_text(text, on_chunking.ContentType.PLAIN) == expected


@pytest.mark.parametrize(("raw", "size"), [("7", 7), (" 12 ", 12), ("0", 50), ("x", 50)])
def test_embedding_batch_size_from_the_environment(
    reload_with_env: Any, raw: str, size: int
) -> None:
    _, on_embedding = reload_with_env({"OPEN_NOTEBOOK_EMBEDDING_BATCH_SIZE": raw})
    assert size == on_embedding.EMBEDDING_BATCH_SIZE


def test_chunk_text_reads_its_constants_at_each_call(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "word " * 600 + "\n\n.\n\n" + "word " * 600
    ct = chunking.ContentType.PLAIN
    monkeypatch.setattr(chunking, "CHUNK_SIZE", 400)
    monkeypatch.setattr(chunking, "CHUNK_OVERLAP", 60)
    monkeypatch.setattr(chunking, "MIN_CHUNK_SIZE", 5)
    assert "." not in chunking.chunk_text(text, ct)
    monkeypatch.setattr(chunking, "MIN_CHUNK_SIZE", 0)
    assert "." in chunking.chunk_text(text, ct)
    monkeypatch.setattr(chunking, "CHUNK_SIZE", 150)
    monkeypatch.setattr(chunking, "CHUNK_OVERLAP", 10)
    expected = reference.chunk_text(
        text, "plain", unit="tokens", chunk_size=150, chunk_overlap=10, min_chunk_size=0
    )
    assert chunking.chunk_text(text, ct) == expected
    assert len(expected) > 4


def test_chunk_text_edge_cases() -> None:
    assert chunking.chunk_text("") == []
    assert chunking.chunk_text(" \n\t ") == []
    short = "  a short text, kept as it is \n"
    assert chunking.chunk_text(short) == [short]
    with pytest.raises(TypeError, match="content_type"):
        chunking.chunk_text("word " * 500, content_type="plain")  # type: ignore[arg-type]
    assert chunking.ContentType is importlib.import_module("fastnotebook.chunking").ContentType


def test_whitespace_only_text_gives_no_chunks_as_the_originals_strip() -> None:
    # The wrapper leaves the whitespace check of a str to Rust: every
    # character Python's `str.strip` removes, alone, repeated and mixed,
    # under each content type, and text with one other character, as the
    # original's `if not text or not text.strip()`.
    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace()]
    texts = [*spaces, "".join(spaces), "".join(spaces) * 300, " \u200b ", "\x00", " \u00ad\n"]
    for text in texts:
        expected = [] if not text.strip() else None
        for ct in (None, *chunking.ContentType):
            got = chunking.chunk_text(text, ct)
            if expected is not None:
                assert got == expected, (text, ct)
            else:
                assert got, (text, ct)
    # Other types keep the original's check (and its errors past it).
    assert chunking.chunk_text(b"  \n") == []  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        chunking.chunk_text(b"bytes " * 400)  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        chunking.chunk_text(42)  # type: ignore[arg-type]


def test_content_type_detection_follows_the_extension_table() -> None:
    for ext, kind in chunking._EXTENSION_TO_CONTENT_TYPE.items():
        assert chunking.detect_content_type_from_extension(f"x{ext.upper()}") is kind
        assert reference.detect_content_type_from_extension(f"x{ext}") == kind.value
    assert chunking.detect_content_type_from_extension("x.pdf") is None
    assert chunking.detect_content_type_from_extension(None) is None
    page = "<!DOCTYPE html><html><body><div><p>x</p></div></body></html>"
    assert chunking.detect_content_type(page, "page.txt") is chunking.ContentType.HTML
    assert chunking.detect_content_type_from_heuristics("hi") == (chunking.ContentType.PLAIN, 0.5)


def test_token_count_is_tiktokens_o200k() -> None:
    count = reference.token_counter("o200k_base")
    for text in [
        "",
        "hello world",
        "<|endoftext|> is text here",
        "日本語のテキスト 🎉",
        "x" * 5000,
    ]:
        assert token_utils.token_count(text) == count(text)
    assert token_utils.token_cost(2_000_000) == pytest.approx(0.3)
    assert token_utils.token_cost(1000, cost_per_million=2.0) == pytest.approx(0.002)


def test_text_utils_is_the_same_contract() -> None:
    for name in HEAD_NAMES["text_utils"]:
        assert getattr(text_utils, name) is getattr(fn_text_utils, name)
    assert text_utils.parse_thinking_content("<think>a</think>b") == ("a", "b")
    assert text_utils.parse_thinking_content("plan</think> answer") == ("plan", "answer")
    assert text_utils.extract_text_content([{"text": "a"}, "b", {"x": 1}]) == "ab"


def test_version_utils(monkeypatch: pytest.MonkeyPatch) -> None:
    assert version_utils.compare_versions("1.14.0", "1.9.9") == 1
    assert version_utils.compare_versions("1.0", "1.0.0") == 0
    assert version_utils.compare_versions("1.0a1", "1.0") == -1
    with pytest.raises(version_utils.PackageNotFoundError, match="not found"):
        version_utils.get_installed_version("no-such-distribution-xyz")
    with pytest.raises(ValueError, match="Not a GitHub URL"):
        version_utils.get_version_from_github("https://example.com/a/b")
    with pytest.raises(ValueError, match="Invalid GitHub repository URL"):
        version_utils.get_version_from_github("https://github.com/")

    import requests

    asked: list[tuple[str, Any]] = []

    class Response:
        text = '[project]\nname = "x"\nversion = "9.8.7"\n'

        def raise_for_status(self) -> None:
            pass

    def fake_get(url: str, timeout: Any = None) -> Response:
        asked.append((url, timeout))
        return Response()

    monkeypatch.setattr(requests, "get", fake_get)
    assert version_utils.get_version_from_github("https://github.com/o/r", "dev") == "9.8.7"
    assert asked == [("https://raw.githubusercontent.com/o/r/dev/pyproject.toml", 10)]
    Response.text = '[project]\nname = "x"\n'
    with pytest.raises(KeyError, match="Version not found"):
        version_utils.get_version_from_github("https://github.com/o/r")


async def test_version_from_github_async(monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx

    def handler(request: httpx.Request) -> httpx.Response:
        assert str(request.url) == "https://raw.githubusercontent.com/o/r/main/pyproject.toml"
        return httpx.Response(200, text='[tool.poetry]\nversion = "0.3.1"\n')

    real = httpx.AsyncClient

    def client(**kwargs: Any) -> httpx.AsyncClient:
        assert kwargs["timeout"] == 10.0
        return real(transport=httpx.MockTransport(handler))

    monkeypatch.setattr(httpx, "AsyncClient", client)
    assert await version_utils.get_version_from_github_async("https://github.com/o/r") == "0.3.1"


# --- embedding -----------------------------------------------------------------


class Model:
    model_name = "fake-embedder"

    def __init__(self, failures: int = 0) -> None:
        self.calls: list[list[str]] = []
        self.failures = failures

    async def aembed(self, batch: list[str]) -> list[list[float]]:
        self.calls.append(list(batch))
        if self.failures:
            self.failures -= 1
            raise ConnectionError("provider hiccup")
        return [[float(len(t)), 1.0, float(i)] for i, t in enumerate(batch)]


def use_model(model: Model | None) -> None:
    importlib.import_module("open_notebook.ai.models").model_manager.model = model


async def test_embeddings_use_the_applications_model_in_patched_batches(
    fake_app: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = Model()
    use_model(model)
    texts = [f"text {i}" for i in range(7)]
    monkeypatch.setattr(embedding, "EMBEDDING_BATCH_SIZE", 3)
    vectors = await embedding.generate_embeddings(texts)
    assert [len(c) for c in model.calls] == [3, 3, 1]
    assert len(vectors) == 7
    assert await embedding.generate_embeddings([]) == []


async def test_retries_follow_the_patched_constants(
    fake_app: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedding, "EMBEDDING_RETRY_DELAY", 0)
    model = Model(failures=2)
    use_model(model)
    assert len(await embedding.generate_embeddings(["a", "b"])) == 2
    assert len(model.calls) == 3
    monkeypatch.setattr(embedding, "EMBEDDING_MAX_RETRIES", 2)
    model = Model(failures=2)
    use_model(model)
    with pytest.raises(RuntimeError, match=r"model 'fake-embedder' \(batch 1/1, 1 texts\)"):
        await embedding.generate_embeddings(["a"], command_id="cmd:1")
    assert len(model.calls) == 2


async def test_no_configured_model_raises(fake_app: ModuleType) -> None:
    use_model(None)
    with pytest.raises(ValueError, match="No embedding model configured"):
        await embedding.generate_embeddings(["text"])
    with pytest.raises(ValueError, match="No embedding model configured"):
        await embedding.generate_embedding("text")


async def test_without_the_application_nothing_falls_back(no_app: None) -> None:
    with pytest.raises(ModuleNotFoundError, match="open_notebook is not installed"):
        await embedding.generate_embeddings(["text"])
    with pytest.raises(ModuleNotFoundError, match="open_notebook is not installed"):
        await context_builder.build_source_context("source:1")
    with pytest.raises(ModuleNotFoundError, match="open_notebook is not installed"):
        context_builder.Source  # noqa: B018 -- the lookup is what is tested


async def test_generate_embedding_short_and_long(fake_app: ModuleType) -> None:
    model = Model()
    use_model(model)
    assert await embedding.generate_embedding("  short text  ") == [10.0, 1.0, 0.0]
    assert model.calls == [["short text"]]
    with pytest.raises(ValueError, match="empty"):
        await embedding.generate_embedding("   ")

    model.calls.clear()
    long_text = "A sentence that goes on. " * 400
    pooled = await embedding.generate_embedding(long_text, content_type=embedding.ContentType.PLAIN)
    chunks = reference.chunk_text(long_text.strip(), "plain", unit="tokens")
    assert model.calls == [chunks]
    vectors = [[float(len(t)), 1.0, float(i)] for i, t in enumerate(chunks)]
    assert pooled == pytest.approx(await reference.mean_pool(vectors), abs=1e-12)


async def test_mean_pool_embeddings_as_the_original() -> None:
    for vectors in ([[3.0, 4.0]], [[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]], [[0.0, 0.0]]):
        ours = await embedding.mean_pool_embeddings(vectors)
        assert ours == pytest.approx(await reference.mean_pool(vectors), abs=1e-12)
    with pytest.raises(ValueError, match="empty"):
        await embedding.mean_pool_embeddings([])
    with pytest.raises(ValueError):
        await embedding.mean_pool_embeddings([[1.0, 2.0], [1.0]])


# --- context_builder -------------------------------------------------------------


def add(cls: Any, id: str, **fields: Any) -> Any:
    record = cls(id, **fields)
    cls.store[id] = record
    return record


async def test_notebook_context_by_config(fake_app: ModuleType) -> None:
    d = fake_app
    add(d.Source, "source:a")
    add(d.Source, "source:b")
    add(d.Note, "note:n", content="body")
    notebook = d.Notebook("notebook:1", sources=[], notes=[])
    config = {
        "sources": {"a": "insights", "source:b": "full content", "c": "insights", "x": "not in"},
        "notes": {"n": "full content", "m": "full content"},
    }
    data, total = await context_builder.build_notebook_context(notebook, config)
    assert data == {
        "sources": [{"id": "source:a", "size": "short"}, {"id": "source:b", "size": "long"}],
        "notes": [{"id": "note:n", "size": "long", "content": "body"}],
    }
    assert total == "".join(str(x) for x in data["sources"] + data["notes"])


async def test_notebook_context_without_config(fake_app: ModuleType) -> None:
    d = fake_app
    a, b = d.Source("source:a"), d.Source("source:b")
    insight = add(d.SourceInsight, "source_insight:1", source="source:a")
    notebook = d.Notebook("notebook:1", sources=[a, b], notes=[d.Note("note:n", content="c")])
    data, total = await context_builder.build_notebook_context(notebook, None)
    assert data["sources"] == [
        {"id": "source:a", "size": "short", "insights": [insight.id]},
        {"id": "source:b", "size": "short", "insights": []},
    ]
    assert data["notes"] == [{"id": "note:n", "size": "short", "content": "c"}]
    assert total == "".join(str(x) for x in data["sources"] + data["notes"])


async def test_patching_the_module_names_is_obeyed(
    fake_app: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    class Other:
        @staticmethod
        async def get(id: str) -> Any:
            asked.append(id)
            return fake_app.Source(id)

    monkeypatch.setattr(context_builder, "Source", Other)
    data, _ = await context_builder.build_notebook_context(None, {"sources": {"z": "insights"}})
    assert asked == ["source:z"]
    assert data["sources"] == [{"id": "source:z", "size": "short"}]
    result = await context_builder.build_source_context("y")
    assert asked[-1] == "source:y"
    assert result["metadata"]["source_count"] == 1


async def test_source_context_budget_and_missing_source(fake_app: ModuleType) -> None:
    d = fake_app
    big = "word " * 500
    insights = [
        d.SourceInsight(f"source_insight:{i}", insight_type="t", content=big) for i in (1, 2)
    ]
    add(d.Source, "source:s", insights=insights)
    full = await context_builder.build_source_context("s")
    assert full["total_items"] == 3
    assert full["total_tokens"] == sum(
        token_utils.token_count(str(x)) for x in full["sources"] + full["insights"]
    )
    cut = await context_builder.build_source_context("source:s", max_tokens=600)
    assert [i["id"] for i in cut["insights"]] == ["source_insight:1"]
    assert cut["total_tokens"] <= 600
    assert cut["metadata"] == {"source_count": 1, "note_count": 0, "insight_count": 1}
    missing = await context_builder.build_source_context("source:none")
    assert (missing["sources"], missing["insights"], missing["total_tokens"]) == ([], [], 0)


async def test_source_context_failure_is_the_applications_error(
    fake_app: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(id: str) -> Any:
        raise RuntimeError("connection lost")

    monkeypatch.setattr(fake_app.Source, "get", broken)
    errors = importlib.import_module("open_notebook.exceptions")
    with pytest.raises(errors.DatabaseOperationError, match="Failed to build context"):
        await context_builder.build_source_context("source:s")
