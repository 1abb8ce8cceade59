"""Hostile input at 1, 10 and 100 MB: time per case and size, the growth from
one size to the next (10x input: about 10x time when linear, about 11-13x for
n log n, 100x for quadratic), and peak memory.

    python benches/bench_hostile.py [--sizes 1,10,100] [--repeats N] [--only NAME]
    python benches/bench_hostile.py --memory [--corpus-mb 1000]

Each case builds its input once per size, then times the call (best of
``--repeats``, 2 at 100 MB and over). The table shows the process's CPU time
(``time.process_time``: user + system, every thread), which a busy shared
machine disturbs far less than the wall clock; the JSON output holds both.
The verdict column reads the growth of the CPU time over the largest step:
"linear" under 15x, "n log n?" under 25x, else "SUPERLINEAR".

The timings run with glibc's mmap threshold fixed at 128 KB
(``MALLOC_MMAP_THRESHOLD_``; the script re-runs itself with it set): every
large buffer then comes fresh from the kernel at every size. By default glibc
raises the threshold up to 32 MB as buffers are freed, so the buffers of 1 and
10 MB runs are recycled from the heap while those of 100 MB runs are new pages
each time: the page faults, a cost linear in the size, would appear only in
the largest step and read as superlinear growth. ``--default-malloc`` keeps
the default.

``--memory`` writes a corpus of documents of mixed kinds and sizes (1000 MB
by default, the largest document 20 MB) to a temporary folder and chunks it
file by file in a fresh process, reporting its peak RSS
(``resource.getrusage``) against the largest document: the ratio bounds the
memory per byte of the largest document; the total corpus size does not
appear in it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

MB = 1_000_000
FIXED_MMAP = "MALLOC_MMAP_THRESHOLD_"
HERE = Path(__file__).resolve().parent


def numbered(prefix: str, size: int, sep: str = " ") -> str:
    """`prefix0 prefix1 ...` of about `size` characters."""
    out: list[str] = []
    total, i = 0, 0
    while total < size:
        word = f"{prefix}{i}{sep}"
        out.append(word)
        total += len(word)
        i += 1
    return "".join(out)[:size]


def repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def cases() -> dict[str, tuple[Callable[[int], object], Callable[[object], object]]]:
    """name -> (build input of about n characters, call on it)."""
    from fastnotebook import _core
    from fastnotebook.chunking import ContentType, chunk_text
    from fastnotebook.text_utils import remove_non_printable
    from fastnotebook.token_utils import token_count

    def chunk(ct: ContentType | None, unit: str = "chars") -> Callable[[object], object]:
        return lambda text: chunk_text(text, ct, unit=unit)  # type: ignore[arg-type]

    plain, md, html = ContentType.PLAIN, ContentType.MARKDOWN, ContentType.HTML
    control = "".join(map(chr, [*range(0x20), *range(0x7F, 0xA0)]))
    surrogates = "".join(chr(c) for c in range(0xD800, 0xE000, 7))
    return {
        "plain: words, no newline": (lambda n: numbered("w", n), chunk(plain)),
        "plain: words, tokens": (lambda n: numbered("w", n), chunk(plain, "tokens")),
        "plain: one character": (lambda n: "x" * n, chunk(plain)),
        "plain: one character, tokens": (lambda n: "x" * n, chunk(plain, "tokens")),
        "plain: controls + surrogates": (
            lambda n: repeat(control + "word " + surrogates, n),
            chunk(plain),
        ),
        "markdown: headers": (lambda n: numbered("# h", n, "\n"), chunk(md)),
        "markdown: one line of #": (lambda n: "#" * n, chunk(md)),
        "markdown: unclosed fence": (lambda n: "```\n" + numbered("# c", n, "\n"), chunk(md)),
        "html: h2 headers": (lambda n: repeat("<h2>title</h2>", n), chunk(html)),
        "html: nested tags": (
            lambda n: "<div>" * (n // 11) + "deep" + "</div>" * (n // 11),
            chunk(html),
        ),
        "html: unclosed comment": (lambda n: "<p>a<!-- " + numbered("c", n), chunk(html)),
        "html: unclosed attribute": (lambda n: "<p>a<div class='" + numbered("v", n), chunk(html)),
        "html: <a<a<a": (lambda n: repeat("<a", n), chunk(html)),
        "html: script": (
            lambda n: "<body><script>" + repeat("var s = '<div>' + i;\n", n) + "</script>",
            chunk(html),
        ),
        "detect: 10 MB of [": (lambda n: "[" * n, lambda t: chunk_text(t)),
        "tokens: one letter": (lambda n: "a" * n, lambda t: token_count(t)),  # type: ignore[arg-type]
        "tokens: digits": (lambda n: "7" * n, lambda t: token_count(t)),  # type: ignore[arg-type]
        "tokens: spaces": (lambda n: " " * n, lambda t: token_count(t)),  # type: ignore[arg-type]
        "tokens: emoji": (lambda n: "😀" * (n // 4), lambda t: token_count(t)),  # type: ignore[arg-type]
        "tokens: words": (lambda n: numbered("w", n), lambda t: token_count(t)),  # type: ignore[arg-type]
        "encode: one letter": (lambda n: "a" * n, lambda t: _core.encode_ordinary(t)),  # type: ignore[arg-type]
        "clean: non-printable": (
            lambda n: repeat(control + "word\u2028", n),
            lambda t: remove_non_printable(t),  # type: ignore[arg-type]
        ),
    }


def best_of(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """The least CPU time and the least wall time over `repeats` calls."""
    cpu = wall = float("inf")
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        cpu = min(cpu, time.process_time() - start_cpu)
        wall = min(wall, time.perf_counter() - start)
    return cpu, wall


def verdict(growth: float) -> str:
    if growth < 15:
        return "linear"
    if growth < 25:
        return "n log n?"
    return "SUPERLINEAR"


def run_timings(sizes: list[int], repeats: int, only: str | None) -> list[dict[str, object]]:
    rows = []
    mmap = os.environ.get(FIXED_MMAP)
    print(f"glibc mmap threshold: {f'fixed at {mmap} bytes' if mmap else 'default (dynamic)'}")
    header = " ".join(f"{s:>6} MB" for s in sizes)
    print(f"CPU seconds, best of {repeats} (2 at 100 MB and over)")
    print(f"{'case':34} {header}   growth  verdict")
    for name, (build, call) in cases().items():
        if only and only not in name:
            continue
        times, walls = [], []
        for size in sizes:
            text = build(size * MB)
            cpu, wall = best_of(
                lambda text=text, call=call: call(text), repeats if size < 100 else 2
            )
            times.append(cpu)
            walls.append(wall)
            del text
        growth = times[-1] / times[-2] if len(times) > 1 and times[-2] > 0 else float("nan")
        cells = " ".join(f"{t:8.3f}s" for t in times)
        print(f"{name:34} {cells}  {growth:6.1f}x  {verdict(growth)}", flush=True)
        rows.append(
            {
                "case": name,
                "sizes_mb": sizes,
                "cpu_seconds": times,
                "wall_seconds": walls,
                "growth": growth,
            }
        )
    return rows


CHILD = r"""
import json, resource, sys
from pathlib import Path
from loguru import logger
from fastnotebook.chunking import chunk_text
logger.remove()
largest = total = chunks = 0
for path in sorted(Path(sys.argv[1]).iterdir()):
    text = path.read_text(encoding="utf-8")
    largest = max(largest, len(text.encode()))
    total += len(text.encode())
    chunks += len(chunk_text(text, file_path=path.name))
    del text
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"peak": peak, "largest": largest, "total": total, "chunks": chunks}))
"""

BASELINE = r"""
import json, resource
import fastnotebook.chunking
print(json.dumps({"peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def write_corpus(folder: Path, total_mb: int) -> None:
    """Documents of the three kinds, 0.1 to 20 MB, `total_mb` in all."""
    sizes = [20 * MB, 10 * MB] + [5 * MB] * 4 + [MB] * 20 + [MB // 10] * 50
    kinds = [
        (".txt", lambda n: numbered("word", n)),
        (".md", lambda n: repeat("# Section\n\nSome *markdown* text, [a link](x).\n\n", n)),
        (".html", lambda n: repeat("<h2>Title</h2><p>para &amp; <b>bold</b> text</p>\n", n)),
    ]
    written, i = 0, 0
    while written < total_mb * MB:
        size = min(sizes[i % len(sizes)], total_mb * MB - written)
        suffix, make = kinds[i % len(kinds)]
        (folder / f"doc{i:05d}{suffix}").write_text(make(size), encoding="utf-8")
        written += size
        i += 1


def run_memory(total_mb: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="fastnotebook-corpus-") as tmp:
        write_corpus(Path(tmp), total_mb)
        env = dict(os.environ)
        base = json.loads(subprocess.check_output([sys.executable, "-c", BASELINE], env=env))
        start = time.perf_counter()
        out = json.loads(subprocess.check_output([sys.executable, "-c", CHILD, tmp], env=env))
        elapsed = time.perf_counter() - start
    extra = out["peak"] - base["peak"]
    print(
        f"corpus {out['total'] / MB:.0f} MB in {elapsed:.1f}s, {out['chunks']} chunks; "
        f"largest document {out['largest'] / MB:.1f} MB\n"
        f"peak RSS {out['peak'] / MB:.0f} MB (interpreter and imports alone "
        f"{base['peak'] / MB:.0f} MB): {extra / MB:.0f} MB for the work, "
        f"{extra / out['largest']:.1f}x the largest document"
    )
    return {**out, "baseline": base["peak"], "seconds": elapsed, "ratio": extra / out["largest"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,10,100", help="input sizes in MB")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", help="run the cases whose name contains this")
    parser.add_argument("--memory", action="store_true", help="peak RSS on a corpus")
    parser.add_argument("--corpus-mb", type=int, default=1000)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--default-malloc", action="store_true", help="time without fixing the mmap threshold"
    )
    args = parser.parse_args()
    if not (args.memory or args.default_malloc or FIXED_MMAP in os.environ):
        env = {**os.environ, FIXED_MMAP: "131072"}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    from loguru import logger

    logger.remove()  # chunk_text's debug lines would drown the table
    if args.memory:
        result: object = run_memory(args.corpus_mb)
    else:
        sizes = [int(s) for s in args.sizes.split(",")]
        result = run_timings(sizes, args.repeats, args.only)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
