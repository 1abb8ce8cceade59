"""What a long run shows while it works and when it is done.

``Progress`` draws one status line (items, chunks, MB, MB/s, ETA, and the
model batches of a large file in progress) on a terminal,
redrawn at most a few times a second, or prints a plain line every few
seconds into a log; ``StageClock`` adds up the busy time of each stage, which
the summary splits into model, database and the pipeline's own work.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TextIO

__all__ = ["OWN_STAGES", "Progress", "StageClock", "format_duration", "format_rate", "table"]

# The stages that are neither the model nor the database: the part this
# project is responsible for.
OWN_STAGES = ("read", "parse", "hash", "chunk", "pool", "prepare")
MODEL_STAGES = ("model",)
DATABASE_STAGES = ("plan", "load", "write", "index")


def format_duration(seconds: float) -> str:
    seconds = max(0, int(seconds + 0.5))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def format_rate(nbytes: float, seconds: float) -> str:
    """Bytes per second as MB/s, or as kB/s below 1 MB/s (a real model on
    one or two cores embeds a few kB of text per second)."""
    rate = nbytes / max(seconds, 1e-9)
    return f"{rate / 1e6:.2f} MB/s" if rate >= 1e6 else f"{rate / 1e3:.1f} kB/s"


class StageClock:
    """Busy seconds per stage; stages overlap, so they may add up to more
    than the wall time. Measures of one stage that overlap (two write
    transactions in flight) count their shared time once."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self._lock = threading.Lock()
        self._open: defaultdict[str, int] = defaultdict(int)  # measures under way
        self._since: dict[str, float] = {}  # when the stage's current busy time began

    def add(self, stage: str, seconds: float) -> None:
        with self._lock:
            self.seconds[stage] += seconds

    @contextmanager
    def measure(self, stage: str) -> Iterator[None]:
        with self._lock:
            if not self._open[stage]:
                self._since[stage] = time.perf_counter()
            self._open[stage] += 1
        try:
            yield
        finally:
            with self._lock:
                self._open[stage] -= 1
                if not self._open[stage]:
                    self.seconds[stage] += time.perf_counter() - self._since.pop(stage)

    def total(self, stages: Sequence[str]) -> float:
        return sum(self.seconds.get(s, 0.0) for s in stages)

    def breakdown(self, wall: float) -> str:
        """One line: model, database and own busy time, as seconds and shares of ``wall``."""
        wall = max(wall, 1e-9)
        parts = []
        for label, stages in (
            ("model", MODEL_STAGES),
            ("database", DATABASE_STAGES),
            ("ours", OWN_STAGES),
        ):
            busy = self.total(stages)
            parts.append(f"{label} {busy:.2f} s ({100 * busy / wall:.1f}%)")
        own = ", ".join(
            f"{s} {self.seconds[s]:.2f}" for s in OWN_STAGES if self.seconds.get(s, 0.0) > 0
        )
        return f"busy time: {'; '.join(parts)}" + (f" [{own}]" if own else "")


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain text table: the first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in headers]] + [
        [f"{c:,}" if isinstance(c, int) else str(c) for c in row] for row in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        first = row[0].ljust(widths[0])
        rest = [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])


class Progress:
    """A live status line for ``total_items`` items of ``total_bytes`` bytes."""

    def __init__(
        self,
        label: str,
        unit: str,
        total_items: int,
        total_bytes: int,
        stream: TextIO | None = None,
        enabled: bool = True,
    ) -> None:
        self.label, self.unit = label, unit
        self.total_items, self.total_bytes = total_items, total_bytes
        self.items = self.chunks = self.failed = 0
        # Bytes done: a float, as embed credits each chunk with its share of
        # its record's bytes, so that the ETA moves within a large record.
        self.bytes: float = 0
        self.total_chunks = 0  # chunks known so far (0: not counted)
        # Large files in progress: name -> (batches done, batches in all).
        self.files: dict[str, tuple[int, int]] = {}
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and self.stream.isatty()
        self.start = time.perf_counter()
        self._last_draw = self.start
        self._width = 0

    def add_chunks(self, chunks: int) -> None:
        """``chunks`` more to do (counted as records are chunked)."""
        self.total_chunks += chunks

    def advance(self, items: int = 0, nbytes: float = 0, chunks: int = 0, failed: int = 0) -> None:
        self.items += items
        self.bytes += nbytes
        self.chunks += chunks
        self.failed += failed
        self._maybe_draw()

    def show_file(self, name: str, done: int, total: int) -> None:
        """A large file's own progress: ``done`` of its ``total`` model
        batches (shown until they are all done)."""
        if done >= total:
            self.files.pop(name, None)
        else:
            self.files[name] = (done, total)
        self._maybe_draw()

    def line(self) -> str:
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        rate = self.bytes / elapsed
        parts = [f"{self.label} {self.items:,}/{self.total_items:,} {self.unit}"]
        if self.total_items:
            filled = int(20 * self.items / self.total_items)
            parts.insert(0, "[" + "#" * filled + "." * (20 - filled) + "]")
        parts.append(f"{self.bytes / 1e6:.1f}/{self.total_bytes / 1e6:.1f} MB")
        parts.append(format_rate(self.bytes, elapsed))
        if self.total_chunks:
            parts.append(f"{self.chunks:,}/{self.total_chunks:,} chunks")
        elif self.chunks:
            parts.append(f"{self.chunks:,} chunks")
        if self.failed:
            parts.append(f"{self.failed:,} failed")
        if self.files:
            name, (done, total) = next(iter(self.files.items()))
            more = f" (+{len(self.files) - 1} more)" if len(self.files) > 1 else ""
            parts.append(f"{name} {done:,}/{total:,} batches{more}")
        remaining = self.total_bytes - self.bytes
        if rate > 0 and remaining > 0:
            parts.append(f"ETA {format_duration(remaining / rate)}")
        return "  ".join(parts)

    def _maybe_draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        interval = 0.2 if self.tty else 5.0
        if not force and now - self._last_draw < interval:
            return
        self._last_draw = now
        text = self.line()
        if self.tty:
            self.stream.write("\r" + text.ljust(self._width))
            self._width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """Draw the final state and end the line."""
        if not self.enabled:
            return
        self._maybe_draw(force=True)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
