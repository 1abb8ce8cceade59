"""Builds the fuzz targets' seed corpora (fuzz/corpus/<target>/seed-*) from
the test documents: the shared corpus (html, md, txt) when present, the
repository's own documents, and hand-made hostile snippets. Each seed is a
target's parameter bytes followed by a text slice (the input format of
``fuzz/src/invariants.rs``). Standard library only; rerun at will."""

from __future__ import annotations

import os
import random
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = Path(os.environ.get("FASTNOTEBOOK_CORPUS", ROOT.parent / "shared" / "corpus"))
SLICE = 3000  # bytes of text per seed: room for the fuzzer under -max_len=4096
PER_KIND = 25

HOSTILE = [
    "\x00\x01\x07\x1f\x7f\x85\u2028\u200b\ufeff lone \ud800? no: \ufffd",
    "<div>" * 50 + "deep" + "</div>" * 50,
    "<p>a<!-- unterminated <b>x</b>",
    "<a href='x>y'>t</a><a b='x>u",
    "<script>var s = '<div>';</script><style>p{}</style><p>after",
    "<![CDATA[x]]><![if x]><!DOCTYPE html><?pi?>&amp;&#128;&#x110000;&bogus;",
    "<h1>A</h1><p>a</p><h2>B</h2><div><h3>C</h3><p>c</p></div><h1>D</h1>",
    "# A\n```\n# not\n\n```\n## B\n~~~\n# x\n\ntext\n###no\n#### four",
    "  \u200b# A\u00a0\n\tx\u0007y \n\u200b\nz",
    "x" * 2000,
    "7" * 1000 + " " * 500 + "\n" * 300,
    "<think> a </think>Answer\n\n\n\nmore<think>b</think>x</think>",
    "[a](b) [c](d) **bold** __u__ `code` > quote\n- item\n1. one\n",
    "word, word. word\n\nword " * 40,
    "é日本😀\u3000" * 100,
]


def documents() -> list[bytes]:
    docs: list[bytes] = []
    for kind in ("html", "md", "txt"):
        folder = CORPUS / kind
        files = sorted(folder.iterdir())[:PER_KIND] if folder.is_dir() else []
        for path in files:
            data = path.read_bytes()
            docs.append(data[:SLICE])
            if len(data) > 2 * SLICE:
                middle = len(data) // 2
                docs.append(data[middle : middle + SLICE])
    for path in [ROOT / "README.md", *sorted((ROOT / "tests").glob("test_*.py"))[:8]]:
        if path.is_file():
            docs.append(path.read_bytes()[:SLICE])
    docs += [h.encode("utf-8", "surrogatepass")[:SLICE] for h in HOSTILE]
    return docs


def params(target: str, rng: random.Random) -> list[bytes]:
    """A few parameter prefixes for one target."""
    if target == "detect":
        return [bytes([len(p)]) + p for p in (b"a.md", b"x.TXT", b"p.html", b"", b"noext")]
    if target == "recursive":
        return [
            struct.pack("<HHBBH", size, size // 5, flags, count, rng.getrandbits(16))
            for size, flags, count in ((40, 0, 0), (100, 1, 4), (7, 2, 6), (300, 0x80, 3))
        ]
    if target == "markdown":
        return [bytes([f]) for f in (0, 1, 2, 3, 4, 8)]
    if target in ("chunk_chars", "chunk_tokens"):
        return [
            struct.pack("<BHHB", flags, size, size // 6, minimum)
            for flags, size, minimum in ((0, 50, 0), (1, 120, 0), (2, 30, 0x85), (3, 200, 0))
        ]
    return [b""]


def main() -> None:
    rng = random.Random(9)
    docs = documents()
    text_targets = ("detect", "recursive", "markdown", "html", "chunk_chars", "chunk_tokens",
                    "tokens", "cleaning", "notes")  # fmt: skip
    for target in text_targets:
        out = HERE / "corpus" / target
        out.mkdir(parents=True, exist_ok=True)
        prefixes = params(target, rng)
        for i, doc in enumerate(docs):
            prefix = prefixes[i % len(prefixes)]
            (out / f"seed-{i:04d}").write_bytes(prefix + doc)
    pooling = HERE / "corpus" / "pooling"
    pooling.mkdir(parents=True, exist_ok=True)
    for i in range(40):
        dim, kind = rng.randrange(17), i % 4
        head = bytes([dim, kind]) + bytes(rng.randrange(256) for _ in range(8))
        fmt = "<d" if kind == 1 else "<f"
        values = [rng.choice([0.0, 1.0, -2.5, 1e-30, 1e30, rng.gauss(0, 1)]) for _ in range(40)]
        (pooling / f"seed-{i:04d}").write_bytes(
            head + b"".join(struct.pack(fmt, v) for v in values)
        )
    transcode = HERE / "corpus" / "transcode"
    transcode.mkdir(parents=True, exist_ok=True)
    for i, doc in enumerate(docs[:40]):
        text = doc.decode("utf-8", "replace")[:300] + "\ud800\udc00\udfff"
        units = b"".join(ord(c).to_bytes(3, "little") for c in text)
        (transcode / f"seed-{i:04d}").write_bytes(units)
    print(f"seeds: {len(docs)} documents for each text target, in {HERE / 'corpus'}")


if __name__ == "__main__":
    main()
