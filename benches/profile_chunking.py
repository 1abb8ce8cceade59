"""A bare loop of ``chunk_text`` over one content type of the corpus, for
profilers that count instructions rather than time (the shared machine's
timings are noisy; instruction counts are not):

    valgrind --tool=callgrind python benches/profile_chunking.py markdown 3
    callgrind_annotate --inclusive=yes callgrind.out.<pid> | grep _core::

``--unit tokens`` profiles the token-sized pipeline instead.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from loguru import logger

from fastnotebook import chunking
from fastnotebook.bench import corpus


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("kind", choices=corpus.KINDS)
    parser.add_argument("passes", type=int, nargs="?", default=3)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--unit", choices=("chars", "tokens"), default="chars")
    args = parser.parse_args()
    logger.remove()
    docs = corpus.load(args.corpus) if args.corpus else corpus.default()
    texts = [d.text for d in docs.by_kind(args.kind)]
    content_type = chunking.ContentType(args.kind)
    chunking.chunk_text("warm up " * 500, content_type, unit=args.unit)
    for _ in range(args.passes):
        for text in texts:
            chunking.chunk_text(text, content_type, unit=args.unit)


if __name__ == "__main__":
    main()
