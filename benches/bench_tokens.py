"""Token counting throughput: fastnotebook against Python tiktoken, same run.

For each corpus folder and encoding, both count every document (tiktoken as
``len(enc.encode(text, disallowed_special=()))``), interleaved and repeated;
the table gives the median MB/s (min-max), the ratio of medians, and whether
every count was identical. Then ``token_counts`` on all cores against the
single-threaded loop, and the worst cases (10 MB of one letter, of digits, of
one CJK character, of punctuation without spaces, of spaces): ours, and
tiktoken in a subprocess capped in time.

    python benches/bench_tokens.py [--corpus DIR] [--repeats N] [--worst-mb N] [--cap SECONDS]

tiktoken cannot download its vocabularies here: the reference encodings are
built from the files the tiktoken-rs crate ships (see ``reference_encodings``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = Path(
    os.environ.get("FASTNOTEBOOK_CORPUS", HERE.parent.parent / "shared" / "corpus")
)
ENCODINGS = ("o200k_base", "cl100k_base")
FOLDERS = ("html", "md", "txt")


def reference_encodings(names: tuple[str, ...] = ENCODINGS) -> dict[str, object]:
    """Python tiktoken's encodings, loaded offline (see ``fastnotebook.bench.reference``)."""
    from fastnotebook.bench.reference import tiktoken_encoding

    return {name: tiktoken_encoding(name) for name in names}


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):7.1f} ({min(values):.1f}-{max(values):.1f})"


def load_corpus(corpus: Path) -> dict[str, list[str]]:
    docs = {}
    for folder in FOLDERS:
        files = sorted((corpus / folder).glob("*")) if (corpus / folder).is_dir() else []
        if files:
            docs[folder] = [p.read_text(encoding="utf-8", errors="surrogateescape") for p in files]
    if not docs:
        # No corpus: the repository's own documents.
        root = HERE.parent
        files = [p for p in root.rglob("*.md") if not {".venv", "target"} & set(p.parts)]
        docs["repo-md"] = [p.read_text(encoding="utf-8") for p in files]
    return docs


def size_mb(texts: list[str]) -> float:
    return sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6


def bench_corpus(docs: dict[str, list[str]], reference: dict[str, object], repeats: int) -> None:
    from fastnotebook import _core

    print("\n## Single thread, MB/s of UTF-8 input (median of interleaved repeats, min-max)\n")
    print(
        f"| {'folder':8} | {'encoding':11} | {'MB':>5} | {'tiktoken':>20} | {'fastnotebook':>22} "
        f"| ratio | same counts |"
    )
    print(f"|{'-' * 10}|{'-' * 13}|{'-' * 7}|{'-' * 22}|{'-' * 24}|-------|-------------|")
    for folder, texts in docs.items():
        mb = size_mb(texts)
        for name in ENCODINGS:
            enc = reference[name]
            ours_mbs, theirs_mbs = [], []
            same = True
            for _ in range(repeats):
                dt, theirs = timed(
                    lambda: [len(enc.encode(t, disallowed_special=())) for t in texts]  # noqa: B023
                )
                theirs_mbs.append(mb / dt)
                dt, ours = timed(lambda: [_core.token_count(t, name) for t in texts])  # noqa: B023
                ours_mbs.append(mb / dt)
                same = same and ours == theirs
            ratio = statistics.median(ours_mbs) / statistics.median(theirs_mbs)
            print(
                f"| {folder:8} | {name:11} | {mb:5.2f} | {spread(theirs_mbs):>20} "
                f"| {spread(ours_mbs):>22} | {ratio:4.1f}x | {'yes' if same else 'NO':11} |"
            )


