"""Benchmark of the bulk pipeline (``fastnotebook ingest`` + ``embed``).

    python benches/bench_pipeline.py [--mb 20] [--sample-mb 0.25] [--out bench-results]

Three runs, each in its own process (so that each reports its own peak
memory) on its own on-disk embedded database:

1. the whole corpus (at least ``--mb`` MB: the shared corpus, or the one
   ``fastnotebook.bench.corpus`` builds, repeated with a variant line until
   large enough) with the zero-cost fake model (``fastnotebook-fake``, 384
   dimensions): the MB/s of everything that is not the model, database
   writes included;
2. the same corpus and fake model through the original's per-source path:
   for each source ``chunk_text``, then ``generate_embedding`` and one
   database write per chunk;
3. a sample (``--sample-mb``) with the real default model
   (``fastnotebook-onnx``): documents/s, MB/s, and where the wall time goes
   (model, database, and ours: reading, chunking, hashing, pooling).

The databases have the vector (HNSW) indexes and no full-text (BM25)
indexes; ``--full-text-mb`` adds a fourth run on a small sample with them,
to show what they cost. Results: a table on stdout, ``pipeline.json`` and
``pipeline.md`` in ``--out``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SUFFIX = {"html": ".html", "markdown": ".md", "plain": ".txt"}


def build_corpus(folder: Path, megabytes: float, corpus_dir: str | None) -> tuple[int, int]:
    """Write at least ``megabytes`` MB of documents into ``folder``: the
    corpus once, then copies with a first line that makes each text new."""
    from fastnotebook.bench import corpus

    docs = corpus.load(Path(corpus_dir)).documents if corpus_dir else corpus.default().documents
    folder.mkdir(parents=True)
    written = files = 0
    copy = 0
    while written < megabytes * 1e6:
        for i, doc in enumerate(docs):
            text = doc.text if copy == 0 else f"Copy {copy} of document {i}.\n\n{doc.text}"
            path = folder / f"c{copy}" / f"{i:05d}{SUFFIX[doc.kind]}"
            path.parent.mkdir(exist_ok=True)
            data = text.encode("utf-8", "surrogateescape")
            path.write_bytes(data)
            written += len(data)
            files += 1
            if written >= megabytes * 1e6:
                break
        copy += 1
    return files, written


def sample_corpus(source: Path, folder: Path, megabytes: float) -> None:
    """The first files of each kind under ``source`` until ``megabytes`` MB."""
    files = sorted(p for p in source.rglob("*") if p.is_file())
    by_kind: dict[str, list[Path]] = {}
    for path in files:
        by_kind.setdefault(path.suffix, []).append(path)
    folder.mkdir(parents=True)
    size = 0.0
    while size < megabytes * 1e6 and any(by_kind.values()):
        for paths in by_kind.values():
            if paths and size < megabytes * 1e6:
                path = paths.pop(0)
                (folder / path.name).write_bytes(path.read_bytes())
                size += path.stat().st_size


# --- the runs, each in a child process --------------------------------------


def _quiet_logs() -> None:
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _open(data_dir: Path, full_text: bool) -> Any:
    from fastnotebook.app.database import DatabaseSettings, open_database, set_database

    settings = DatabaseSettings(DatabaseSettings.embedded_url(data_dir), full_text_search=full_text)
    db = await open_database(settings)
    set_database(db)
    return db


async def run_pipeline(corpus: Path, data_dir: Path, full_text: bool) -> dict[str, Any]:
    from fastnotebook.app.pipeline import ingest
    from fastnotebook.app.pipeline.stages import embed

    db = await _open(data_dir, full_text)
    ingested = await ingest([corpus], db)
    report = await embed(None, db)
    await db.close()
    counts = report.counts["source"]
    return {
        "documents": counts.embedded,
        "chunks": counts.chunks,
        "bytes": counts.bytes,
        "ingest_seconds": ingested.seconds,
        "ingest_stages": dict(ingested.clock.seconds),
        "embed_seconds": report.seconds,
        "embed_stages": dict(report.clock.seconds),
        "model": report.model,
    }


async def run_original(corpus: Path, data_dir: Path) -> dict[str, Any]:
    """Open Notebook's way, record by record: chunk_text, then per chunk
    generate_embedding and one CREATE (which returns the row)."""
    from fastnotebook.app.database import ensure_record_id, ensure_vector_indexes, repo_create
    from fastnotebook.app.pipeline import ingest
    from fastnotebook.chunking import chunk_text
    from fastnotebook.embedding import generate_embedding

    db = await _open(data_dir, False)
    await ingest([corpus], db)
    sources = await db.query("SELECT id, asset.file_path AS path FROM source;")
    start = time.perf_counter()
    chunks = size = 0
    stages = {"load": 0.0, "chunk": 0.0, "model": 0.0, "write": 0.0}
    for source in sources:
        t0 = time.perf_counter()
        [text] = await db.query("SELECT VALUE full_text FROM $id;", {"id": source["id"]})
        t1 = time.perf_counter()
        pieces = chunk_text(text, file_path=source["path"])
        t2 = time.perf_counter()
        stages["load"] += t1 - t0
        stages["chunk"] += t2 - t1
        for order, piece in enumerate(pieces):
            t3 = time.perf_counter()
            vector = await generate_embedding(piece)
            t4 = time.perf_counter()
            if chunks == 0:
                await ensure_vector_indexes(len(vector), db)
            await repo_create(
                "source_embedding",
                {
                    "source": ensure_record_id(source["id"]),
                    "order": order,
                    "content": piece,
                    "embedding": vector,
                },
            )
            stages["model"] += t4 - t3
            stages["write"] += time.perf_counter() - t4
            chunks += 1
        size += len(text.encode("utf-8"))
    seconds = time.perf_counter() - start
    await db.close()
    return {
        "documents": len(sources),
        "chunks": chunks,
        "bytes": size,
        "embed_seconds": seconds,
        "embed_stages": stages,
    }


def child(args: argparse.Namespace) -> None:
    _quiet_logs()
    from fastnotebook.ai import model_manager
    from fastnotebook.app.pipeline import fake_model

    if args.model == "fake":
        model_manager.configure_embedding_model(fake_model.FAKE_PROVIDER, config={"dimension": 384})
    corpus, data_dir = Path(args.corpus), Path(args.data_dir)
    if args.run == "original":
        result = asyncio.run(run_original(corpus, data_dir))
    else:
        result = asyncio.run(run_pipeline(corpus, data_dir, args.full_text))
    result["peak_mb"] = _peak_mb()
    print(json.dumps(result))


def spawn(run: str, model: str, corpus: Path, data_dir: Path, full_text: bool = False) -> Any:
    command = [sys.executable, __file__, "--child", run, "--model", model]
    command += ["--corpus", str(corpus), "--data-dir", str(data_dir)]
    if full_text:
        command.append("--full-text")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SURREAL_", "FASTNOTEBOOK_"))}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{run} run failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- report -------------------------------------------------------------------

MODEL, DATABASE = ("model",), ("plan", "load", "write", "index")
OURS = ("read", "parse", "hash", "chunk", "pool", "prepare")


def shares(result: dict[str, Any]) -> str:
    wall = result["embed_seconds"]
    stages = result["embed_stages"]

    def busy(names: tuple[str, ...]) -> float:
        return sum(stages.get(n, 0.0) for n in names)

    return (
        f"model {100 * busy(MODEL) / wall:.1f}%, database {100 * busy(DATABASE) / wall:.1f}%, "
        f"ours {100 * busy(OURS) / wall:.2f}%"
    )


def row(name: str, result: dict[str, Any]) -> list[str]:
    mb = result["bytes"] / 1e6
    wall = result["embed_seconds"]
    return [
        name,
        f"{result['documents']:,}",
        f"{result['chunks']:,}",
        f"{mb:.1f}",
        f"{wall:.1f}",
        f"{result['documents'] / wall:.2f}",
        f"{mb / wall:.3f}",
        f"{result['peak_mb']:.0f}",
        shares(result),
    ]


def markdown(rows: list[list[str]]) -> str:
    headers = ["run", "documents", "chunks", "MB", "embed s", "docs/s", "MB/s", "peak MB"]
    headers.append("busy time (share of wall; the parts overlap)")
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=20.0, help="corpus size (default 20 MB)")
    parser.add_argument("--sample-mb", type=float, default=0.25, help="real-model sample")
    parser.add_argument("--full-text-mb", type=float, default=0.0, help="BM25 run's sample")
    parser.add_argument("--corpus", help="folder of documents (default: shared or built)")
    parser.add_argument("--out", default="bench-results")
    parser.add_argument("--skip-original", action="store_true", help="skip run 2")
    parser.add_argument("--child", choices=["pipeline", "original"], dest="run")
    parser.add_argument("--model", choices=["fake", "default"], default="fake")
    parser.add_argument("--data-dir")
    parser.add_argument("--full-text", action="store_true")
    args = parser.parse_args()
    if args.run:
        child(args)
        return
    with tempfile.TemporaryDirectory(prefix="fastnotebook-bench-") as tmp:
        root = Path(tmp)
        files, size = build_corpus(root / "corpus", args.mb, args.corpus)
        print(f"corpus: {files:,} files, {size / 1e6:.1f} MB", flush=True)
        results: dict[str, Any] = {}
        runs = [("pipeline, fake model", "pipeline", "fake", root / "corpus", False)]
        if not args.skip_original:
            runs.append(("original path, fake model", "original", "fake", root / "corpus", False))
        sample_corpus(root / "corpus" / "c0", root / "sample", args.sample_mb)
        runs.append(
            ("pipeline, default model (sample)", "pipeline", "default", root / "sample", False)
        )
        if args.full_text_mb:
            sample_corpus(root / "corpus" / "c0", root / "ft-sample", args.full_text_mb)
            runs.append(
                ("pipeline, fake model, BM25 on", "pipeline", "fake", root / "ft-sample", True)
            )
        for i, (name, run, model, corpus, full_text) in enumerate(runs):
            print(f"running: {name} ...", flush=True)
            results[name] = spawn(run, model, corpus, root / f"db{i}", full_text)
            print(f"  {shares(results[name])}", flush=True)
    rows = [row(name, result) for name, result in results.items()]
    text = markdown(rows)
    print("\n" + text)
    first = results["pipeline, fake model"]
    ingest_mb_s = first["bytes"] / 1e6 / first["ingest_seconds"]
    print(f"\ningest (read, front matter, write sources): {ingest_mb_s:.1f} MB/s")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "pipeline.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    (out / "pipeline.md").write_text(text + "\n", encoding="utf-8")
    print(f"wrote {out / 'pipeline.json'}, {out / 'pipeline.md'}")


if __name__ == "__main__":
    main()
