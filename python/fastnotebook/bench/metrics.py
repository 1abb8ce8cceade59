"""Quality metrics for a chunker's output, next to its speed.

- ``size_stats``: min, median, 95th percentile and max chunk size, and how
  many chunks exceed the limit (sizes in the chunker's unit).
- ``coverage``: the share of the input's non-whitespace characters that the
  chunks cover. Each chunk's non-whitespace characters are located in the
  input's, in order: first as one exact run (searching forward from where the
  previous chunk started, since chunks come in order and may overlap), else
  character by character, each within a short distance of the last match
  (chunkers that extract text, e.g. from HTML, drop markup and decode
  entities). Markup that no chunk keeps is therefore uncovered.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: How far (in non-whitespace characters) a character-by-character match may
#: jump ahead of the previous match.
MAX_SKIP = 512


@dataclass(frozen=True)
class SizeStats:
    count: int
    min: int
    median: float
    p95: float
    max: int
    over_limit: int


def percentile(values: Sequence[int], fraction: float) -> float:
    """The nearest-rank-interpolated percentile (as numpy's default)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def size_stats(chunks: Sequence[str], limit: int, length: Callable[[str], int] = len) -> SizeStats:
    sizes = [length(c) for c in chunks]
    if not sizes:
        return SizeStats(0, 0, 0.0, 0.0, 0, 0)
    return SizeStats(
        count=len(sizes),
        min=min(sizes),
        median=float(statistics.median(sizes)),
        p95=percentile(sizes, 0.95),
        max=max(sizes),
        over_limit=sum(s > limit for s in sizes),
    )


def _non_space(text: str) -> str:
    return "".join(text.split())


def coverage(text: str, chunks: Sequence[str]) -> float:
    """Share (0-1) of the non-whitespace characters of ``text`` covered by ``chunks``."""
    source = _non_space(text)
    if not source:
        return 1.0
    covered = bytearray(len(source))
    start = 0  # where the next chunk may begin: after the previous one's start
    for chunk in chunks:
        needle = _non_space(chunk)
        if not needle:
            continue
        at = source.find(needle, start)
        if at < 0:
            at = source.find(needle)
        if at >= 0:
            covered[at : at + len(needle)] = b"\x01" * len(needle)
            start = at + 1
            continue
        cursor = start
        for c in needle:
            hit = source.find(c, cursor, cursor + MAX_SKIP)
            if hit >= 0:
                covered[hit] = 1
                cursor = hit + 1
    return sum(covered) / len(source)
