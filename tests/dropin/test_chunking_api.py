"""The public surface of fastnotebook.chunking: names, types, errors, hostile input."""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import subprocess
import sys
import threading
import time

import pytest

import fastnotebook
from fastnotebook import _core, chunking
from fastnotebook.chunking import CHUNK_SIZE, ContentType, chunk_text, chunk_texts


def test_exports_the_original_names_and_constants() -> None:
    for name in [
        "ContentType",
        "CHUNK_SIZE",
        "CHUNK_OVERLAP",
        "HIGH_CONFIDENCE_THRESHOLD",
        "detect_content_type_from_extension",
        "detect_content_type_from_heuristics",
        "detect_content_type",
        "chunk_text",
    ]:
        assert hasattr(chunking, name), name
    assert (chunking.CHUNK_SIZE, chunking.CHUNK_OVERLAP) == (1500, 225)
    assert chunking.HIGH_CONFIDENCE_THRESHOLD == 0.8
    assert [(m.name, m.value) for m in ContentType] == [
        ("HTML", "html"),
        ("MARKDOWN", "markdown"),
        ("PLAIN", "plain"),
    ]
    assert fastnotebook.chunk_text is chunk_text
    assert fastnotebook.CHUNK_SIZE == CHUNK_SIZE


def test_empty_blank_and_short_texts() -> None:
    assert chunk_text("") == []
    assert chunk_text(None) == []  # type: ignore[arg-type]
    assert chunk_text(" \n\t\u3000") == []
    assert chunk_text("  keep me as I am  ") == ["  keep me as I am  "]
    exactly = "y" * CHUNK_SIZE
    assert chunk_text(exactly) == [exactly]


def test_long_plain_text_is_split_within_the_limit() -> None:
    text = " ".join(f"word{i}" for i in range(2000))
    chunks = chunk_text(text, ContentType.PLAIN)
    assert len(chunks) > 5
    assert all(len(c) <= CHUNK_SIZE for c in chunks)
    assert all(c in text for c in chunks)


def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(TypeError, match="text must be str"):
        chunk_text(b"bytes" * 400)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="content_type must be a ContentType"):
        chunk_text("x" * 2000, "html")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text must be str"):
        chunking.detect_content_type_from_heuristics(["a"] * 20)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="content_types has 1 entries for 2 texts"):
        chunk_texts(["a", "b"], [None])


@pytest.mark.parametrize("file_path", [None, "", 0, 3.5, b"a.md", ["a.md"], object(), "a.md"])
def test_file_path_of_any_type_is_accepted(file_path: object) -> None:
    text = "# Title\n\n" + "para. " * 400
    assert chunk_text(text, None, file_path)  # type: ignore[arg-type]


def test_surrogates_control_characters_and_nul_survive() -> None:
    text = ("a\udc80b\x00c\x1f\u2028 " * 300) + "\ud83d\ude00"
    chunks = chunk_text(text, ContentType.PLAIN)
    assert all(c in text for c in chunks)
    assert "\udc80" in chunks[0] and "\x00" in chunks[0]
    assert chunks[-1].endswith("\ud83d\ude00")


def test_markdown_drops_surrogates_as_non_printable_like_the_original() -> None:
    text = "# Ti\udcfftle\n\n" + "caf\udce9 au lait. " * 200
    chunks = chunk_text(text, ContentType.MARKDOWN)
    assert chunks[0] == "# Title"
    assert chunks[1].startswith("caf au lait.")
    # Plain text keeps them: its chunks are slices of the input.
    assert any("caf\udce9 au lait" in c for c in chunk_text(text, ContentType.PLAIN))


