"""Note vaults (``fastnotebook.notes.read_vault``): parse + chunk + edges of a
whole vault without any embedding model, single-threaded, in MB/s of the
vault's Markdown files.

Two vaults: one generated here (deterministic: prose, list groups, fenced
code, tables, callouts, headings, wikilinks, front matter) and, when the
environment variable ``FASTNOTEBOOK_TEST_VAULT`` names a folder, that one.
"""

from __future__ import annotations

import os
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "NOTES_HEADER",
    "VAULT_ENV",
    "NoteVaultResult",
    "bench_notes",
    "notes_rows",
    "random_body",
    "write_generated_vault",
]

VAULT_ENV = "FASTNOTEBOOK_TEST_VAULT"

NOTES_HEADER = ["vault", "notes", "MB", "chunks", "edges", "errors", "MB/s (min-max)"]

_WORDS = [
    "note",
    "graph",
    "link",
    "chunk",
    "vault",
    "token",
    "block",
    "table",
    "fence",
    "list",
    "quote",
    "callout",
    "heading",
    "section",
    "alias",
    "title",
    "idea",
    "thought",
    "project",
    "task",
    "journal",
    "memory",
    "index",
    "search",
    "vector",
    "review",
    "draft",
    "garden",
    "atlas",
    "river",
    "stone",
    "cloud",
    "paper",
    "window",
    "lamp",
    "bridge",
    "signal",
]
_UNICODE = ("Zürich", "Ærø", "Łódź", "naïve", "façade", "東京", "مرحبا", "Ελλάδα", "🙂")


def _sentence(rng: random.Random, words: int = 12) -> str:
    picked = [rng.choice(_WORDS) for _ in range(words)]
    if rng.random() < 0.2:
        picked[rng.randrange(len(picked))] = rng.choice(_UNICODE)
    text = " ".join(picked)
    return text[0].upper() + text[1:] + "."


def _paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(_sentence(rng, rng.randint(6, 18)) for _ in range(sentences))


def _code(lines: int, fence: str = "```") -> str:
    body = []
    for k in range(lines):
        body.append(f"    value_{k} = compute({k}, '[[Not A Link {k}]]')  # [x](fake.md)")
        if k % 7 == 3:
            body.append("")
        if k % 11 == 5:
            body.append("## not a heading inside code")
    return f"{fence}python\n" + "\n".join(body) + f"\n{fence}"


def _table(rng: random.Random, rows: int) -> str:
    out = ["| name | value | link |", "| --- | ---: | :---: |"]
    for k in range(rows):
        out.append(
            f"| {rng.choice(_WORDS)} {k} | {rng.randint(0, 999)} | [[Target {k % 3}\\|t{k}]] |"
        )
    return "\n".join(out)


def _list(rng: random.Random, items: int, ordered: bool = False) -> str:
    out = []
    for k in range(items):
        marker = f"{k + 1}." if ordered else rng.choice("-*+")
        out.append(f"{marker} {_sentence(rng, rng.randint(4, 14))}")
        if rng.random() < 0.3:
            out.append(f"    - nested {_sentence(rng, 5)}")
            if rng.random() < 0.3:
                out.append(f"        - deeper {_sentence(rng, 4)}")
    return "\n".join(out)


def _quote(rng: random.Random, lines: int, callout: bool) -> str:
    out = ["> [!note] A callout title"] if callout else []
    out += [f"> {_sentence(rng, 8)}" for _ in range(lines)]
    return "\n".join(out)


