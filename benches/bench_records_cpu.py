"""Thread CPU time of one chunk-records case against one ``token_count`` pass
over the same documents, in the same process.

The case is a row of ``fastnotebook bench``'s chunk-records table
(``fastnotebook.bench.records.cases``: the same call, the same documents),
timed alone: ``chunk`` per document, single-threaded. Thread CPU time
(``time.thread_time``), best of ``--rounds`` rounds, the case and the count
alternating, so that other processes on a shared machine count as little as
possible; the ratio (time of the case over one counting pass) is steadier
than either MB/s. To compare two builds, run it with each build's Python,
alternating:

    python benches/bench_records_cpu.py ["markdown, 400 tokens"] [--rounds N] [--corpus DIR]

``--passes N`` runs N bare passes of the case instead (after one pass of
``token_count`` that loads the tokenizer), for profilers:

    perf record -F 1000 --call-graph dwarf python benches/bench_records_cpu.py --passes 120
    valgrind --tool=callgrind --collect-atstart=no \
        '--toggle-collect=*PyChunker*__pymethod_chunk__*' \
        python benches/bench_records_cpu.py --passes 2
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastnotebook import token_count
from fastnotebook.bench import corpus
from fastnotebook.bench.records import ENCODING, cases


def best_time(f: Callable[[str], Any], texts: list[str], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.thread_time()
        for text in texts:
            f(text)
        best = min(best, time.thread_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("case", nargs="?", default="markdown, 400 tokens")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--passes", type=int, default=0, help="bare passes, for profilers")
    args = parser.parse_args()
    found = {c.name: c for c in cases()}
    if args.case not in found:
        parser.error(f"unknown case {args.case!r}; one of {', '.join(found)}")
    case = found[args.case]
    docs = corpus.load(args.corpus) if args.corpus else corpus.default()
    texts = [case.prepare(d.text) for d in docs.by_kind(case.kind)]
    megabytes = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6

    def count(text: str) -> int:
        return token_count(text, ENCODING)

    if args.passes:
        for text in texts:
            count(text)
        for _ in range(args.passes):
            for text in texts:
                case.ours(text)
        return
    # Warm up: the tokenizer's tables and the per-thread caches.
    for text in texts:
        case.ours(text)
        count(text)
    ours = counted = float("inf")
    for _ in range(args.rounds):
        ours = min(ours, best_time(case.ours, texts, 1))
        counted = min(counted, best_time(count, texts, 1))
    print(
        f"{args.case}: {len(texts)} documents, {megabytes:.2f} MB; "
        f"chunk {megabytes / ours:.1f} MB/s, token_count {megabytes / counted:.1f} MB/s, "
        f"chunk / token_count time {ours / counted:.2f}x (thread CPU time, best of {args.rounds})"
    )


if __name__ == "__main__":
    main()
