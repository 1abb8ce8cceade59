"""Many threads at once: the same results as sequential calls, no deadlock;
the GIL released during long calls; a panic inside Rust surfaces as a Python
exception and the library keeps working."""

from __future__ import annotations

import asyncio
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from fastnotebook import _core
from fastnotebook.chunking import (
    ContentType,
    chunk_text,
    chunk_texts,
    detect_content_type,
    detect_content_type_from_extension,
    detect_content_type_from_heuristics,
)
from fastnotebook.embedding import mean_pool, mean_pool_embeddings, mean_pool_segments
from fastnotebook.splitters import HtmlHeaderSplitter, MarkdownHeaderSplitter, RecursiveSplitter
from fastnotebook.text_utils import (
    clean_thinking_content,
    parse_thinking_content,
    remove_non_ascii,
    remove_non_printable,
)
from fastnotebook.token_utils import token_count, token_counts

THREADS = 16

# The tests that call the test hooks (`_panic_for_tests`, `_char_class_bits`),
# built with the `test-hooks` cargo feature: `make build` enables it, release
# builds leave it out.
needs_test_hooks = pytest.mark.skipif(
    not hasattr(_core, "_panic_for_tests"), reason="built without the test-hooks cargo feature"
)

PLAIN = " ".join(f"plain{i} caf\u00e9\udc80" for i in range(3000))
MARKDOWN = "".join(f"# Part {i}\n\nSome *text* here.\n\n## Sub {i}\n- item\n" for i in range(300))
HTML = "<html><body>" + "".join(f"<h1>T{i}</h1><p>para {i} &amp; more</p>" for i in range(400))
HTML += "</body></html>"
THINK = "<think> step one </think>Answer\n\n\n\nmore<think>two</think>" * 50
rng = np.random.default_rng(7)
MATRIX = rng.normal(size=(200, 64))
OFFSETS = np.array([0, 50, 120, 200])
HIDDEN = rng.normal(size=(4, 30, 16)).astype(np.float32)
MASK = (rng.random((4, 30)) > 0.3).astype(np.int64)
RECURSIVE = RecursiveSplitter(300, 40)
MD = MarkdownHeaderSplitter([("#", "H1"), ("##", "H2")], strip_headers=False)
HT = HtmlHeaderSplitter([("h1", "H1"), ("h2", "H2")])


def _calls() -> dict[str, Callable[[], Any]]:
    """Every public entry, on the shared inputs above."""
    texts = [PLAIN, MARKDOWN, HTML, THINK]
    return {
        "chunk_text plain": lambda: chunk_text(PLAIN, ContentType.PLAIN),
        "chunk_text markdown": lambda: chunk_text(MARKDOWN, ContentType.MARKDOWN),
        "chunk_text html": lambda: chunk_text(HTML, ContentType.HTML),
        "chunk_text detected": lambda: chunk_text(MARKDOWN),
        "chunk_text tokens": lambda: chunk_text(PLAIN, unit="tokens"),
        "chunk_text html tokens": lambda: chunk_text(HTML, ContentType.HTML, unit="tokens"),
        "chunk_texts": lambda: chunk_texts(texts),
        "chunk_texts tokens": lambda: chunk_texts(texts, unit="tokens"),
        "detect": lambda: [detect_content_type(t, "x.txt") for t in texts],
        "detect heuristics": lambda: [detect_content_type_from_heuristics(t) for t in texts],
        "detect extension": lambda: detect_content_type_from_extension("a/b.MD"),
        "token_count o200k": lambda: [token_count(t) for t in texts],
        "token_count cl100k": lambda: [token_count(t, "cl100k_base") for t in texts],
        "token_counts": lambda: token_counts(texts * 3),
        "encode_ordinary": lambda: _core.encode_ordinary(PLAIN, "cl100k_base"),
        "recursive splitter": lambda: RECURSIVE.split_text(PLAIN),
        "markdown splitter": lambda: MD.split_text(MARKDOWN),
        "html splitter": lambda: HT.split_text(HTML),
        "mean_pool": lambda: mean_pool(MATRIX).tobytes(),
        "mean_pool f32": lambda: mean_pool(MATRIX.astype(np.float32)).tobytes(),
        "mean_pool_segments": lambda: mean_pool_segments(MATRIX, OFFSETS).tobytes(),
        "mean_pool_tokens": lambda: _core.mean_pool_tokens(HIDDEN, MASK).tobytes(),
        "mean_pool_embeddings": lambda: asyncio.run(mean_pool_embeddings(MATRIX[:20].tolist())),
        "remove_non_ascii": lambda: remove_non_ascii(PLAIN),
        "remove_non_printable": lambda: remove_non_printable(PLAIN + THINK),
        "parse_thinking_content": lambda: parse_thinking_content(THINK),
        "clean_thinking_content": lambda: clean_thinking_content(THINK),
    }


CALLS = _calls()


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    return {name: call() for name, call in CALLS.items()}


