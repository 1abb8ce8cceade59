"""Benchmark of ``fastnotebook notes import`` (a whole vault, first import).

    python benches/bench_notes_import.py [--notes 200] [--vault DIR] [--out bench-results]

The vault is ``--vault`` (a real one, say) or a generated one of ``--notes``
notes (front matter, headings, paragraphs, lists, code blocks, tables and
wikilinks between the notes, some to missing notes). The import runs in its
own process on its own on-disk embedded database with the fast static test
model (``fastnotebook-static``, 64 dimensions; ``--model fake``: the
zero-cost hash vectors, 384 dimensions), and the summary splits its wall
time into parse + chunk + edges (ours), the model and the database
(planning and the write transactions).

Results: a table on stdout and ``notes_import.md`` in ``--out``; the row is
also added to ``pipeline.json`` there (written by ``bench_pipeline.py``
first), which ``fastnotebook bench --docs`` renders into docs/performance.md.
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

from fastnotebook.bench.notes import write_generated_vault

ROWS = {"static": "notes import, static model", "fake": "notes import, fake model"}


def _peak_mb() -> float:
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024


def child(vault: Path, data_dir: Path, model: str) -> None:
    from loguru import logger

    logger.remove()
    from fastnotebook.ai import model_manager
    from fastnotebook.app.database import DatabaseSettings, open_database
    from fastnotebook.app.pipeline import fake_model
    from fastnotebook.app.vault.store import import_vault

    if model == "fake":
        model_manager.configure_embedding_model(fake_model.FAKE_PROVIDER, config={"dimension": 384})
    else:
        model_manager.configure_embedding_model("fastnotebook-static")

    async def run() -> dict[str, Any]:
        settings = DatabaseSettings(DatabaseSettings.embedded_url(data_dir), full_text_search=False)
        async with await open_database(settings) as db:
            started = time.perf_counter()
            report = await import_vault(vault, db)
            wall = time.perf_counter() - started
        return {
            "documents": report.notes,
            "chunks": report.chunks_written,
            "edges": report.edges_written,
            "bytes": report.bytes,
            "embed_seconds": wall,
            "embed_stages": dict(report.clock.seconds),
            "errors": len(report.errors),
        }

    result = asyncio.run(run())
    result["peak_mb"] = _peak_mb()
    print(json.dumps(result))
    sys.stdout.flush()
    os._exit(0)  # the database SDK may abort a normal interpreter shutdown


def shares(result: dict[str, Any]) -> str:
    wall, stages = result["embed_seconds"], result["embed_stages"]

    def busy(*names: str) -> float:
        return 100 * sum(float(stages.get(n, 0.0)) for n in names) / float(wall)

    return (
        f"model {busy('model'):.1f}%, database {busy('plan', 'write'):.1f}%, "
        f"parse + chunk + edges {busy('parse'):.1f}%"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--notes", type=int, default=50, help="generated notes (default 50, about 1.3 MB)"
    )
    parser.add_argument("--vault", help="a vault folder to import instead of a generated one")
    parser.add_argument("--model", choices=["static", "fake"], default="static")
    parser.add_argument("--out", default="bench-results")
    parser.add_argument("--child", nargs=2, metavar=("VAULT", "DATA_DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]), args.model)
        return
    with tempfile.TemporaryDirectory(prefix="fastnotebook-bench-notes-") as tmp:
        root = Path(tmp)
        if args.vault:
            vault, label = Path(args.vault), f"{ROWS[args.model]} ({Path(args.vault).name})"
        else:
            vault, label = root / "vault", ROWS[args.model]
            size = write_generated_vault(vault, args.notes)
            print(f"vault: {args.notes} generated notes, {size / 1e6:.2f} MB", flush=True)
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("SURREAL_", "FASTNOTEBOOK_"))
        }
        done = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                str(vault),
                str(root / "db"),
                "--model",
                args.model,
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"the import failed:\n{done.stderr}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
    mb = result["bytes"] / 1e6
    wall = result["embed_seconds"]
    header = ["run", "notes", "chunks", "edges", "MB", "import s", "MB/s", "peak MB", "busy time"]
    row = [
        label,
        f"{result['documents']:,}",
        f"{result['chunks']:,}",
        f"{result['edges']:,}",
        f"{mb:.2f}",
        f"{wall:.2f}",
        f"{mb / wall:.3f}",
        f"{result['peak_mb']:.0f}",
        shares(result),
    ]
    text = "\n".join(
        [
            "| " + " | ".join(header) + " |",
            "|" + "---|" * len(header),
            "| " + " | ".join(row) + " |",
        ]
    )
    print("\n" + text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "notes_import.md").write_text(text + "\n", encoding="utf-8")
    pipeline_file = out / "pipeline.json"
    pipeline = (
        json.loads(pipeline_file.read_text(encoding="utf-8")) if pipeline_file.is_file() else {}
    )
    pipeline[label] = result
    pipeline_file.write_text(json.dumps(pipeline, indent=2), encoding="utf-8")
    print(f"wrote {out / 'notes_import.md'}; added the row to {pipeline_file}")


if __name__ == "__main__":
    main()
