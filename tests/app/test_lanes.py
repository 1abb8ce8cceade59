"""``Lanes``: the write transactions a run keeps in flight."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from fastnotebook.app.pipeline.lanes import Lanes


class Recorder:
    def __init__(self) -> None:
        self.active: dict[int, bool] = {}
        self.seen: list[dict[int, bool]] = []
        self.ended: list[int] = []
        self.cancelled: list[int] = []

    def write(
        self,
        n: int,
        alone: bool = False,
        fail: bool = False,
        seconds: float = 0.02,
        until: asyncio.Event | None = None,
    ) -> Callable[[int], Coroutine[Any, Any, None]]:
        async def run(lane: int) -> None:
            assert lane not in self.active, "two tasks on one lane"
            self.active[lane] = alone
            self.seen.append(dict(self.active))
            try:
                await asyncio.sleep(seconds)
                if until is not None:
                    await until.wait()
                if fail:
                    raise RuntimeError(f"write {n} failed")
                self.ended.append(n)
            except asyncio.CancelledError:
                self.cancelled.append(n)
                raise
            finally:
                del self.active[lane]

        return run


async def test_one_task_per_lane_and_alone_ones_alone() -> None:
    lanes, rec = Lanes(2), Recorder()
    for n in range(6):
        await lanes.start(rec.write(n, alone=n == 3), alone=n == 3)
    await lanes.drain()
    assert sorted(rec.ended) == list(range(6)) and lanes.tasks == set()
    assert max(len(now) for now in rec.seen) == 2
    assert all(len(now) == 1 for now in rec.seen if True in now.values())


async def test_one_lane_runs_one_at_a_time() -> None:
    lanes, rec = Lanes(1), Recorder()
    for n in range(3):
        await lanes.start(rec.write(n))
    await lanes.drain()
    assert rec.ended == [0, 1, 2] and all(len(now) == 1 for now in rec.seen)


async def test_a_failure_is_raised_and_the_others_end_whole() -> None:
    lanes, rec, release = Lanes(2), Recorder(), asyncio.Event()
    await lanes.start(rec.write(0, fail=True, seconds=0))
    await lanes.start(rec.write(1, seconds=0, until=release))
    with pytest.raises(RuntimeError, match="write 0 failed") as raised:
        await lanes.start(rec.write(2))
    assert rec.ended == []  # the one beside it is still running
    release.set()
    await lanes.settle(raised.value)
    assert rec.ended == [1] and lanes.tasks == set()


async def test_cancelling_the_run_cancels_the_tasks() -> None:
    lanes, rec = Lanes(2), Recorder()
    await lanes.start(rec.write(0, seconds=10))
    await lanes.start(rec.write(1, seconds=10))
    await asyncio.sleep(0)  # both running
    assert len(rec.active) == 2
    await lanes.settle(asyncio.CancelledError())
    assert sorted(rec.cancelled) == [0, 1] and rec.ended == [] and lanes.tasks == set()


def test_at_least_one_lane() -> None:
    assert Lanes(0).count == 1
