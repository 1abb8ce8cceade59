"""The write transactions a run keeps in flight: at most one per lane of the
store's change counter (``writer.LANES``, ``writer.lanes_for``), so that the
engine inserts on as many cores; a transaction started ``alone`` (insights
and notes, whose events count their changes on one shared row) runs with no
other. Used by ``embed``'s write stage and by the Ray engine's database sink.

A failed transaction's error is raised by the next call that looks at the
tasks (``start``, ``reap``, ``drain``, ``raise_failed``); the caller then
hands that error, or its own, to ``settle``, which lets the others end
(each transaction is whole or absent) before the error goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

__all__ = ["Lanes"]

Write = Callable[[int], Coroutine[Any, Any, None]]


class Lanes:
    """Write tasks in flight, one per lane at most (see the module)."""

    def __init__(self, count: int) -> None:
        self.count = max(1, count)
        self._running: dict[asyncio.Task[None], tuple[int, bool]] = {}  # task: (lane, alone)

    @property
    def tasks(self) -> set[asyncio.Task[None]]:
        return set(self._running)

    def full(self, alone: bool = False) -> bool:
        """Whether a transaction (``alone`` or not) started now would wait."""
        running = self._running.values()
        return alone or len(running) >= self.count or any(a for _, a in running)

    async def start(self, write: Write, alone: bool = False) -> None:
        """Start ``write(lane)`` once a lane is free (all of them, ``alone``)."""
        self.raise_failed()
        while self._running and self.full(alone):
            await self.reap()
        lane = min(set(range(self.count)) - {lane for lane, _ in self._running.values()})
        self._running[asyncio.create_task(write(lane))] = (lane, alone)

    def raise_failed(self) -> None:
        """Forget the tasks that have ended; raise the error of a failed one."""
        done = [task for task in self._running if task.done()]
        for task in done:
            del self._running[task]
        _retrieved(done)
        for task in done:
            task.result()

    async def reap(self) -> None:
        """Wait for one task to end, then ``raise_failed``."""
        if self._running:
            await asyncio.wait(self._running, return_when=asyncio.FIRST_COMPLETED)
        self.raise_failed()

    async def drain(self) -> None:
        """Wait for every task; the first failure is raised at once."""
        while self._running:
            await self.reap()

    async def settle(self, error: BaseException) -> None:
        """After ``error``: the tasks under way end (they are cancelled only
        when the run itself is, a second Ctrl-C), their errors marked seen."""
        if not self._running:
            return
        if isinstance(error, asyncio.CancelledError):
            for task in self._running:
                task.cancel()
        await asyncio.wait(self._running)
        _retrieved(self._running)
        self._running.clear()


def _retrieved(tasks: Iterable[asyncio.Task[None]]) -> None:
    """Mark the errors of ended ``tasks`` as seen (the caller raises one)."""
    for task in tasks:
        if task.done() and not task.cancelled():
            task.exception()
