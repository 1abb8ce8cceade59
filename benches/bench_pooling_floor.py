"""What mean pooling from Python lists cannot avoid, against what it costs.

``mean_pool_embeddings`` takes the original's input, a list of lists of
Python floats, and returns its output, a list of Python floats. Whatever
computes the mean has to read every float object of the input (each one a
separate heap object behind a pointer of its list: 32 bytes of memory per
8-byte value) and make the result's float objects. This measures, on the
same documents as ``fastnotebook bench`` (8 x 768 floats each, more than the
caches hold), in interleaved rounds with the garbage collector off:

- the original's numpy path and ``mean_pool_embeddings``, each awaited as
  the benchmark awaits them;
- *memory floor*: reading as many bytes as the input's float objects and
  list pointers occupy (32 bytes a value), as one numpy array (``sum``): no
  reader of the objects can take less;
- *read, CPython*: CPython's own C loop over the same float objects (``sum``
  of each row; it also updates each object's reference count);
- *output floor*: making a 768-float result list (``ndarray.tolist``).

The ratio of the original's time to memory floor + output floor bounds the
speed-up any implementation of this API can reach on this machine.

    python benches/bench_pooling_floor.py [--documents N] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from collections.abc import Awaitable, Callable

import numpy as np

from fastnotebook.bench import reference
from fastnotebook.embedding import mean_pool_embeddings

Pool = Callable[[list[list[float]]], Awaitable[list[float]]]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    lists = [rng.normal(size=(8, 768)).tolist() for _ in range(args.documents)]
    result = rng.normal(size=768)
    # 8-byte pointer + 24-byte float object per value.
    footprint = np.ones(len(lists) * 8 * 768 * 4)

    async def pool_all(pool: Pool) -> object:
        return [await pool(e) for e in lists]

    jobs: dict[str, Callable[[], object]] = {
        "original (numpy, from lists)": lambda: asyncio.run(pool_all(reference.mean_pool)),
        "fastnotebook mean_pool_embeddings": lambda: asyncio.run(pool_all(mean_pool_embeddings)),
        "memory floor (numpy sum, same bytes)": lambda: footprint.sum(),
        "read, CPython (sum of each row)": lambda: [[sum(row) for row in e] for e in lists],
        "output floor (768-float list)": lambda: [result.tolist() for _ in lists],
    }
    times: dict[str, list[float]] = {name: [] for name in jobs}
    gc.disable()
    try:
        for _ in range(args.rounds):
            for name, job in jobs.items():
                start = time.perf_counter()
                out = job()
                times[name].append(time.perf_counter() - start)
                del out
    finally:
        gc.enable()
    us = {name: statistics.median(t) / len(lists) * 1e6 for name, t in times.items()}
    original = us["original (numpy, from lists)"]
    for name, value in us.items():
        print(f"{name:36} {value:8.1f} us a document ({original / value:5.1f}x the original)")
    floor = us["memory floor (numpy sum, same bytes)"] + us["output floor (768-float list)"]
    print(
        f"{'floor (memory + output)':36} {floor:8.1f} us a document: at most "
        f"{original / floor:.1f}x the original on this machine"
    )


if __name__ == "__main__":
    main()
