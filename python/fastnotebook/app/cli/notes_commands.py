"""``fastnotebook notes ...``: a Markdown vault in the database.

  notes import VAULT       parse, chunk, embed and store a vault (incremental)
  notes export OUT_DIR     write the stored vault back, byte for byte
  notes audit              counts and invariants of the stored vault (exit 1 if violated)
  notes search QUERY       vector search over the vault's chunks
  notes qdrant-export DIR  chunk, note and edge points as JSON Lines for Qdrant

Every command but ``import`` only reads and fails, naming the folder, where
there is no database (docs/notes.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from fastnotebook.app.cli.database import run_db
from fastnotebook.app.cli.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    CliError,
    positive_int,
    require_model_packages,
    text_encoding,
)
from fastnotebook.app.cli.options import database_options, use_data_dir
from fastnotebook.app.database import Database
from fastnotebook.app.pipeline.progress import format_rate, table

__all__ = ["add_command"]


def _sizes(raw: str) -> tuple[str, tuple[int, int, int, int]]:
    """``TYPE=TARGET_MIN,TARGET_MAX,HARD_MAX,MIN`` (tokens)."""
    name, sep, numbers = raw.partition("=")
    try:
        values = tuple(int(v) for v in numbers.split(","))
    except ValueError:
        values = ()
    if not sep or not name.strip() or len(values) != 4:
        raise argparse.ArgumentTypeError(
            f"must be TYPE=TARGET_MIN,TARGET_MAX,HARD_MAX,MIN (tokens), got {raw!r}"
        )
    return name.strip().lower(), (values[0], values[1], values[2], values[3])


def _config(args: argparse.Namespace) -> Any:
    from fastnotebook.notes import NotesConfig

    defaults = NotesConfig()
    sizes = dict(defaults.sizes)
    sizes.update(dict(args.sizes or []))
    try:
        return NotesConfig(
            sizes=sizes,
            overlap=defaults.overlap if args.overlap is None else args.overlap,
            hash_mode=args.hash_mode,
            normalisation=args.normalisation,
        )
    except ValueError as e:
        raise CliError(str(e), code=2) from e


def _check_vault(path: str) -> None:
    folder = Path(path).expanduser()
    if not folder.exists():
        raise CliError(f"no vault at {path}: the folder does not exist")
    if not folder.is_dir():
        raise CliError(f"{path} is a file: give the vault's folder")
    from fastnotebook.notes import vault_files

    if not vault_files(folder):
        # Checked before the database is opened: nothing is created.
        raise CliError(f"no Markdown notes (*.md) in {path}")


def _import_summary(report: Any) -> str:
    rows = [
        ["notes", report.notes],
        ["added", report.added],
        ["changed", report.changed],
        ["rewritten", report.rewritten],
        ["repaired", report.repaired],
        ["unchanged", report.unchanged],
        ["removed", report.removed],
        ["chunks written", report.chunks_written],
        ["edges written", report.edges_written],
        ["vectors embedded", report.embedded],
        ["vectors reused", report.reused],
        ["chunks without vector", report.missing_vectors],
        ["files failed", len(report.errors)],
    ]
    lines = [table(["", "count"], rows)]
    lines.append(
        f"{report.bytes / 1e6:.2f} MB in {report.seconds:.2f} s "
        f"({format_rate(report.bytes, report.seconds)}); {report.clock.breakdown(report.seconds)}"
    )
    if report.warnings:
        lines.append(
            f"not UTF-8, decoded ({len(report.warnings)}; check their text; "
            "--encoding names the encoding):"
        )
        lines += [f"  {w.path}: {w.message}" for w in report.warnings]
    if report.errors:
        lines.append(f"failed ({len(report.errors)}), skipped, everything else imported:")
        lines += [f"  {e.path}: {e.message}" for e in report.errors]
    return "\n".join(lines)


def cmd_import(args: argparse.Namespace) -> int:
    from fastnotebook.app.vault.store import import_vault

    _check_vault(args.vault)
    config = _config(args)
    if not args.no_embed:
        require_model_packages()

    async def work(db: Database) -> int:
        report = await import_vault(
            args.vault,
            db,
            config=config,
            embed=not args.no_embed,
            progress=not args.quiet and not args.json,
            replace=args.replace,
            rewrite=args.rewrite,
            write_notes=args.batch_notes,
            encoding=args.encoding,
        )
        if args.json:
            json.dump(report.as_dict(), sys.stdout, ensure_ascii=False, indent=2)
            print()
        elif not args.quiet:
            print(_import_summary(report))
        else:
            for error in report.errors:
                print(f"failed: {error.path}: {error.message}", file=sys.stderr)
        return EXIT_FAILED if report.errors else 0

    use_data_dir(args)
    try:
        return run_db(work)
    except KeyboardInterrupt:
        print(
            "\ninterrupted: each note is written whole; run `fastnotebook notes import` "
            "again to finish",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED


def cmd_export(args: argparse.Namespace) -> int:
    from fastnotebook.app.vault.export import export_vault

    out = Path(args.out_dir).expanduser()
    if out.exists() and not out.is_dir():
        raise CliError(f"{args.out_dir} is a file: give a folder to export into")

    async def work(db: Database) -> int:
        report = await export_vault(out, db, from_chunks=args.from_chunks)
        if report.mismatches:
            raise CliError(
                f"{len(report.mismatches)} notes do not rebuild from their chunks "
                f"({', '.join(report.mismatches[:3])}); run `fastnotebook notes audit`"
            )
        if not args.quiet:
            source = "chunks" if args.from_chunks else "stored text"
            print(f"wrote {report.files} files ({report.bytes} bytes, from the {source}) to {out}")
        return 0

    use_data_dir(args)
    return run_db(work, create=False)


def cmd_audit(args: argparse.Namespace) -> int:
    from fastnotebook.app.vault.audit import audit_vault

    async def work(db: Database) -> int:
        report = await audit_vault(db)
        if args.json:
            json.dump(report.as_dict(), sys.stdout, ensure_ascii=False, indent=2)
            print()
        elif not args.quiet:
            print(table(["", "count"], [[k, v] for k, v in report.counts.items()]))
            print()
            print(
                table(
                    ["invariant", "expected", "actual", ""],
                    [
                        [i.name, i.expected, i.actual, "ok" if i.ok else "VIOLATED"]
                        for i in report.invariants
                    ],
                )
            )
            for invariant in report.violated:
                if invariant.detail:
                    print(f"{invariant.name}: {invariant.detail}")
            if not report.ok:
                print(
                    "repair: `fastnotebook notes import VAULT --rewrite` rewrites every note "
                    "from its file (docs/notes.md)"
                )
        return 0 if report.ok else EXIT_FAILED

    use_data_dir(args)
    return run_db(work, create=False)


def cmd_search(args: argparse.Namespace) -> int:
    from fastnotebook.app.vault.search import search_notes

    if not args.query.strip():
        raise CliError("the query is empty: give the words to search for", code=2)
    require_model_packages()

    async def work(db: Database) -> int:
        hits = await search_notes(args.query, args.k, db, expand_links=args.expand_links)
        if args.json:
            json.dump([h.as_dict() for h in hits], sys.stdout, ensure_ascii=False, indent=2)
            print()
            return 0
        if not hits:
            print("no hits (is the vault imported with vectors? `fastnotebook notes audit`)")
        for rank, hit in enumerate(hits, 1):
            section = " > ".join(hit.section_path) or "(top)"
            print(f"{rank}. {hit.score:.3f}  {hit.title}  [{hit.path}]  {section}")
            print(
                f"   {hit.chunk_id}  prev {hit.neighbours['prev']}  next {hit.neighbours['next']}"
            )
            text = " ".join(hit.text.split())
            print(f"   {text[:200]}{'...' if len(text) > 200 else ''}")
            for linked in hit.linked:
                arrow = "->" if linked.direction == "out" else "<-"
                print(f"   {arrow} {linked.title} [{linked.path}]")
        return 0

    use_data_dir(args)
    return run_db(work, create=False)


def cmd_qdrant_export(args: argparse.Namespace) -> int:
    from fastnotebook.app.vault.qdrant import qdrant_export

    out = Path(args.out_dir).expanduser()
    if out.exists() and not out.is_dir():
        raise CliError(f"{args.out_dir} is a file: give a folder to export into")

    async def work(db: Database) -> int:
        report = await qdrant_export(out, db, note_vectors=args.note_vectors)
        if not args.quiet:
            counts = ", ".join(f"{n} {stem}" for stem, n in report.counts.items())
            checked = (
                "validated against the payload schemas"
                if report.validated
                else ("not validated (pip install 'fastnotebook[qdrant]' for jsonschema)")
            )
            print(f"wrote {counts} to {out} ({checked})")
        return 0

    use_data_dir(args)
    return run_db(work, create=False)


def add_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    common = database_options()

    notes = sub.add_parser(
        "notes",
        help="Markdown vaults: import, export, audit, search, qdrant-export",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = notes.add_subparsers(dest="action", required=True, metavar="ACTION")

    imp = actions.add_parser(
        "import",
        parents=[common],
        help="store a vault: notes, chunks, vectors, graph edges (incremental)",
        description="Parse every *.md file under VAULT, chunk and embed the changed notes and "
        "store notes, chunks, vectors and edges; notes whose files are gone are removed. "
        "A file that cannot be parsed is reported and skipped (exit code 1).",
    )
    imp.add_argument("vault", help="the vault's folder")
    imp.add_argument(
        "--no-embed",
        action="store_true",
        help="store without vectors (a later `notes import` or `fastnotebook embed` adds them)",
    )
    imp.add_argument(
        "--hash-mode",
        choices=["body", "frontmatter", "body+frontmatter"],
        default="body+frontmatter",
        help="what a note's content hash covers (default body+frontmatter)",
    )
    imp.add_argument(
        "--normalisation",
        choices=["canonical", "none"],
        default="canonical",
        help="text normalisation before hashing (default canonical)",
    )
    imp.add_argument(
        "--sizes",
        type=_sizes,
        action="append",
        metavar="TYPE=TMIN,TMAX,HARD,MIN",
        help="chunk sizes in tokens for notes of a type (repeatable; TYPE default for all others)",
    )
    imp.add_argument(
        "--overlap", type=_non_negative, default=None, help="overlap tokens (default 50)"
    )
    imp.add_argument(
        "--replace",
        action="store_true",
        help="replace the vault stored in this database by another folder",
    )
    imp.add_argument(
        "--rewrite",
        action="store_true",
        help="rewrite every note, changed or not (repairs a store that `notes audit` rejects)",
    )
    imp.add_argument(
        "--batch-notes",
        type=positive_int,
        default=64,
        help="notes per write transaction (default 64; each note is written whole)",
    )
    imp.add_argument(
        "--encoding",
        type=text_encoding,
        help="encoding of the notes that are not UTF-8 (default: detected, with a warning)",
    )
    imp.add_argument("--json", action="store_true", help="the report as one JSON object")
    imp.set_defaults(run=cmd_import)

    exp = actions.add_parser(
        "export", parents=[common], help="write the stored vault to a folder, byte for byte"
    )
    exp.add_argument("out_dir", help="the folder to write into (created)")
    exp.add_argument(
        "--from-chunks",
        action="store_true",
        help="rebuild each body from its chunks (proves the chunks are lossless)",
    )
    exp.set_defaults(run=cmd_export)

    aud = actions.add_parser(
        "audit",
        parents=[common],
        help="counts and invariants (exit 1 when one is violated; -q: only the exit code)",
    )
    aud.add_argument("--json", action="store_true", help="counts and invariants as one object")
    aud.set_defaults(run=cmd_audit)

    search = actions.add_parser(
        "search", parents=[common], help="vector search over the vault's chunks"
    )
    search.add_argument("query", help="the words to search for")
    search.add_argument(
        "-k", "--k", type=positive_int, default=5, help="how many chunks (default 5)"
    )
    search.add_argument(
        "--expand-links",
        action="store_true",
        help="add the notes one link away from each hit (both directions)",
    )
    search.add_argument("--json", action="store_true", help="machine-readable output")
    search.set_defaults(run=cmd_search)

    qdrant = actions.add_parser(
        "qdrant-export",
        parents=[common],
        help="chunk, note and edge points as JSON Lines for Qdrant",
    )
    qdrant.add_argument("out_dir", help="the folder to write chunks/notes/edges.jsonl into")
    qdrant.add_argument(
        "--note-vectors",
        choices=["centroid", "none"],
        default="centroid",
        help="a note point's vector: the mean of its chunks' vectors, or none",
    )
    qdrant.set_defaults(run=cmd_qdrant_export)


def _non_negative(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {raw!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value
