"""``fastnotebook.open_notebook.chunking.chunk_text`` at Open Notebook 1.14's
defaults (400 tokens, 15% overlap, minimum 5) gives the release's chunk lists
on every file of the shared corpus: against the reference built as the
release builds it (langchain-text-splitters + tiktoken), and against the
release's own module when a checkout is given."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from types import ModuleType

import pytest

from fastnotebook.bench import reference
from fastnotebook.open_notebook import chunking
from helpers.corpus import KINDS, read, require_corpus, tiktoken_reference
from helpers.open_notebook import open_notebook_src

CT = {
    "html": chunking.ContentType.HTML,
    "markdown": chunking.ContentType.MARKDOWN,
    "plain": chunking.ContentType.PLAIN,
}


@pytest.fixture(autouse=True)
def head_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """The release's defaults, whatever this environment's OPEN_NOTEBOOK_*."""
    tiktoken_reference("o200k_base")
    monkeypatch.setattr(chunking, "CHUNK_SIZE", 400)
    monkeypatch.setattr(chunking, "CHUNK_OVERLAP", 60)
    monkeypatch.setattr(chunking, "MIN_CHUNK_SIZE", 5)


def mismatches(
    kind: str, expected: Callable[[str, str | None, str | None], list[str]]
) -> list[str]:
    """The corpus files of ``kind`` whose chunks differ from ``expected(text,
    content_type, file_name)``: with the content type given, and detected
    from the file name and the text (as the app does for uploads)."""
    bad = []
    for path in require_corpus(kind):
        text = read(path)
        content_type = KINDS[kind]
        if chunking.chunk_text(text, CT[content_type]) != expected(text, content_type, None):
            bad.append(f"{path.name} (content type {content_type})")
        if chunking.chunk_text(text, file_path=path.name) != expected(text, None, path.name):
            bad.append(f"{path.name} (detected)")
    return bad


@pytest.mark.parametrize("kind", ["html", "md", "txt"])
def test_corpus_matches_the_reference(kind: str) -> None:
    bad = mismatches(
        kind, lambda text, ct, name: reference.chunk_text(text, ct, name, unit="tokens")
    )
    assert not bad, f"{len(bad)} {kind} files differ: {bad[:10]}"


@pytest.fixture(scope="module")
def head_chunking() -> Iterator[ModuleType]:
    """The checkout's ``open_notebook/utils/chunking.py``, loaded on its own
    (not the app's package, whose import reads configuration and creates
    folders), with its ``.token_utils`` counting as the release does:
    tiktoken ``o200k_base`` with special-token text as ordinary text."""
    path = open_notebook_src() / "open_notebook" / "utils" / "chunking.py"
    package = "_open_notebook_head_utils"
    parent = ModuleType(package)
    parent.__path__ = []
    tokens = ModuleType(f"{package}.token_utils")
    tokens.token_count = reference.token_counter("o200k_base")  # type: ignore[attr-defined]
    spec = importlib.util.spec_from_file_location(f"{package}.chunking", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved = {n: sys.modules.get(n) for n in (package, tokens.__name__, spec.name)}
    sys.modules.update({package: parent, tokens.__name__: tokens, spec.name: module})
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


@pytest.mark.parametrize("kind", ["html", "md", "txt"])
def test_corpus_matches_the_checkouts_module(kind: str, head_chunking: ModuleType) -> None:
    assert (head_chunking.CHUNK_SIZE, head_chunking.MIN_CHUNK_SIZE) == (400, 5), (
        "the checkout's module did not load with its defaults (OPEN_NOTEBOOK_* set?)"
    )
    head_types = {t.value: t for t in head_chunking.ContentType}
    bad = mismatches(
        kind,
        lambda text, ct, name: list(
            head_chunking.chunk_text(text, None if ct is None else head_types[ct], name)
        ),
    )
    assert not bad, f"{len(bad)} {kind} files differ from the release's module: {bad[:10]}"