def bench_batch(docs: dict[str, list[str]], repeats: int) -> None:
    from fastnotebook import _core

    texts = [t for ts in docs.values() for t in ts]
    mb = size_mb(texts)
    print(
        f"\n## token_counts on {os.cpu_count()} cores vs a token_count loop "
        f"({len(texts)} documents, {mb:.1f} MB)\n"
    )
    for name in ENCODINGS:
        single, batch = [], []
        for _ in range(repeats):
            dt, a = timed(lambda: [_core.token_count(t, name) for t in texts])  # noqa: B023
            single.append(mb / dt)
            dt, b = timed(lambda: _core.token_counts(texts, name))  # noqa: B023
            batch.append(mb / dt)
            assert a == b
        # Each round's pair ran back to back: their ratio is steadier than the
        # ratio of medians when the shared machine's speed drifts.
        paired = statistics.median(b / s for b, s in zip(batch, single, strict=True))
        print(
            f"- {name}: loop {spread(single)} MB/s, token_counts {spread(batch)} MB/s "
            f"({statistics.median(batch) / statistics.median(single):.2f}x; "
            f"median of round pairs {paired:.2f}x)"
        )


WORST_CASES = {
    "one letter": "a",
    "digits": "0123456789",
    "one CJK character": "中",
    "punctuation, no spaces": "!@#$%^&*()-=+[]{};:,.<>?/|~`'\"\\_",
    "spaces": " ",
}


def worst_text(unit: str, megabytes: int) -> str:
    """``unit`` repeated to ``megabytes`` MB of UTF-8."""
    return unit * (megabytes * 1_000_000 // len(unit.encode()))


TIKTOKEN_WORST = """
import sys, time
sys.path.insert(0, {here!r})
from bench_tokens import reference_encodings, worst_text
enc = reference_encodings(({name!r},))[{name!r}]
text = worst_text({unit!r}, {mb})
start = time.perf_counter()
n = len(enc.encode(text, disallowed_special=()))
print(n, time.perf_counter() - start)
"""


def bench_worst(megabytes: int, cap: float) -> None:
    from fastnotebook import _core

    print(
        f"\n## Worst cases, {megabytes} MB each (tiktoken in a subprocess, capped at {cap:.0f} s)\n"
    )
    print("| case | encoding | fastnotebook | tiktoken | same count |")
    print("|---|---|---|---|---|")
    for label, unit in WORST_CASES.items():
        text = worst_text(unit, megabytes)
        for name in ENCODINGS:
            dt, ours = timed(lambda: _core.token_count(text, name))  # noqa: B023
            script = TIKTOKEN_WORST.format(here=str(HERE), name=name, unit=unit, mb=megabytes)
            try:
                out = subprocess.run(
                    [sys.executable, "-c", script],
                    capture_output=True,
                    text=True,
                    timeout=cap + 30,  # + loading the vocabulary
                    check=True,
                ).stdout.split()
                theirs, their_dt = int(out[0]), float(out[1])
                theirs_txt = f"{their_dt:.2f} s"
                same = "yes" if theirs == ours else f"NO ({theirs})"
            except subprocess.TimeoutExpired:
                theirs_txt, same = f"> {cap:.0f} s (stopped)", "-"
            except subprocess.CalledProcessError as err:
                # e.g. whitespace runs of 1M+ characters: fancy-regex's
                # backtracking stack overflows and tiktoken raises ValueError.
                last = (err.stderr.strip().splitlines() or ["?"])[-1]
                theirs_txt, same = f"raises: {last[:70]}", "-"
            print(f"| {label} | {name} | {dt:.2f} s ({ours} tokens) | {theirs_txt} | {same} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--worst-mb", type=int, default=10)
    parser.add_argument(
        "--cap", type=float, default=60.0, help="seconds for tiktoken per worst case"
    )
    parser.add_argument("--skip-worst", action="store_true")
    args = parser.parse_args()

    from fastnotebook import _core

    for name in ENCODINGS:
        dt, _ = timed(lambda: _core.token_count("warm up", name))  # noqa: B023
        print(f"first use of {name} (loads the vocabulary): {dt * 1000:.0f} ms")
    reference = reference_encodings()
    docs = load_corpus(args.corpus)
    bench_corpus(docs, reference, args.repeats)
    bench_batch(docs, args.repeats)
    if not args.skip_worst:
        bench_worst(args.worst_mb, args.cap)


if __name__ == "__main__":
    main()
