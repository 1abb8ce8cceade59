"""Deterministic interruption, for the tests that kill a run and resume it.

``FASTNOTEBOOK_FAULT=point:n[:SIGNAL[:delay]]`` makes the process send itself
SIGNAL (default ``KILL``; ``INT`` is a Ctrl-C) the n-th time the pipeline
reaches ``point``, optionally ``delay`` seconds later from another thread
(so that the signal lands while a database write is in flight). The points:

- ``ingested``: after an ingest write transaction committed;
- ``embedded``: after a model batch returned, before its vectors are written;
- ``staged``: after a finished batch of a large record was kept
  (``fastnotebook.app.pipeline.staging``);
- ``writing``: just before a write transaction is sent;
- ``written``: after a write transaction committed.

Unset (always, outside tests) it costs one dictionary lookup per point.
"""

from __future__ import annotations

import os
import signal
import threading
from collections import Counter

__all__ = ["FAULT_ENV", "checkpoint"]

FAULT_ENV = "FASTNOTEBOOK_FAULT"
_reached: Counter[str] = Counter()


def _parse(spec: str) -> tuple[str, int, signal.Signals, float]:
    point, count, *rest = spec.split(":")
    signum = signal.Signals["SIG" + rest[0].upper()] if rest else signal.SIGKILL
    delay = float(rest[1]) if len(rest) > 1 else 0.0
    return point, int(count), signum, delay


def checkpoint(point: str) -> None:
    """Count ``point``; signal this process if the fault spec says so."""
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    target, count, signum, delay = _parse(spec)
    if point != target:
        return
    _reached[point] += 1
    if _reached[point] != count:
        return
    if delay:
        threading.Timer(delay, os.kill, (os.getpid(), signum)).start()
    else:
        os.kill(os.getpid(), signum)
