"""How much of ``chunk_text``'s time depends on the branch predictors'
training rather than on the text: a bound on what less branchy code could
gain.

Each document is chunked twice in a row, the second time as a copy of it
(same characters, other memory). The second call finds the predictors trained
on that document's own sequence of line kinds (blank, indented, ordinary,
header ...), which a pass over a corpus of other documents never gives them.
The results of both calls are kept until the pass ends, as a batch keeps them,
so neither call reuses the memory of the other's strings; the input copies
were made before the passes, so both calls read memory the pass did not touch
before. The second call does get the first one's buffer of rebuilt Markdown
sections back from the allocator (same size, still in cache): the ratio is an
upper bound of the predictors' share.

    python benches/bench_machine_state.py [--corpus DIR] [--kind markdown] [--passes N]

Best of N passes each; the time of one pass over the documents of the kind.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from loguru import logger

from fastnotebook import chunking
from fastnotebook.bench import corpus


def twice(texts: list[str], kind: str, passes: int) -> tuple[float, float]:
    """Best pass time (ms) of the first calls and of the second ones."""
    content_type = chunking.ContentType(kind)
    copies = [("." + t)[1:] for t in texts]
    first = second = float("inf")
    for _ in range(passes):
        kept: list[list[str]] = []
        a_total = b_total = 0.0
        for text, copy in zip(texts, copies, strict=True):
            a = time.perf_counter()
            kept.append(chunking.chunk_text(text, content_type))
            b = time.perf_counter()
            kept.append(chunking.chunk_text(copy, content_type))
            c = time.perf_counter()
            a_total += b - a
            b_total += c - b
        first, second = min(first, a_total), min(second, b_total)
    return first * 1e3, second * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--kind", default="markdown", choices=corpus.KINDS)
    parser.add_argument("--passes", type=int, default=30)
    args = parser.parse_args()
    logger.remove()
    docs = corpus.load(args.corpus) if args.corpus else corpus.default()
    texts = [d.text for d in docs.by_kind(args.kind)]
    first, second = twice(texts, args.kind, args.passes)
    print(f"{args.kind}: {len(texts)} documents, best of {args.passes} passes")
    print(f"  each document's first call   {first:8.3f} ms")
    print(f"  its copy, right after        {second:8.3f} ms  ({first / second:.2f}x)")


if __name__ == "__main__":
    main()
