"""``fastnotebook eval``: the retrieval quality of chunkers (Chroma's
evaluation; ``fastnotebook.bench.quality``, docs/quality.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fastnotebook.app.cli.errors import EXIT_USAGE, CliError, positive_int

__all__ = ["DEFAULT_CONFIGS", "add_command", "cmd_eval"]

DEFAULT_CONFIGS = (
    "recursive",
    "recursive,separators=sentences",
    "markdown",
    "sentence",
    "token",
    "langchain:RecursiveCharacterTextSplitter",
    "chonkie:RecursiveChunker",
    "semchunk",
    "text-splitter",
    "open-notebook",
    "open-notebook-head",
)
"""What ``fastnotebook eval`` compares without ``--config``: at ``--sizes``
(200 tokens by default), and Open Notebook's two contracts at their sizes."""


def _integers(raw: str) -> list[int]:
    try:
        values = [int(v) for v in raw.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be integers separated by commas, got {raw!r}"
        ) from None
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"must be integers >= 0, got {raw!r}")
    return values


def add_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from fastnotebook.bench.quality.data import CHROMA_ENV

    parser = sub.add_parser(
        "eval",
        help="retrieval quality of chunkers (Chroma's evaluation: recall, precision, IoU)",
        description="Chunk the corpora with each configuration, embed the chunks and the "
        "questions, retrieve the top k chunks by cosine similarity and score them against "
        "the reference excerpts (docs/quality.md). Writes eval.json, eval.md and eval.png.",
    )
    parser.add_argument(
        "--data",
        metavar="PATH",
        help=f"Chroma's chunking_evaluation checkout or its data folder (default: ${CHROMA_ENV})",
    )
    parser.add_argument(
        "--corpus", metavar="FOLDER", help="your own corpus: a folder of text files"
    )
    parser.add_argument(
        "--questions",
        metavar="FILE",
        help="with --corpus: CSV or JSON Lines of question, references (ranges or excerpts), "
        "corpus_id",
    )
    parser.add_argument("--corpora", nargs="+", metavar="ID", help="only these corpora")
    parser.add_argument(
        "-c",
        "--config",
        action="append",
        metavar="SPEC",
        help="a chunker, KIND[,size=N,overlap=N,unit=chars|tokens,encoding=E"
        ",separators=sentences] (repeatable; "
        "default: our strategies, LangChain, chonkie, semchunk, semantic-text-splitter, "
        "Open Notebook); KIND: " + ", ".join(_kinds()),
    )
    parser.add_argument(
        "--sizes",
        type=_integers,
        default=[200],
        metavar="N,N",
        help="sizes of the configurations without size= (default 200; Open Notebook's "
        "contracts keep theirs)",
    )
    parser.add_argument(
        "--overlaps",
        type=_integers,
        default=[0],
        metavar="N,N",
        help="overlaps of the configurations without size= (default 0)",
    )
    parser.add_argument(
        "--model",
        default="default",
        help='embedding model: "default" (offline all-MiniLM-L6-v2) or PROVIDER:MODEL (esperanto)',
    )
    parser.add_argument(
        "-k", "--top-k", type=positive_int, default=5, help="chunks retrieved (default 5)"
    )
    parser.add_argument(
        "--encoding",
        choices=["cl100k_base", "o200k_base"],
        default="cl100k_base",
        help="tokens of the sizes and statistics (default cl100k_base, the paper's)",
    )
    parser.add_argument("--out", default="eval-results", help="folder for JSON, Markdown, plot")
    parser.add_argument(
        "--cache",
        metavar="FILE",
        help="SQLite file of cached embeddings (default: OUT/embeddings.sqlite)",
    )
    parser.add_argument("--no-cache", action="store_true", help="keep embeddings in memory only")
    parser.add_argument("--no-plot", action="store_true", help="skip eval.png")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--docs",
        nargs="?",
        const=".",
        metavar="ROOT",
        help="also write the table into ROOT/README.md and ROOT/docs/quality.md",
    )
    parser.set_defaults(run=cmd_eval)


def _kinds() -> list[str]:
    from fastnotebook.bench.quality.configs import KINDS

    return list(KINDS)


def cmd_eval(args: argparse.Namespace) -> int:
    from fastnotebook.bench import quality

    specs = args.config or list(DEFAULT_CONFIGS)
    try:
        configs = quality.grid(
            [quality.parse(s) for s in specs], sizes=args.sizes, overlaps=args.overlaps
        )
    except ValueError as e:
        raise CliError(f"--config {e}", code=EXIT_USAGE) from e
    if args.corpus or args.questions:
        if not (args.corpus and args.questions):
            raise CliError("--corpus and --questions go together", code=EXIT_USAGE)
        if args.data:
            raise CliError("give --data or --corpus, not both", code=EXIT_USAGE)
        dataset = quality.load_corpus(args.corpus, args.questions)
    else:
        if quality.chroma_path(args.data) is None:
            raise CliError(
                f"no data: give --data PATH (a chunking_evaluation checkout), set "
                f"{quality.CHROMA_ENV}, or give --corpus FOLDER --questions FILE",
                code=EXIT_USAGE,
            )
        dataset = quality.load_chroma(args.data)
    if args.corpora:
        dataset = quality.subset(dataset, args.corpora)
    if not args.no_plot:
        try:
            import matplotlib  # noqa: F401
        except ModuleNotFoundError as e:
            raise CliError("the plot needs matplotlib: pip install 'fastnotebook[bench]' "
                           "(or --no-plot)") from e  # fmt: skip
    out = Path(args.out)
    cache = None if args.no_cache else Path(args.cache or out / "embeddings.sqlite")
    with _progress(not args.quiet) as progress:
        result = quality.evaluate(
            dataset,
            configs,
            model=args.model,
            top_k=args.top_k,
            encoding=args.encoding,
            cache=cache,
            progress=progress,
        )
    print(quality.table(result))
    for name, reason in result.skipped.items():
        print(f"skipped {name}: {reason}")
    written = quality.write(result, out, with_plot=not args.no_plot)
    print(f"\n{result.questions} questions, {len(result.results)} configurations in "
          f"{result.seconds:.0f} s; wrote " + ", ".join(map(str, written)))  # fmt: skip
    if args.docs is not None:
        docs = quality.write_docs(result, Path(args.docs))
        print("wrote the table of " + ", ".join(map(str, docs)))
    return 0


@contextmanager
def _progress(show: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A progress bar on stderr (rich) of each configuration's embedding."""
    if not show:
        yield None
        return
    try:
        from rich.console import Console
        from rich.progress import Progress
    except ModuleNotFoundError:
        yield _plain_progress
        return
    tasks: dict[str, Any] = {}
    with Progress(console=Console(stderr=True), transient=False) as bar:

        def update(label: str, done: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = bar.add_task(label, total=max(total, 1))
            bar.update(tasks[label], completed=done, total=max(total, 1))

        yield update


def _plain_progress(label: str, done: int, total: int) -> None:
    if done == total:
        print(f"{label}: {total} chunks embedded", file=sys.stderr)
