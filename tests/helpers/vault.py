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

from fastnotebook.bench.notes import _code, _list, _paragraph, _quote, _table, random_body

__all__ = ["MiniVault", "forbidden_cuts", "random_body", "write_mini_vault"]


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
        + _code(260)
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
    # Not text (a file that is only not UTF-8 is decoded: tests/app/test_cli_ingest_files.py).
    put("broken/Not text.md", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)))
    put("broken/Bad date.md", "---\ncreated: 2024-13-45\n---\nBody.\n")
    put("broken/Duplicate id.md", "---\nid: concept-a-id\n---\nClaims a taken id.\n")
    vault.broken |= {
        "broken/Bad yaml.md",
        "broken/List front matter.md",
        "broken/Not text.md",
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


def forbidden_cuts(body: str) -> set[int]:
    """Offsets where no chunk may start: inside a fenced code block (after
    its opening line, up to its closing line) or between two lines of a table
    (a header row with a delimiter row under it and the rows after). An
    independent oracle for the tests, written from CommonMark's fence rules."""
    lines = body.splitlines(keepends=True)
    starts = []
    pos = 0
    for line in lines:
        starts.append(pos)
        pos += len(line)
    forbidden: set[int] = set()
    fence: tuple[str, int] | None = None
    table = False
    for i, line in enumerate(lines):
        text = line.rstrip("\r\n")
        stripped = text.lstrip(" \t")
        while stripped.startswith(">"):
            stripped = stripped[1:].lstrip(" \t")
        run = len(stripped) - len(stripped.lstrip(stripped[:1])) if stripped[:1] in "`~" else 0
        if fence is not None:
            forbidden.add(starts[i])
            if run >= fence[1] and stripped[0] == fence[0] and not stripped[run:].strip():
                fence = None
            continue
        if run >= 3 and not (stripped[0] == "`" and "`" in stripped[run:]):
            fence = (stripped[0], run)
            table = False
            continue
        is_row = "|" in text and bool(text.strip())
        if table and is_row:
            forbidden.add(starts[i])
            continue
        table = False
        if (
            is_row
            and i + 1 < len(lines)
            and "|" in lines[i + 1]
            and set(lines[i + 1].strip().replace("|", "").replace(":", "").replace(" ", ""))
            == {"-"}
        ):
            table = True
    return forbidden
