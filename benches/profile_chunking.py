"""A bare loop of ``chunk_text`` over one content type of the corpus, for
profilers that count instructions rather than time (the shared machine's
timings are noisy; instruction counts are not):

    valgrind --tool=callgrind python benches/profile_chunking.py markdown 3
    callgrind_annotate --inclusive=yes callgrind.out.<pid> | grep _core::

``--unit tokens`` profiles the token-sized pipeline instead, and
``--open-notebook`` loops Open Notebook HEAD's ``chunk_text``
(``fastnotebook.open_notebook.chunking``: 400 tokens, 15% overlap).
``--ratio`` times instead: each pass of the loop against one
``token_count(text, "o200k_base")`` pass over the same texts, alternating,
best thread CPU time of each (issue #33's "time vs one token_count pass"):

    python benches/profile_chunking.py markdown 9 --open-notebook --ratio
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from loguru import logger

from fastnotebook import chunking
from fastnotebook.bench import corpus
from fastnotebook.token_utils import token_count


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("kind", choices=corpus.KINDS)
    parser.add_argument("passes", type=int, nargs="?", default=3)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--unit", choices=("chars", "tokens"), default="chars")
    parser.add_argument(
        "--open-notebook",
        action="store_true",
        help="loop fastnotebook.open_notebook.chunking.chunk_text (tokens)",
    )
    parser.add_argument(
        "--ratio",
        action="store_true",
        help="time each pass against a token_count pass and print the ratio",
    )
    args = parser.parse_args()
    logger.remove()
    docs = corpus.load(args.corpus) if args.corpus else corpus.default()
    texts = [d.text for d in docs.by_kind(args.kind)]
    content_type = chunking.ContentType(args.kind)
    run: Callable[[str], object]
    if args.open_notebook:
        from fastnotebook.open_notebook import chunking as head

        def run(text: str) -> object:
            return head.chunk_text(text, content_type)
    else:

        def run(text: str) -> object:
            return chunking.chunk_text(text, content_type, unit=args.unit)

    if args.ratio:
        # First, so that loading the vocabulary falls in this call, not in
        # the chunking's (for callgrind's inclusive counts).
        token_count("warm up", "o200k_base")
    run("warm up " * 500)
    if not args.ratio:
        for _ in range(args.passes):
            for text in texts:
                run(text)
        return
    best = {"chunk_text": float("inf"), "token_count": float("inf")}
    for _ in range(args.passes):
        start = time.thread_time()
        for text in texts:
            run(text)
        best["chunk_text"] = min(best["chunk_text"], time.thread_time() - start)
        start = time.thread_time()
        for text in texts:
            token_count(text, "o200k_base")
        best["token_count"] = min(best["token_count"], time.thread_time() - start)
    print(
        f"{args.kind}: chunk_text {best['chunk_text'] * 1e3:.1f} ms, "
        f"token_count {best['token_count'] * 1e3:.1f} ms, "
        f"ratio {best['chunk_text'] / best['token_count']:.2f}"
    )


if __name__ == "__main__":
    main()