def test_fifty_megabyte_single_line() -> None:
    # A linear splitter does this in well under a second (the benchmark times
    # it); a quadratic one would not finish.
    text = "x" * 50_000_000
    chunks = chunk_text(text, ContentType.PLAIN)
    assert len(chunks) == -(-(50_000_000 - 225) // (1500 - 225))
    assert all(len(c) == 1500 for c in chunks[:-1])


def test_a_million_header_lines() -> None:
    text = "#\n" * 1_000_000
    chunks = chunk_text(text, ContentType.MARKDOWN)
    assert chunks and all(set(c) <= {"#", " ", "\n"} for c in chunks)


def test_unterminated_code_fence_keeps_everything() -> None:
    text = "# A\n```python\n" + "# not a header\ncode line\n" * 200
    chunks = chunk_text(text, ContentType.MARKDOWN)
    joined = "".join(chunks)
    assert joined.count("# not a header") >= 200


def test_chunk_texts_equals_chunk_text_per_document() -> None:
    texts = [
        "",
        "short",
        "# Head\n" + "line of markdown text\n" * 300,
        "plain words " * 500,
        "x" * 4000,
        "caf\udce9 " * 700,
    ]
    types = [None, None, ContentType.MARKDOWN, None, ContentType.PLAIN, None]
    paths = [None, "a.txt", None, "b.md", None, None]
    expected = [chunk_text(t, c, p) for t, c, p in zip(texts, types, paths, strict=True)]
    assert chunk_texts(texts, types, paths) == expected
    assert chunk_texts(texts) == [chunk_text(t) for t in texts]


BATCH_CHECK = r"""
import pytest
from fastnotebook import _core
from fastnotebook.chunking import ContentType, chunk_text, chunk_texts
from fastnotebook.token_utils import token_count, token_counts
# ASCII, Latin-1, UCS-2 and UCS-4 texts (their strings are written from each
# width's code units), of many lengths, many more than one group.
letters = ["a", "\u00e9", "\u20ac", "\U0001f600", "\udc80"]
texts = [
    f"# T{i}\n" + f"words {letters[i % 5]} and more words. " * (60 * (i % 7) + 1)
    for i in range(600)
]
texts += ["plain " * 3000, "<h1>x</h1><p>" + "y " * 2000 + "</p>"]
assert chunk_texts(texts) == [chunk_text(t) for t in texts]
assert token_counts(texts) == [token_count(t) for t in texts]
first = "<![first[ x ]]>" + "<p>text</p>" * 300
later = "<![later[ y ]]>" + "<p>text</p>" * 3000
types = [None] * len(texts) + [ContentType.HTML] * 2
for bad, name in (([first, later], "first"), ([later, first], "later")):
    with pytest.raises(_core.MarkupRejectedError, match=name):
        chunk_texts([*texts, *bad], types)
print("ok")
"""


@pytest.mark.parametrize("threads", ["1", "3"])
def test_batches_agree_with_loops_whatever_the_pool_size(threads: str) -> None:
    # One thread: the caller works alone. Three: the caller and two helpers.
    out = subprocess.run(
        [sys.executable, "-c", BATCH_CHECK],
        env={**os.environ, "RAYON_NUM_THREADS": threads},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (out.returncode, out.stdout.strip()) == (0, "ok"), out.stderr


def test_standalone_splitters_are_exposed() -> None:
    splitter = _core.RecursiveSplitter(chunk_size=10, chunk_overlap=0, separators=[" ", ""])
    assert splitter.split_text("aaaa bbbb cccc") == ["aaaa bbbb", "cccc"]
    md = _core.MarkdownHeaderSplitter([("#", "H1")], strip_headers=False)
    assert md.split_text("# A\nbody") == [("# A\nbody", {"H1": "A"})]
    with pytest.raises(ValueError, match="larger chunk overlap"):
        _core.RecursiveSplitter(chunk_size=10, chunk_overlap=11)
    with pytest.raises(ValueError, match="keep_separator"):
        _core.RecursiveSplitter(keep_separator="middle")  # type: ignore[arg-type]


def test_long_calls_release_the_gil() -> None:
    text = "word " * 16_000_000
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        before = ticks
        chunk_text(text, ContentType.PLAIN)
        during = ticks - before
    finally:
        done.set()
        counter.join()
    # While Rust works, the other thread keeps running: about 60 ticks here
    # where a C call of 1.7 s holding the GIL let it tick 3 times (a count
    # proportional to the call's length would measure the load, not the GIL).
    assert during >= 10


def test_chunking_in_a_thread_keeps_the_event_loop_ticking() -> None:
    text = "word " * 4_000_000

    async def main() -> tuple[int, float]:
        ticks = 0
        stop = asyncio.Event()

        async def tick() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0.001)

        ticker = asyncio.create_task(tick())
        start = time.perf_counter()
        await asyncio.to_thread(chunk_text, text, ContentType.PLAIN)
        elapsed = time.perf_counter() - start
        stop.set()
        await ticker
        return ticks, elapsed

    ticks, elapsed = asyncio.run(main())
    # The loop ticks all along the call, held only while the chunks' strings
    # are made, and each tick costs the loop a few times its 1 ms sleep (a
    # count fixed in advance would measure the machine, not the GIL).
    assert ticks >= max(2, int(elapsed / 0.001 * 0.1))


PUBLIC_SUBMODULES = [
    "chunkers",
    "chunking",
    "chunking_config",
    "context_builder",
    "embedding",
    "errors",
    "splitters",
    "text_utils",
    "token_utils",
    "version_utils",
]


def test_top_level_names_are_all_importable() -> None:
    for name in fastnotebook.__all__:
        assert getattr(fastnotebook, name) is not None, name
    assert fastnotebook.__version__ == importlib.metadata.version("fastnotebook")


def test_dir_is_the_documented_public_set() -> None:
    """A fresh ``import fastnotebook`` shows its names and its submodules, and
    nothing it merely used (``Any``, ``annotations``, ``importlib`` ...)."""
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "import fastnotebook; print(' '.join(n for n in dir(fastnotebook) if n[0] != '_'))",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert sorted(shown) == sorted([*fastnotebook.__all__, *PUBLIC_SUBMODULES])
    assert len(set(fastnotebook.__all__)) == len(fastnotebook.__all__)


def test_the_application_is_not_imported_by_the_drop_in() -> None:
    """The drop-in modules import neither the database nor the web stack."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, fastnotebook, fastnotebook.context_builder; "
            "[getattr(fastnotebook, name) for name in fastnotebook.__all__]; "
            "print(' '.join(sorted(sys.modules)))",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    heavy = {"surrealdb", "fastapi", "uvicorn", "aiohttp", "websockets", "yaml", "esperanto"}
    assert not heavy & {m.split(".")[0] for m in loaded}
    assert "fastnotebook.app" not in loaded


def test_the_package_imports_its_names_when_first_used() -> None:
    """``import fastnotebook`` (which every ``fastnotebook.<module>`` runs
    first) imports none of its modules; each name is the module's own once
    used."""
    program = (
        "import sys, fastnotebook\n"
        "print(sorted(m for m in sys.modules if m.startswith('fastnotebook')))\n"
        "from fastnotebook import chunk_text\n"
        "import fastnotebook.chunking as chunking\n"
        "print(chunk_text is chunking.chunk_text is fastnotebook.chunk_text)\n"
        "print(fastnotebook.chunking is chunking, 'chunk_text' in vars(fastnotebook))\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", program], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    assert shown == ["['fastnotebook', 'fastnotebook._lazy']", "True", "True True"]
    with pytest.raises(AttributeError, match="module 'fastnotebook' has no attribute 'nope'"):
        fastnotebook.nope  # type: ignore[attr-defined]  # noqa: B018


# What `open_notebook/utils/__init__.py` exports, apart from its encryption and
# model-dump helpers, which belong to the application rather than text preparation.
ORIGINAL_UTILS_EXPORTS = [
    "CHUNK_SIZE",
    "ContentType",
    "chunk_text",
    "detect_content_type",
    "detect_content_type_from_extension",
    "detect_content_type_from_heuristics",
    "generate_embedding",
    "generate_embeddings",
    "mean_pool_embeddings",
    "remove_non_ascii",
    "remove_non_printable",
    "parse_thinking_content",
    "clean_thinking_content",
    "token_count",
    "token_cost",
    "compare_versions",
    "get_installed_version",
    "get_version_from_github",
]


def test_top_level_exports_what_the_original_utils_package_does() -> None:
    assert set(ORIGINAL_UTILS_EXPORTS) <= set(fastnotebook.__all__)
    from fastnotebook import embedding, token_utils

    assert fastnotebook.token_count is token_utils.token_count
    assert fastnotebook.mean_pool_embeddings is embedding.mean_pool_embeddings


def test_import_stays_free_of_the_model_and_database_stack() -> None:
    code = (
        "import sys, fastnotebook; "
        "heavy = [m for m in ('esperanto', 'surrealdb', 'numpy', 'httpx') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_chunk_texts_keeps_order_and_raises_the_first_error_in_input_order() -> None:
    # Texts are chunked longest first; results and errors still follow the input.
    texts = [f"document {i} " + "word " * (200 + 37 * (i % 50)) for i in range(2000)]
    assert sum(map(len, texts)) > 4_000_000
    assert chunk_texts(texts) == [chunk_text(t) for t in texts]
    first = "<![first[ x ]]>" + "<p>text</p>" * 300
    longer = "<![later[ y ]]>" + "<p>text</p>" * 3000
    for bad in (first, longer):
        with pytest.raises(_core.MarkupRejectedError):
            chunk_text(bad, ContentType.HTML)
    types = [None] * len(texts) + [ContentType.HTML] * 2
    with pytest.raises(_core.MarkupRejectedError, match='"first"'):
        chunk_texts([*texts, first, longer], types)
    with pytest.raises(_core.MarkupRejectedError, match='"later"'):
        chunk_texts([*texts, longer, first], types)


def _logged_while_chunking(level: str) -> list[str]:
    """The messages a loguru handler at `level` receives while a long text is chunked."""
    from loguru import logger

    messages: list[str] = []
    handler = logger.add(messages.append, level=level, format="{message}")
    try:
        chunk_text("word " * 1000, ContentType.PLAIN)
    finally:
        logger.remove(handler)
    return [m.strip() for m in messages]


def test_debug_messages_reach_a_debug_handler_only() -> None:
    assert _logged_while_chunking("DEBUG") == [
        "Chunking text with content type: plain",
        "Created 4 chunks from 5000 characters",
    ]
    assert _logged_while_chunking("INFO") == []
