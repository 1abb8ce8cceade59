"""A small corpus for the pipeline tests, and what the pipeline must store for it."""

from __future__ import annotations

from pathlib import Path

from fastnotebook.app.database import Database
from fastnotebook.app.pipeline.documents import read_document
from fastnotebook.chunking import chunk_texts


def paragraph(topic: str, n: int) -> str:
    return (
        f"Paragraph {n} about {topic}. "
        + " ".join(f"{topic} detail {n}.{i} explains one more point." for i in range(12))
        + "\n\n"
    )


def write_corpus(folder: Path, documents: int = 6, paragraphs: int = 8) -> list[Path]:
    """Markdown (with front matter), HTML and text files of several chunks each."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for d in range(documents):
        body = "".join(paragraph(f"topic{d}", n) for n in range(paragraphs))
        if d % 3 == 0:
            path = folder / f"doc{d}.md"
            path.write_text(f"---\ntitle: Document {d}\ntags: [a, b]\n---\n# Heading {d}\n\n{body}")
        elif d % 3 == 1:
            path = folder / f"doc{d}.html"
            path.write_text(
                f"<html><head><title>Page {d}</title></head><body><h1>H</h1><p>{body}</p>"
            )
        else:
            path = folder / f"doc{d}.txt"
            path.write_text(body)
        paths.append(path)
    (folder / "image.png").write_bytes(b"\x89PNG")
    return paths


def expected_chunks(paths: list[Path]) -> dict[str, list[str]]:
    """What the pipeline must store for each file: its chunks in order."""
    docs = [read_document(p.resolve()) for p in paths]
    chunks = chunk_texts([d.text for d in docs], file_paths=[str(d.path) for d in docs])
    return {str(d.path): c for d, c in zip(docs, chunks, strict=True)}


async def stored_chunks(db: Database) -> dict[str, list[str]]:
    rows = await db.query(
        "SELECT source.asset.file_path AS path, order, content FROM source_embedding "
        "ORDER BY path, order;"
    )
    found: dict[str, list[tuple[int, str]]] = {}
    for row in rows:
        found.setdefault(row["path"], []).append((row["order"], row["content"]))
    for path, items in found.items():
        assert [o for o, _ in items] == list(range(len(items))), f"gaps or duplicates in {path}"
    return {path: [c for _, c in items] for path, items in found.items()}
