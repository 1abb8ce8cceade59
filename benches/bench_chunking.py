"""Chunking throughput: fastnotebook against the original pipeline, same run.

For each content type, both run over the same documents, interleaved and
repeated; the table gives the median MB/s (with min-max), the ratio of
medians, and whether every document's chunks were identical. Then
``chunk_texts`` on all cores against the single-threaded loop, and peak
memory when chunking one large document (in a fresh process).

    python benches/bench_chunking.py [--corpus DIR] [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from loguru import logger

from fastnotebook import chunking
from fastnotebook.bench import reference

HERE = Path(__file__).resolve().parent

DEFAULT_CORPUS = Path(
    os.environ.get("FASTNOTEBOOK_CORPUS", HERE.parent.parent / "shared" / "corpus")
)
KINDS = {"html": "html", "md": "markdown", "txt": "plain"}


def load(corpus: Path) -> dict[str, list[tuple[str, str]]]:
    docs: dict[str, list[tuple[str, str]]] = {}
    for folder, kind in KINDS.items():
        files = sorted((corpus / folder).glob("*")) if (corpus / folder).is_dir() else []
        docs[kind] = [(str(p), p.read_text(encoding="utf-8")) for p in files]
    if not any(docs.values()):
        # No corpus: the repository's own documents.
        root = HERE.parent
        files = [
            p for p in root.rglob("*.md") if ".venv" not in p.parts and "target" not in p.parts
        ]
        docs["markdown"] = [(str(p), p.read_text(encoding="utf-8")) for p in files]
    return {k: v for k, v in docs.items() if v}


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):8.1f} ({min(values):.1f}-{max(values):.1f})"


def bench_kind(kind: str, docs: list[tuple[str, str]], repeats: int) -> None:
    size = sum(len(text.encode()) for _, text in docs)
    identical = sum(
        chunking.chunk_text(text, file_path=path) == reference.chunk_text(text, None, path)
        for path, text in docs
    )

    def ours() -> None:
        for path, text in docs:
            chunking.chunk_text(text, file_path=path)

    def original() -> None:
        for path, text in docs:
            reference.chunk_text(text, None, path)

    ours_mbs, ref_mbs = [], []
    for _ in range(repeats):
        ours_mbs.append(size / timed(ours) / 1e6)
        ref_mbs.append(size / timed(original) / 1e6)
    ratio = statistics.median(ours_mbs) / statistics.median(ref_mbs)
    print(
        f"{kind:<9} {len(docs):>5} {size / 1e6:7.2f} {spread(ours_mbs):>24} {spread(ref_mbs):>22}"
        f" {ratio:8.1f}x {identical:>5}/{len(docs)}"
    )


def bench_parallel(all_docs: list[tuple[str, str]], repeats: int) -> None:
    texts = [t for _, t in all_docs]
    paths = [p for p, _ in all_docs]
    size = sum(len(t.encode()) for t in texts)
    single, multi = [], []
    for _ in range(repeats):
        single.append(
            size
            / timed(
                lambda: [chunking.chunk_text(t, None, p) for t, p in zip(texts, paths, strict=True)]
            )
            / 1e6
        )
        multi.append(size / timed(lambda: chunking.chunk_texts(texts, None, paths)) / 1e6)
    print(
        f"\nchunk_texts on {os.cpu_count()} cores: {spread(multi)} MB/s vs chunk_text loop "
        f"{spread(single)} MB/s: {statistics.median(multi) / statistics.median(single):.2f}x"
    )


MEMORY_PROBE = """
import resource, sys
from fastnotebook import chunking
text = open(sys.argv[1], encoding="utf-8").read() * int(sys.argv[2])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
chunks = chunking.chunk_text(text, chunking.ContentType(sys.argv[3]))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(len(text.encode()), (peak - base) * 1024)
"""


def bench_memory(docs: dict[str, list[tuple[str, str]]]) -> None:
    print("\npeak memory above the loaded input, chunking one large document (fresh process):")
    for kind, items in docs.items():
        path, text = max(items, key=lambda d: len(d[1]))
        copies = max(1, 50_000_000 // max(1, len(text.encode())))
        out = subprocess.run(
            [sys.executable, "-c", MEMORY_PROBE, path, str(copies), kind],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        size, extra = int(out[0]), int(out[1])
        print(
            f"  {kind:<9} input {size / 1e6:6.1f} MB, "
            f"extra peak {extra / 1e6:6.1f} MB = {extra / size:.2f}x input"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--kinds", nargs="*", default=list(KINDS.values()), choices=list(KINDS.values())
    )
    args = parser.parse_args()
    logger.remove()  # the original logs at debug level; time the work, not the logging
    docs = {k: v for k, v in load(args.corpus).items() if k in args.kinds}
    print(
        f"corpus: {args.corpus if args.corpus.is_dir() else 'repository documents'}; "
        f"Python {sys.version.split()[0]}"
    )
    print(
        f"{'type':<9} {'docs':>5} {'MB':>7} {'fastnotebook MB/s':>24} {'original MB/s':>22} "
        f"{'ratio':>9} {'same':>11}"
    )
    for kind, items in docs.items():
        bench_kind(kind, items, args.repeats)
    bench_parallel([d for items in docs.values() for d in items], args.repeats)
    bench_memory(docs)


if __name__ == "__main__":
    main()
