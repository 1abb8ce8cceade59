"""How the benchmark times a job: interleaved rounds, each timing run back
to back until it lasts long enough (as ``timeit``'s autorange), the release
of a job's result timed apart from its call (``run_once``)."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

__all__ = ["MIN_TIMING_SECONDS", "RunTimes", "SelfTimed", "Timing", "run_once", "time_rounds"]


def _mbs(size: int, seconds: float) -> float:
    return size / max(seconds, 1e-9) / 1e6


@dataclass
class Timing:
    """One entry a round: MB/s and documents/s of the calls, and MB/s with
    the release of their results timed too."""

    mbs: list[float] = field(default_factory=list)
    docs_per_s: list[float] = field(default_factory=list)
    mbs_with_release: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.mbs) if self.mbs else 0.0

    @property
    def median_with_release(self) -> float:
        return statistics.median(self.mbs_with_release) if self.mbs_with_release else 0.0

    def spread(self) -> str:
        return f"{min(self.mbs):.1f}-{max(self.mbs):.1f}" if self.mbs else "-"


#: The shortest a timing lasts: a job is run back to back until this much
#: time has passed (as ``timeit``'s autorange does). A 5 ms pass timed once is
#: at the mercy of one scheduler tick on a shared machine.
MIN_TIMING_SECONDS = 0.2

#: One run of a job: the seconds its call took, then the seconds the release
#: of its result took.
RunTimes = tuple[float, float]


@dataclass(frozen=True)
class SelfTimed:
    """A job that times its own runs (in other processes, say): ``run`` does
    one and returns its :data:`RunTimes`."""

    run: Callable[[], RunTimes]


def run_once(job: Callable[[], object]) -> RunTimes:
    """Runs ``job`` once. The timing of the call ends when it returns; its
    result is released after, timed apart (as criterion's
    ``iter_with_large_drop``). Releasing a list of chunks is CPython freeing
    each string, on the thread that drops the list: the same cost for the same
    chunks whichever library made them, and serial whatever the library did in
    parallel."""
    start = time.perf_counter()
    result = job()
    returned = time.perf_counter()
    del result
    return returned - start, time.perf_counter() - returned


def time_rounds(
    jobs: Mapping[str, Callable[[], object] | SelfTimed],
    size: int,
    count: int,
    repeats: int,
    min_seconds: float | None = None,
) -> dict[str, Timing]:
    """Times every job once per round, ``repeats`` rounds, the jobs of a round
    one after the other. A timing runs its job at least once and then again
    until ``min_seconds`` (default ``MIN_TIMING_SECONDS``) have passed;
    ``size`` (bytes) and ``count`` (documents) are per run."""
    if min_seconds is None:
        min_seconds = MIN_TIMING_SECONDS
    timings = {name: Timing() for name in jobs}
    for _ in range(repeats):
        for name, job in jobs.items():
            once = job.run if isinstance(job, SelfTimed) else partial(run_once, job)
            runs, calls, releases = _autorange(once, min_seconds)
            timing = timings[name]
            timing.mbs.append(_mbs(size * runs, calls))
            timing.docs_per_s.append(count * runs / max(calls, 1e-9))
            timing.mbs_with_release.append(_mbs(size * runs, calls + releases))
    return timings


def _autorange(once: Callable[[], RunTimes], min_seconds: float) -> tuple[int, float, float]:
    """Runs ``once`` until ``min_seconds`` have passed in its runs (at least
    once): the number of runs, the seconds of their calls and of their
    releases. The cyclic garbage collector is off meanwhile, as ``timeit``
    has it: its passes cost in proportion to every object the process holds
    (here, ten libraries and the outputs kept for comparison), not to the
    job, and would land in whichever timing was running."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        runs, calls, releases = 0, 0.0, 0.0
        while True:
            call, release = once()
            runs += 1
            calls += call
            releases += release
            if calls + releases >= min_seconds:
                return runs, calls, releases
    finally:
        if collecting:
            gc.enable()
