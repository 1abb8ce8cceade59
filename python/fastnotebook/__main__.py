"""The ``fastnotebook`` command line."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from loguru import logger

from fastnotebook import chunking


def _files(paths: Sequence[str]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and chunking.detect_content_type_from_extension(p) is not None
            )
        elif path.is_file():
            yield path
        else:
            print(f"skipping {raw}: not a file or folder", file=sys.stderr)


def _read(path: Path) -> str:
    # Undecodable bytes survive as lone surrogates; chunking keeps them.
    return path.read_text(encoding="utf-8", errors="surrogateescape")


def cmd_chunk(args: argparse.Namespace) -> int:
    path = Path(args.file)
    text = _read(path)
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


def cmd_demo(args: argparse.Namespace) -> int:
    files = list(_files(args.paths))
    if not files:
        print("no documents found", file=sys.stderr)
        return 1
    texts = [_read(p) for p in files]
    start = time.perf_counter()
    results = chunking.chunk_texts(texts, file_paths=[str(p) for p in files])
    elapsed = time.perf_counter() - start
    width = max(len(str(p)) for p in files)
    print(f"{'document':<{width}}  {'type':<8}  {'chars':>9}  {'chunks':>6}  {'longest':>7}")
    for path, text, chunks in zip(files, texts, results, strict=True):
        kind = chunking.detect_content_type(text, str(path)).value
        longest = max((len(c) for c in chunks), default=0)
        print(f"{path!s:<{width}}  {kind:<8}  {len(text):>9,}  {len(chunks):>6}  {longest:>7}")
    size = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
    print(
        f"\n{len(files)} documents, {size / 1e6:.2f} MB, {sum(map(len, results))} chunks "
        f"in {elapsed * 1e3:.1f} ms ({size / 1e6 / max(elapsed, 1e-9):.0f} MB/s, all cores)"
    )
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from fastnotebook.bench import corpus, report, runner

    docs = corpus.load(Path(args.corpus)) if args.corpus else corpus.default()
    if args.max_documents:
        docs.documents = [
            d for kind in corpus.KINDS for d in docs.by_kind(kind)[: args.max_documents]
        ]
    out = Path(args.out)
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
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from fastnotebook.api import serve

    serve(host=args.host, port=args.port)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fastnotebook", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="show debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    chunk = sub.add_parser("chunk", help="print the chunks of one file (type detected)")
    chunk.add_argument("file")
    chunk.add_argument("--json", action="store_true", help="machine-readable output")
    chunk.set_defaults(run=cmd_chunk)

    demo = sub.add_parser("demo", help="chunk documents and print a summary")
    demo.add_argument("paths", nargs="*", default=["."], help="files or folders (default: .)")
    demo.set_defaults(run=cmd_demo)

    bench = sub.add_parser(
        "bench", help="compare speed and quality with the original and peer libraries"
    )
    bench.add_argument("--corpus", help="folder of .html/.md/.txt files (default: shared or built)")
    bench.add_argument("--out", default="bench-results", help="folder for JSON, Markdown, plots")
    bench.add_argument("--repeats", type=int, default=5, help="timed rounds (default 5)")
    bench.add_argument("--max-documents", type=int, default=0, help="at most N per content type")
    bench.add_argument("--no-memory", action="store_true", help="skip peak-memory measurement")
    bench.add_argument(
        "--pooling-documents",
        type=int,
        default=1000,
        help="documents of 8 x 768 floats in the list pooling case (x10 for arrays)",
    )
    bench.set_defaults(run=cmd_bench)

    serve = sub.add_parser("serve", help="serve the context API over HTTP (FastAPI)")
    serve.add_argument("--host", default="127.0.0.1", help="address (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    serve.set_defaults(run=cmd_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not args.verbose:
        logger.remove()
        logger.add(sys.stderr, level="INFO")
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