def run_threads(work: Callable[[int], None], n: int = THREADS) -> list[BaseException]:
    """Runs `work(i)` on n threads started together; returns what they raised."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def target(i: int) -> None:
        barrier.wait()
        try:
            work(i)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_sixteen_threads_calling_every_api_agree_with_sequential_calls(
    expected: dict[str, Any],
) -> None:
    mismatches: list[tuple[int, str]] = []

    def work(i: int) -> None:
        order = list(CALLS.items()) * 3
        random.Random(i).shuffle(order)
        for name, call in order:
            if call() != expected[name]:
                mismatches.append((i, name))

    assert run_threads(work) == []
    assert mismatches == []
    # And afterwards, one thread alone still agrees.
    assert {name: call() for name, call in CALLS.items()} == expected


@pytest.fixture
def no_voluntary_switch() -> Iterator[None]:
    """With a 100 s switch interval, a thread waiting for the GIL runs only
    while the holder releases it: progress during a call proves the call
    released it."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def progress_during(call: Callable[[], object]) -> int:
    """How many steps a pure-Python counter thread makes while `call` runs."""
    steps = 0
    stop = False
    ready = threading.Event()

    def count() -> None:
        nonlocal steps
        ready.set()
        while not stop:
            steps += 1
            time.sleep(0.0005)  # gives the GIL back, long enough for it to be taken

    counter = threading.Thread(target=count)
    counter.start()
    ready.wait()
    before = steps
    call()
    after = steps
    stop = True
    counter.join()
    return after - before


# Inputs built in advance: only the call runs while progress is measured.
LONG_TEXT = "lorem ipsum dolor sit amet, " * 400_000
LONG_MD = "# T\n" + LONG_TEXT.replace(", ", "\n")
LONG_HTML = "<p>" + LONG_TEXT
LONG_PART = LONG_TEXT[:2_000_000]
ONES = np.ones((400_000, 64))
LONG_CALLS: dict[str, Callable[[], object]] = {
    "chunk_text plain": lambda: chunk_text(LONG_TEXT, ContentType.PLAIN),
    "chunk_text markdown": lambda: chunk_text(LONG_MD, ContentType.MARKDOWN),
    "chunk_text html": lambda: chunk_text(LONG_HTML, ContentType.HTML),
    "chunk_text tokens": lambda: chunk_text(LONG_PART, ContentType.PLAIN, unit="tokens"),
    "chunk_texts": lambda: chunk_texts([LONG_PART] * 4),
    "token_count": lambda: token_count(LONG_TEXT),
    "token_counts": lambda: token_counts([LONG_PART] * 4),
    "encode_ordinary": lambda: _core.encode_ordinary(LONG_TEXT),
    "recursive splitter": lambda: RECURSIVE.split_text(LONG_TEXT),
    "markdown splitter": lambda: MD.split_text(LONG_MD),
    "html splitter": lambda: HT.split_text(LONG_HTML),
    "remove_non_printable": lambda: remove_non_printable(LONG_TEXT),
    "remove_non_ascii": lambda: remove_non_ascii(LONG_HTML),
    "mean_pool": lambda: mean_pool(ONES),
    "mean_pool_segments": lambda: mean_pool_segments(ONES, np.array([0, 1, 400_000])),
}


@pytest.mark.parametrize("name", list(LONG_CALLS))
def test_long_calls_let_other_threads_run(name: str, no_voluntary_switch: None) -> None:
    # A call that keeps the GIL never lets the counter run; one that releases
    # it does, unless the scheduler left the counter off the CPU the whole
    # time (a busy machine): a few tries rule that out.
    assert any(progress_during(LONG_CALLS[name]) > 0 for _ in range(5))


@needs_test_hooks
def test_the_progress_measure_sees_a_call_that_keeps_the_gil(no_voluntary_switch: None) -> None:
    # The control: this helper never releases the GIL, and nothing else runs.
    assert progress_during(lambda: _core._char_class_bits(0, 0x110000)) == 0


def _panic_type() -> type[BaseException]:
    try:
        _core._panic_for_tests("gil")
    except BaseException as e:
        return type(e)
    raise AssertionError("no panic")


@needs_test_hooks
@pytest.mark.parametrize("site", ["gil", "detached", "worker"])
def test_a_panic_in_rust_is_an_exception_and_the_library_keeps_working(
    site: str, expected: dict[str, Any]
) -> None:
    panic = _panic_type()
    assert panic.__name__ == "PanicException"
    with pytest.raises(panic, match=f"forced panic for tests \\({site}\\)"):
        _core._panic_for_tests(site)
    with pytest.raises(ValueError, match="site must be"):
        _core._panic_for_tests("nowhere")
    assert {name: call() for name, call in CALLS.items()} == expected


@needs_test_hooks
def test_panics_on_some_threads_leave_the_others_correct(expected: dict[str, Any]) -> None:
    panic = _panic_type()
    mismatches: list[str] = []

    def work(i: int) -> None:
        for name, call in CALLS.items():
            if i % 4 == 0:
                with pytest.raises(panic):
                    _core._panic_for_tests(("gil", "detached", "worker")[i % 3])
            if call() != expected[name]:
                mismatches.append(name)

    assert run_threads(work) == []
    assert mismatches == []
