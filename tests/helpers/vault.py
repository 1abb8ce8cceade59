"""A generated mini-vault with every construct of a Markdown note vault.

``write_mini_vault(root)`` writes a vault folder and returns what a parser
must find in it: the broken files, the explicit ids, the skipped folders.
``random_body(rng, blocks)`` composes a random note body of paragraphs, list
groups, fenced code blocks (some long), tables, quotes, callouts, headings
and links, for property tests. Everything here is written for the tests
(no real vault's text).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["MiniVault", "random_body", "write_mini_vault"]

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
_UNICODE = ["Zürich", "Ærø", "Łódź", "naïve", "façade", "東京", "مرحبا", "Ελλάδα", "🙂"]


def _sentence(rng: random.Random, words: int = 12) -> str:
    picked = [rng.choice(_WORDS) for _ in range(words)]
    if rng.random() < 0.2:
        picked[rng.randrange(len(picked))] = rng.choice(_UNICODE)
    text = " ".join(picked)
    return text[0].upper() + text[1:] + "."


def _paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(_sentence(rng, rng.randint(6, 18)) for _ in range(sentences))


def _code(rng: random.Random, lines: int, fence: str = "```") -> str:
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
    """A random body of ``blocks`` blocks separated by blank lines."""
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
            parts.append(
                _code(rng, rng.choice((3, 8, 20, 150)), rng.choice(("```", "~~~", "````")))
            )
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


@dataclass
class MiniVault:
    root: Path
    files: dict[str, bytes] = field(default_factory=dict)  # every *.md written, relative path
    broken: set[str] = field(default_factory=set)  # files that must be NoteErrors
    skipped: set[str] = field(default_factory=set)  # files in dot-folders (never read)
    explicit_ids: dict[str, str] = field(default_factory=dict)  # path -> front matter id

    @property
    def good(self) -> set[str]:
        return set(self.files) - self.broken - self.skipped


def write_mini_vault(root: Path, *, seed: int = 0, extra_notes: int = 6) -> MiniVault:
    """Write the mini-vault under ``root`` (created) and describe it."""
    rng = random.Random(seed)
    vault = MiniVault(root=root)

    def put(rel: str, text: str | bytes, *, crlf: bool = False) -> None:
        data = text if isinstance(text, bytes) else text.encode()
        if crlf:
            data = data.replace(b"\n", b"\r\n")
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        vault.files[rel] = data

    put(
        "Index.md",
        "---\n"
        "title: Vault index\n"
        "type: concept\n"
        "tags: [start, 'meta/index']\n"
        "aliases:\n  - Home\n  - Start page\n"
        "created: 2024-01-02\n"
        "updated: 2024-03-04T05:06:07\n"
        "rating: 4.5\n"
        "nested: {a: 1, b: [x, y]}\n"
        "---\n"
        "# Index\n\n"
        "Links of every kind: [[Concept A]], [[Concept A|shown text]], [[Concept A#Section two]],\n"
        "[[Concept A^block1]], [[Concept A#^block1]], ![[Concept A]] and a Markdown link to\n"
        "[the sub note](folder/Sub%20Note.md) and [another](<folder/Sub Note.md#Part>).\n"
        "A missing one: [[Missing Note]]; an attachment ![[diagram.png]] is not a note;\n"
        "neither is [a site](https://example.com/page.md) nor [anchor](#local).\n\n"
        "Code is never a link: `[[Not In Span]]` and ``[[Nor `this` one]]``.\n\n"
        "```markdown\n# Heading inside code\n[[Not In Fence]] and [x](not-in-fence.md)\n```\n\n"
        + _paragraph(rng, 6)
        + "\n\n## Possible connections\n\n- [[Suggested Only]]\n- [[Concept A]]\n\n"
        "## After suggestions\n\nBack to normal: [[Déjà vu \u2013 ünïcode]].\n",
    )
    vault.explicit_ids["Concept A.md"] = "concept-a-id"
    put(
        "Concept A.md",
        "---\n"
        "id: concept-a-id\n"
        "title: Concept A\n"
        "aliases: [Alpha, 'The First']\n"
        "type: concept\n"
        "tags: '#one, two'\n"
        "---\n\n"
        "Intro paragraph that links [[Index]] and [[Home]] (an alias). ^block1\n\n"
        "## Section one\n\n"
        + _paragraph(rng, 10)
        + "\n\n"
        + _quote(rng, 4, callout=True)
        + "\n\n"
        + _table(rng, 12)
        + "\n\n## Section two\n\n"
        + _code(rng, 260)
        + "\n\n"
        + _list(rng, 30)
        + "\n\n### Deeper\n\n"
        + _paragraph(rng, 4)
        + " Link to [[beta note]] by id.\n\n"
        "## Mögliche Verbindungen\n\n- [[Index]]\n- [[Nowhere To Be Found]]\n",
    )
    put(
        "folder/Sub Note.md",
        "---\ntitle: Sub note\ntags: a, b\ncreated: 2024-05-06\n---\n"
        "# Sub Note  \n\n"
        "Trailing spaces here   \n\n\n\n"
        "Links by alias [[alpha]], by id [[CONCEPT-A-ID]], by path [[folder/Sub Note]],\n"
        "and a relative Markdown link [up](../Index.md).\n\n"
        "## Part\n\n" + _list(rng, 8, ordered=True) + "\n",
        crlf=True,
    )
    put(
        "folder/nested/deep/Déjà vu \u2013 ünïcode.md",
        "# Déjà vu\n\nUnicode path, no front matter. Back to [[Index]] and [[Sub Note]].\n\n"
        "> A two-line quote\n> that is its own chunk.\n\n"
        "| a | b |\n|---|---|\n| 1 | [[Concept A]] |\n",
    )
    vault.explicit_ids["beta.md"] = "beta note"
    put("beta.md", "---\nid: beta note\ntype: task\n---\n" + random_body(rng, 25) + "\n")
    put(
        "journal/2024-01-01.md",
        "---\ntype: journal\ncreated: 2024-01-01\n---\n"
        + "\n\n".join(_list(rng, rng.randint(3, 25)) for _ in range(6))
        + "\n",
    )
    put("Empty.md", "")
    put("Only front matter.md", "---\ntitle: Just metadata\n---\n")
    put("Thematic break.md", "---\nNot front matter: this rule is never closed.\n")
    put("Blank lines.md", "Para one.\t \r\n\r\n\r\n\r\nPara two.  \r\n")
    # Broken files.
    put("broken/Bad yaml.md", "---\ntitle: [unclosed\ntags: x\n---\nBody of a broken note.\n")
    put("broken/List front matter.md", "---\n- a\n- b\n---\nBody.\n")
    put("broken/Not utf8.md", b"caf\xe9 \xff\xfe latin-1 bytes\n")
    put("broken/Bad date.md", "---\ncreated: 2024-13-45\n---\nBody.\n")
    put("broken/Duplicate id.md", "---\nid: concept-a-id\n---\nClaims a taken id.\n")
    vault.broken |= {
        "broken/Bad yaml.md",
        "broken/List front matter.md",
        "broken/Not utf8.md",
        "broken/Duplicate id.md",
        "broken/Bad date.md",  # YAML reads it as a date that does not exist
    }
    # Dot-folders are never read.
    put(".obsidian/workspace.md", "[[Index]]\n")
    put(".trash/Deleted.md", "[[Index]]\n")
    vault.skipped |= {".obsidian/workspace.md", ".trash/Deleted.md"}
    (root / ".obsidian" / "app.json").write_text("{}")
    names = ["Index", "Concept A", "Alpha", "beta note", "Missing Note", "Sub Note"]
    for k in range(extra_notes):
        kind = ("concept", "task", "journal", None)[k % 4]
        front = f"---\ntype: {kind}\n---\n" if kind else ""
        put(
            f"generated/g{k:02d}.md",
            front + random_body(rng, 20 + 10 * (k % 3), targets=tuple(names)),
            crlf=k % 5 == 4,
        )
    return vault