def random_body(rng: random.Random, blocks: int, *, targets: tuple[str, ...] = ()) -> str:
    """A random note body of ``blocks`` blocks: headings, paragraphs with links,
    list groups, fenced code blocks (some long), tables (some long), quotes
    and callouts, thematic breaks, and the odd very long line."""
    names = targets or ("Alpha", "Beta", "Gamma")
    parts: list[str] = []
    if rng.random() < 0.7:
        parts.append(f"# {rng.choice(_WORDS).title()} title")
    for _ in range(blocks):
        r = rng.random()
        if r < 0.12:
            parts.append(f"{'#' * rng.choice((2, 2, 3, 4))} {_sentence(rng, 3)[:-1]}")
        elif r < 0.42:
            para = _paragraph(rng, rng.randint(1, 8))
            if rng.random() < 0.5:
                t = rng.choice(names)
                para += rng.choice(
                    (f" See [[{t}]].", f" Also [[{t}|this]].", f" `[[{t}]]` is code.", f" ![[{t}]]")
                )
            parts.append(para)
        elif r < 0.58:
            parts.append(_list(rng, rng.randint(2, 40), ordered=rng.random() < 0.3))
        elif r < 0.70:
            parts.append(_code(rng.choice((3, 8, 20, 150)), rng.choice(("```", "~~~", "````"))))
        elif r < 0.80:
            parts.append(_table(rng, rng.choice((2, 5, 30, 120))))
        elif r < 0.90:
            parts.append(_quote(rng, rng.randint(1, 6), callout=rng.random() < 0.5))
        elif r < 0.95:
            parts.append("---")
        else:
            parts.append(_sentence(rng, 40 * rng.randint(1, 30)))  # one very long line
    sep = rng.choice(("\n\n", "\n\n", "\n\n\n", "\n"))
    return sep.join(parts) + rng.choice(("\n", "", "\n\n"))


def write_generated_vault(root: Path, notes: int = 300, seed: int = 0) -> int:
    """A vault of ``notes`` linked notes under ``root``; returns its size in bytes."""
    rng = random.Random(seed)
    names = [f"Note {k:04d}" for k in range(notes)]
    total = 0
    for k, name in enumerate(names):
        kind = ("concept", "task", "journal", "project", None)[k % 5]
        front = (
            f"---\ntitle: {name}\ntype: {kind}\ntags: [bench, t{k % 7}]\n"
            f"aliases: [N{k}]\ncreated: 2024-01-{1 + k % 28:02d}\n---\n"
            if kind
            else ""
        )
        targets = (*rng.sample(names, 4), "Missing target")
        body = random_body(rng, rng.randint(8, 40), targets=targets)
        data = (front + body).encode()
        folder = root / f"area{k % 6}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.md").write_bytes(data)
        total += len(data)
    return total


@dataclass
class NoteVaultResult:
    vault: str
    notes: int
    megabytes: float
    chunks: int
    edges: int
    errors: int
    mbs: float
    spread: str


def _vault_bytes(root: Path) -> int:
    from fastnotebook.notes import vault_files

    return sum((root / rel).stat().st_size for rel in vault_files(root))


def _measure(name: str, root: Path, repeats: int) -> NoteVaultResult:
    import time

    from fastnotebook.notes import read_vault

    size = _vault_bytes(root)
    parsed = read_vault(root)  # warm-up: vocabulary, page cache
    runs = []
    for _ in range(max(repeats, 1)):
        started = time.perf_counter()
        read_vault(root)
        runs.append(size / max(time.perf_counter() - started, 1e-9) / 1e6)
    runs.sort()
    return NoteVaultResult(
        vault=name,
        notes=len(parsed.notes),
        megabytes=size / 1e6,
        chunks=sum(len(c) for c in parsed.chunks.values()),
        edges=len(parsed.edges),
        errors=len(parsed.errors),
        mbs=runs[len(runs) // 2],
        spread=f"{runs[0]:.1f}-{runs[-1]:.1f}",
    )


def bench_notes(repeats: int, *, generated_notes: int = 300) -> list[NoteVaultResult]:
    """``read_vault`` (parse + chunk + link resolution + edges) on the generated
    vault and on ``FASTNOTEBOOK_TEST_VAULT`` when set."""
    results = []
    with tempfile.TemporaryDirectory(prefix="fastnotebook-vault-") as tmp:
        write_generated_vault(Path(tmp), generated_notes)
        results.append(_measure(f"generated ({generated_notes} notes)", Path(tmp), repeats))
    real = os.environ.get(VAULT_ENV)
    if real and Path(real).is_dir():
        results.append(_measure(f"{VAULT_ENV} ({Path(real).name})", Path(real), repeats))
    return results


def notes_rows(results: list[NoteVaultResult]) -> list[list[str]]:
    return [
        [
            r.vault,
            str(r.notes),
            f"{r.megabytes:.2f}",
            str(r.chunks),
            str(r.edges),
            str(r.errors),
            f"{r.mbs:.1f} ({r.spread})",
        ]
        for r in results
    ]
