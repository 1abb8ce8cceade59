"""Chunking at scale: ``chunk_texts`` on all cores against the single-threaded
``chunk_text`` loop, and peak memory when chunking one large document (in a
fresh process, per content type). The per-content-type comparison with the
original is ``fastnotebook bench``.

Each round also times the loop in two processes at once: on a shared virtual
machine the second core is not always a whole one, and that pair's speed-up
over one loop tells what the machine gave in the same round. It is a
reference, not a bound: ``chunk_texts`` saves the loop's per-call overhead
and can pass it. Timings cover the calls; the release of their results is
also reported timed with them (``fastnotebook.bench.timing.run_once``).

    python benches/bench_chunking.py [--corpus DIR] [--repeats N] [--megabytes N]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import multiprocessing
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

from loguru import logger

from fastnotebook import chunking
from fastnotebook.bench import corpus
from fastnotebook.bench.timing import RunTimes, SelfTimed, run_once, time_rounds

# Linux: writing 5 to clear_refs resets the peak (VmHWM) to the current
# resident size, so the peak measured is the chunking's alone.
MEMORY_PROBE = """
import sys
from fastnotebook import chunking
def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
text = open(sys.argv[1], encoding="utf-8").read()
text = text * max(1, int(sys.argv[2]) // max(1, len(text.encode())))
chunking.chunk_text("warm up " * 400, chunking.ContentType(sys.argv[3]))
open("/proc/self/clear_refs", "w").write("5")
base = status("VmRSS:")
chunks = chunking.chunk_text(text, chunking.ContentType(sys.argv[3]))
print(len(text.encode()), status("VmHWM:") - base)
"""


def _load(folder: Path | None) -> corpus.Corpus:
    return corpus.load(folder) if folder else corpus.default()


def _chunk_loop(docs: corpus.Corpus) -> Callable[[], object]:
    texts = [d.text for d in docs.documents]
    paths = [d.path for d in docs.documents]
    return lambda: [chunking.chunk_text(t, None, p) for t, p in zip(texts, paths, strict=True)]


def _loop_worker(folder: Path | None, conn: Connection) -> None:
    """Sends the corpus size, then runs the loop once per message until told
    to stop (None), and sends back its times (``run_once``'s). The collector
    is off, as in the timings of this process."""
    logger.remove()
    gc.disable()
    docs = _load(folder)
    loop = _chunk_loop(docs)
    conn.send(sum(d.size for d in docs.documents))
    while conn.recv() is not None:
        conn.send(run_once(loop))


def bench_parallel(docs: corpus.Corpus, folder: Path | None, repeats: int) -> None:
    texts = [d.text for d in docs.documents]
    paths = [d.path for d in docs.documents]
    size = sum(d.size for d in docs.documents)
    # Spawned, not forked: this process already runs the pool's threads.
    context = multiprocessing.get_context("spawn")
    pipes: list[Connection] = []
    workers = []
    try:
        for _ in range(2):
            parent, child = context.Pipe()
            worker = context.Process(target=_loop_worker, args=(folder, child), daemon=True)
            worker.start()
            child.close()  # so that a worker's death ends `recv` with EOFError
            pipes.append(parent)
            workers.append(worker)
        sizes = [parent.recv() for parent in pipes]
        if sizes != [size, size]:
            raise RuntimeError(f"the workers loaded {sizes} bytes, this process {size}")

        def two_loops() -> RunTimes:
            """One loop in each worker at once. The pair's calls take as long
            as the slower worker's; with the release, as long as the slower
            worker's calls and release together."""
            for parent in pipes:
                parent.send(1)
            times: list[RunTimes] = [parent.recv() for parent in pipes]
            calls = max(call for call, _ in times)
            return calls, max(call + release for call, release in times) - calls

        timings = time_rounds(
            {
                "loop": _chunk_loop(docs),
                "batch": lambda: chunking.chunk_texts(texts, None, paths),
                "two processes": SelfTimed(two_loops),
            },
            size,
            len(texts),
            repeats,
        )
    finally:
        for parent in pipes:
            with contextlib.suppress(OSError):
                parent.send(None)
        for worker in workers:
            worker.join(timeout=10)
            if worker.is_alive():
                worker.terminate()
    loop, batch, pair = timings["loop"], timings["batch"], timings["two processes"]
    # A run of "two processes" chunks the corpus twice.
    pair_mbs = [2 * mbs for mbs in pair.mbs]
    # Each round's jobs ran back to back: their ratios are steadier than the
    # ratio of medians when the shared machine's speed drifts.
    paired = _median_ratio(batch.mbs, loop.mbs)
    machine = _median_ratio(pair_mbs, loop.mbs)
    print(
        f"chunk_texts on {os.cpu_count()} cores: {batch.median:.0f} MB/s ({batch.spread()}) "
        f"against the chunk_text loop {loop.median:.0f} MB/s ({loop.spread()}): "
        f"{batch.median / loop.median:.2f}x; median of round pairs {paired:.2f}x"
    )
    print(
        f"the loop in two processes at once: {statistics.median(pair_mbs):.0f} MB/s, "
        f"{machine:.2f}x one loop (median of rounds): what the machine gave; "
        f"chunk_texts's speed-up is {paired / machine:.0%} of it"
    )
    # The release of the result (CPython freeing every chunk string, on the
    # calling thread) follows each call untimed; timed too, it is serial work
    # that no batch function can share out.
    with_release = _median_ratio(batch.mbs_with_release, loop.mbs_with_release)
    pair_with_release = [2 * mbs for mbs in pair.mbs_with_release]
    machine_with_release = _median_ratio(pair_with_release, loop.mbs_with_release)
    print(
        f"with the release of the results timed too: chunk_texts "
        f"{batch.median_with_release / loop.median_with_release:.2f}x, "
        f"median of round pairs {with_release:.2f}x; two processes {machine_with_release:.2f}x"
    )


def _median_ratio(numerators: list[float], denominators: list[float]) -> float:
    return statistics.median(a / b for a, b in zip(numerators, denominators, strict=True))


def bench_memory(docs: corpus.Corpus, megabytes: int) -> None:
    print(f"peak memory above the loaded input, one ~{megabytes} MB document (fresh process):")
    for kind in corpus.KINDS:
        items = docs.by_kind(kind)
        if not items:
            continue
        largest = max(items, key=lambda d: d.size)
        out = subprocess.run(
            [sys.executable, "-c", MEMORY_PROBE, largest.path, str(megabytes * 1_000_000), kind],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        size, extra = int(out[0]), int(out[1])
        print(
            f"  {kind:<9} input {size / 1e6:6.1f} MB, extra peak {extra / 1e6:6.1f} MB "
            f"= {extra / size:.2f}x the input"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--megabytes", type=int, default=50)
    args = parser.parse_args()
    logger.remove()
    docs = _load(args.corpus)
    print(f"corpus: {docs.name}; Python {sys.version.split()[0]}")
    bench_parallel(docs, args.corpus, args.repeats)
    bench_memory(docs, args.megabytes)


if __name__ == "__main__":
    main()
