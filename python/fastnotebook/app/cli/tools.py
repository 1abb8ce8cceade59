"""The commands that work on files alone: ``chunk``, ``bench``, ``serve``."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

from loguru import logger

from fastnotebook import chunking, token_utils
from fastnotebook.app.cli import chunk_commands, eval_commands
from fastnotebook.app.cli.errors import EXIT_USAGE, CliError, missing_app_message, positive_int
from fastnotebook.textcheck import BinaryFileError, read_text_file

__all__ = ["add_commands"]

# The chunking settings' names in messages, as the command's options.
_OPTION_NAMES = (
    ("chunk_size", "--size"),
    ("chunk_overlap", "--overlap"),
    ("min_chunk_size", "--min-size"),
    ("unit", "--unit"),
)


def _read(path: Path) -> str:
    """The file's text as ``ingest`` stores it (docs/ROBUSTNESS.md, "Bad files")."""
    if not os.path.lexists(path):  # a symlink loop is there, and cannot be read
        raise CliError(f"no such file: {path}")
    if path.is_dir():
        raise CliError(f"{path} is a folder: give one file (`fastnotebook ingest` takes folders)")
    try:
        read = read_text_file(path)
    except BinaryFileError as e:
        raise CliError(f"{path} is skipped: {e}") from e
    except OSError as e:
        raise CliError(f"cannot read {path}: {e.strerror or e}") from e
    if read.removed_nul:
        logger.warning("{}: removed {} NUL characters", path, read.removed_nul)
    if read.warning:
        logger.warning("{}: {}", path, read.warning)
    return read.text


def _chunking_config(args: argparse.Namespace) -> chunking.ChunkingConfig | None:
    """The configuration the options give (None: none given, the environment's)."""
    if args.size is None and args.overlap is None and args.unit is None and not args.encoding:
        return None
    try:
        base = chunking.get_chunking_config()
        config = chunking.ChunkingConfig(
            unit=args.unit or base.unit,
            chunk_size=args.size,
            chunk_overlap=args.overlap,
            encoding=args.encoding,
        )
        config.resolved()
    except ValueError as e:
        message = str(e)
        for name, option in _OPTION_NAMES:
            message = message.replace(name, option)
        raise CliError(message, code=EXIT_USAGE) from e
    return config


def cmd_chunk(args: argparse.Namespace) -> int:
    if chunk_commands.wanted(args):
        return chunk_commands.cmd_records(args, _read)
    path = Path(args.file)
    config = _chunking_config(args)
    text = _read(path)
    if config is not None:
        chunking.set_chunking_config(config)
    content_type = chunking.detect_content_type(text, str(path))
    chunks = chunking.chunk_text(text, file_path=str(path))
    if args.json:
        record = {"file": str(path), "content_type": content_type.value, "chunks": chunks}
        json.dump(record, sys.stdout, ensure_ascii=False, indent=2)
        print()
        return 0
    print(f"{path}: {content_type.value}, {len(text):,} characters, {len(chunks)} chunks")
    for i, chunk in enumerate(chunks):
        print(f"--- chunk {i} ({len(chunk)} characters)")
        print(chunk)
    return 0


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _bench_missing() -> str | None:
    """The one line naming what ``bench`` needs and is not installed (None:
    all there): langchain-text-splitters, the reference it compares against
    (the ``reference`` extra), and the report's libraries (``bench``)."""
    missing = []
    if not _installed("langchain_text_splitters"):
        # The harness imports it: its modules cannot be asked.
        missing.append(("langchain_text_splitters", "reference"))
        report_libraries = ("rich", "matplotlib")
        missing += [(n, "bench") for n in report_libraries if not _installed(n)]
    else:
        from fastnotebook.bench import report

        missing += [(name, "bench") for name in report.missing_output_libraries()]
    if not missing:
        return None
    extras = ",".join(dict.fromkeys(extra for _, extra in missing))
    names = " and ".join(module for module, _ in missing)
    return f"needs {names}: pip install 'fastnotebook[{extras}]'"


def cmd_bench(args: argparse.Namespace) -> int:
    if needs := _bench_missing():
        raise CliError(needs)
    try:
        return _bench(args)
    except ModuleNotFoundError as e:  # a package the references import in turn
        raise CliError(f"needs {e.name}: pip install 'fastnotebook[reference,bench]'") from e


