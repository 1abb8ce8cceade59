"""Text cleaning throughput: fastnotebook against the original, same run.

remove_non_printable and remove_non_ascii on 1 MB inputs built from the corpus;
parse_thinking_content on 100,000-character answers (the longest the original
parses: longer content is returned untouched by both, in constant time).

    python benches/bench_text_utils.py [--corpus DIR] [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from fastnotebook import text_utils
from fastnotebook.bench import reference

HERE = Path(__file__).resolve().parent

DEFAULT_CORPUS = Path(
    os.environ.get("FASTNOTEBOOK_CORPUS", HERE.parent.parent / "shared" / "corpus")
)


def samples(corpus: Path, size: int) -> dict[str, str]:
    out = {}
    for kind in ("html", "md", "txt"):
        files = sorted((corpus / kind).glob("*")) if (corpus / kind).is_dir() else []
        text = "".join(p.read_text(encoding="utf-8") for p in files[:40])
        if text:
            out[kind] = (text * (size // len(text) + 1))[:size]
    if not out:
        text = "".join(
            p.read_text(encoding="utf-8")
            for p in HERE.parent.rglob("*.md")
            if ".venv" not in p.parts
        )
        out["repo"] = (text * (size // len(text) + 1))[:size]
    return out


def rate(fn: Callable[[str], object], text: str, repeats: int) -> list[float]:
    size = len(text.encode("utf-8", "surrogatepass"))
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(text)
        runs.append(size / (time.perf_counter() - start) / 1e6)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    cases: list[tuple[str, Callable[[str], object], Callable[[str], object], int]] = [
        (
            "remove_non_printable",
            text_utils.remove_non_printable,
            reference.remove_non_printable,
            1_000_000,
        ),
        ("remove_non_ascii", text_utils.remove_non_ascii, reference.remove_non_ascii, 1_000_000),
        (
            "parse_thinking_content",
            text_utils.parse_thinking_content,
            reference.parse_thinking_content,
            100_000,
        ),
    ]
    print(
        f"{'function':<24} {'input':<6} {'size':>8} {'fastnotebook MB/s':>18} "
        f"{'original MB/s':>14} {'ratio':>7}"
    )
    for name, ours, original, size in cases:
        for kind, text in samples(args.corpus, size).items():
            if name == "parse_thinking_content":
                text = f"<think>{text[:2000]}</think>\n\n\n{text}"[:size]
            assert ours(text) == original(text)
            a, b = [], []
            for _ in range(args.repeats):
                a += rate(ours, text, 1)
                b += rate(original, text, 1)
            ratio = statistics.median(a) / statistics.median(b)
            print(
                f"{name:<24} {kind:<6} {len(text):>8,} {statistics.median(a):>18.1f} "
                f"{statistics.median(b):>14.1f} {ratio:>6.1f}x"
            )


if __name__ == "__main__":
    main()