def _bench(args: argparse.Namespace) -> int:
    from fastnotebook.bench import corpus, report, runner

    docs = corpus.load(Path(args.corpus)) if args.corpus else corpus.default()
    if args.max_documents:
        docs.documents = [
            d for kind in corpus.KINDS for d in docs.by_kind(kind)[: args.max_documents]
        ]
    out = Path(args.out)
    if args.langchain:
        from fastnotebook.bench.langchain import bench_langchain

        out.mkdir(parents=True, exist_ok=True)
        result = runner.Report(
            corpus=docs.name,
            environment=runner.environment(),
            missing={},
            chunking=[],
            tokens=[],
            pooling=[],
            langchain=bench_langchain(docs, args.repeats, args.langchain_classes),
        )
        (out / "bench.json").write_text(result.to_json(), encoding="utf-8")
        report.print_report(result)
        (out / "bench.md").write_text(report.markdown(result), encoding="utf-8")
        print(f"\nwrote {out / 'bench.json'}, {out / 'bench.md'}")
        return 0
    result = runner.run(
        docs,
        out,
        args.repeats,
        memory=not args.no_memory,
        pooling_documents=args.pooling_documents,
    )
    report.print_report(result)
    (out / "bench.md").write_text(report.markdown(result), encoding="utf-8")
    plots = report.plot(result, out)
    print(f"\nwrote {out / 'bench.json'}, {out / 'bench.md'}, " + ", ".join(map(str, plots)))
    if args.docs is not None:
        written = report.write_docs(result, Path(args.docs), out)
        print("wrote the figures of " + ", ".join(map(str, written)))
    return 0


def _integer(raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {raw!r}") from None


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from fastnotebook.app.api import serve
    except ModuleNotFoundError as e:
        raise CliError(missing_app_message(e)) from e

    serve(host=args.host, port=args.port)
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    chunk = sub.add_parser(
        "chunk",
        help="print the chunks of one file (type detected, or --strategy)",
        description="Print the chunks of one file as ingest and embed would make them. "
        "Without options the sizes come from the environment (FASTNOTEBOOK_CHUNK_UNIT, "
        "OPEN_NOTEBOOK_CHUNK_SIZE, ...).",
    )
    chunk.add_argument("file")
    chunk.add_argument("--json", action="store_true", help="machine-readable output")
    chunk.add_argument(
        "--unit", choices=["chars", "tokens"], help="size unit (default: the environment's)"
    )
    chunk.add_argument(
        "--size",
        type=_integer,
        help="chunk size in the unit (default 1500 characters or 400 tokens)",
    )
    chunk.add_argument(
        "--overlap", type=_integer, help="overlap in the unit (default 15%% of the size)"
    )
    chunk.add_argument(
        "--encoding",
        choices=list(token_utils.ENCODINGS),
        help="tokenizer of the token unit (default: o200k_base or FASTNOTEBOOK_ENCODING)",
    )
    chunk_commands.add_options(chunk)
    chunk.set_defaults(run=cmd_chunk)

    bench = sub.add_parser(
        "bench", help="compare chunking speed and quality with the original and peer libraries"
    )
    bench.add_argument("--corpus", help="folder of .html/.md/.txt files (default: shared or built)")
    bench.add_argument("--out", default="bench-results", help="folder for JSON, Markdown, plots")
    bench.add_argument("--repeats", type=positive_int, default=5, help="timed rounds (default 5)")
    bench.add_argument("--max-documents", type=int, default=0, help="at most N per content type")
    bench.add_argument("--no-memory", action="store_true", help="skip peak-memory measurement")
    bench.add_argument(
        "--pooling-documents",
        type=int,
        default=1000,
        help="documents of 8 x 768 floats in the list pooling case (x10 for arrays)",
    )
    bench.add_argument(
        "--docs",
        nargs="?",
        const=".",
        metavar="ROOT",
        help="also rewrite the figures in ROOT/README.md and ROOT/docs/performance.md "
        "(between their bench markers; ROOT defaults to the current folder)",
    )
    bench.add_argument(
        "--langchain",
        action="store_true",
        help="only the LangChain table: fastnotebook.langchain against langchain-text-splitters",
    )
    bench.add_argument(
        "--langchain-classes",
        nargs="*",
        default=[],
        metavar="CLASS",
        help="with --langchain: only these classes (default: all)",
    )
    bench.set_defaults(run=cmd_bench)

    eval_commands.add_command(sub)

    serve = sub.add_parser("serve", help="serve the context API and search over HTTP (FastAPI)")
    serve.add_argument("--host", default="127.0.0.1", help="address (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    serve.set_defaults(run=cmd_serve)
