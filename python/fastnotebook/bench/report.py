"""Presenting a benchmark report: tables on the terminal (rich), a Markdown
summary, PNG plots (matplotlib), and the figures of README.md and
docs/performance.md (``write_docs``)."""

from __future__ import annotations

import datetime
import importlib.util
import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fastnotebook.bench.corpus import KINDS
from fastnotebook.bench.methods import OPEN_NOTEBOOK_HEAD
from fastnotebook.bench.notes import NOTES_HEADER, notes_rows
from fastnotebook.bench.records import HEADLINE_CASES, RecordResult
from fastnotebook.bench.runner import ChunkingResult, PoolingResult, Report, TokenResult


def _fmt(value: float | None, spec: str = ".1f", suffix: str = "") -> str:
    return "-" if value is None else f"{value:{spec}}{suffix}"


def chunking_rows(results: Sequence[ChunkingResult]) -> list[list[str]]:
    rows = []
    for r in results:
        s = r.sizes
        rows.append(
            [
                r.kind,
                r.method,
                r.unit,
                f"{r.timing.median:.1f} ({r.timing.spread()})",
                f"{statistics_docs(r):.0f}",
                _fmt(r.ratio_to_original, ".1f", "x"),
                _fmt(r.ratio_with_release, ".1f", "x"),
                _fmt(r.ratio_to_token_pass, ".2f", "x"),
                f"{s.min}/{s.median:.0f}/{s.p95:.0f}/{s.max}",
                str(s.over_limit),
                f"{r.coverage:.3f}",
                str(r.tiny_chunks),
                _fmt(
                    None if r.identical_to_original is None else 100 * r.identical_to_original,
                    ".0f",
                    "%",
                ),
                _fmt(r.peak_memory_mb, ".0f"),
            ]
        )
    return rows


def statistics_docs(result: ChunkingResult) -> float:
    docs = sorted(result.timing.docs_per_s)
    return docs[len(docs) // 2] if docs else 0.0


CHUNKING_HEADER = [
    "type",
    "method",
    "unit",
    "MB/s median (min-max)",
    "docs/s",
    "vs original",
    "release timed too",
    "time vs one token_count pass",
    "size min/med/p95/max",
    "over limit",
    "coverage",
    "tiny (<5 tok)",
    "same as original",
    "peak MB",
]
TOKEN_HEADER = [
    "encoding",
    "type",
    "method",
    "MB/s median (min-max)",
    "vs tiktoken",
    "same as tiktoken",
]
POOLING_HEADER = ["method", "data", "us/document", "GB/s", "vs baseline"]

TIMING_NOTE = (
    "Timings cover the calls; each call's result is released after its timing "
    "ends. 'release timed too': the ratio with that release (CPython freeing "
    "the chunk strings, the same for the same chunks) timed as well."
)


def token_rows(results: Sequence[TokenResult]) -> list[list[str]]:
    return [
        [
            r.encoding,
            r.kind,
            r.method,
            f"{r.timing.median:.1f} ({r.timing.spread()})",
            _fmt(r.ratio_to_tiktoken, ".1f", "x"),
            _fmt(
                None if r.identical_to_tiktoken is None else 100 * r.identical_to_tiktoken,
                ".0f",
                "%",
            ),
        ]
        for r in results
    ]


def pooling_rows(results: Sequence[PoolingResult]) -> list[list[str]]:
    return [
        [
            r.method,
            r.shape,
            f"{r.per_document_us:.2f}",
            f"{r.gb_per_s:.2f}",
            _fmt(r.ratio_to_original, ".1f", "x"),
        ]
        for r in results
    ]


RECORDS_HEADER = [
    "case",
    "method",
    "docs",
    "MB",
    "MB/s median (min-max)",
    "chunks",
    "vs fastest peer",
    "embedding share",
]


def record_rows(results: Sequence[RecordResult]) -> list[list[str]]:
    return [
        [
            r.case,
            r.method,
            str(r.documents),
            f"{r.megabytes:.1f}",
            f"{r.mbs:.1f} ({r.spread})",
            str(r.chunks),
            _fmt(r.ratio_to_fastest_peer, ".1f", "x"),
            _fmt(None if r.embedding_share is None else 100 * r.embedding_share, ".0f", "%"),
        ]
        for r in results
    ]


def sections(report: Report) -> list[tuple[str, list[str], list[list[str]]]]:
    found = [
        ("Chunking", CHUNKING_HEADER, chunking_rows(report.chunking)),
        ("Token counting", TOKEN_HEADER, token_rows(report.tokens)),
        ("Mean pooling", POOLING_HEADER, pooling_rows(report.pooling)),
        (
            "Chunk records (fastnotebook.chunk against the closest peer)",
            RECORDS_HEADER,
            record_rows(report.records),
        ),
        (
            "Note vaults (fastnotebook.notes.read_vault: parse + chunk + edges, no model, "
            "single-threaded)",
            NOTES_HEADER,
            notes_rows(report.notes),
        ),
    ]
    if report.langchain:
        from fastnotebook.bench.langchain import LANGCHAIN_HEADER, langchain_rows

        found.append(("LangChain splitters", LANGCHAIN_HEADER, langchain_rows(report.langchain)))
    return [(title, header, rows) for title, header, rows in found if rows]


OUTPUT_LIBRARIES = ("rich", "matplotlib")


def missing_output_libraries() -> list[str]:
    """The report's libraries (the ``bench`` extra) that are not installed."""
    return [name for name in OUTPUT_LIBRARIES if importlib.util.find_spec(name) is None]


def print_report(report: Report) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=200)
    env = report.environment
    console.print(f"[bold]corpus[/]: {report.corpus}")
    console.print(f"[bold]machine[/]: {env['cpu']}, {env['cores']} cores, Python {env['python']}")
    for title, header, rows in sections(report):
        table = Table(title=title, title_justify="left")
        for column in header:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*row)
        console.print(table)
    console.print(TIMING_NOTE)
    for name, reason in report.missing.items():
        console.print(f"[yellow]missing[/]: {name}: {reason}")


def markdown(report: Report) -> str:
    env = report.environment
    lines = [
        f"Corpus: {report.corpus}. Machine: {env['cpu']}, {env['cores']} cores, "
        f"Python {env['python']}.",
        "",
    ]
    for title, header, rows in sections(report):
        lines += [f"**{title}**", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        lines.append("")
    lines += [TIMING_NOTE, ""]
    lines += [f"Missing: {name}: {reason}" for name, reason in report.missing.items()]
    return "\n".join(lines)


def plot(report: Report, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    kinds = sorted({r.kind for r in report.chunking})
    methods = list(dict.fromkeys(f"{r.method} ({r.unit})" for r in report.chunking))
    fig, ax = plt.subplots(figsize=(12, 6))
    width = 0.8 / max(len(kinds), 1)
    for i, kind in enumerate(kinds):
        values = []
        for m in methods:
            found = [r for r in report.chunking if r.kind == kind and f"{r.method} ({r.unit})" == m]
            values.append(found[0].timing.median if found else 0.0)
        ax.barh([j + i * width for j in range(len(methods))], values, height=width, label=kind)
    ax.set_yticks([j + width * (len(kinds) - 1) / 2 for j in range(len(methods))], methods)
    ax.set_xscale("log")
    ax.set_xlabel("MB/s (log scale, median)")
    ax.set_title("Chunking throughput by method and content type")
    ax.legend()
    fig.tight_layout()
    path = out_dir / "throughput.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)

    fig, axes = plt.subplots(len(kinds), 1, figsize=(12, 3 + 2.5 * len(kinds)), squeeze=False)
    for ax, kind in zip(axes[:, 0], kinds, strict=True):
        series = [r for r in report.chunking if r.kind == kind]
        for j, r in enumerate(series):
            limit = r.limit
            s = r.sizes
            ax.plot([s.min / limit, s.max / limit], [j, j], color="grey", linewidth=1)
            ax.plot([s.median / limit, s.p95 / limit], [j, j], color="tab:blue", linewidth=6)
            ax.plot([s.median / limit], [j], "o", color="black")
        ax.axvline(1.0, color="tab:red", linestyle="--", linewidth=1)
        ax.set_yticks(range(len(series)), [f"{r.method} ({r.unit})" for r in series])
        ax.set_xscale("log")
        ax.set_title(f"{kind}: chunk sizes relative to the limit (min-max, median-p95, median)")
    axes[-1, 0].set_xlabel("chunk size / limit (1500 characters or 400 tokens)")
    fig.tight_layout()
    path = out_dir / "sizes.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)
    return paths


# --- the documentation's figures ----------------------------------------------
#
# ``fastnotebook bench --docs ROOT`` rewrites the part of ROOT/README.md and
# ROOT/docs/performance.md between ``<!-- bench:begin -->`` and
# ``<!-- bench:end -->``, so that the figures there are always the output of a
# run, never typed by hand.

BEGIN_MARKER = "<!-- bench:begin -->"
END_MARKER = "<!-- bench:end -->"
#: Around the README's one headline figure, inside its first paragraph.
FIGURE_BEGIN = "<!-- bench:figure -->"
FIGURE_END = "<!-- /bench:figure -->"

#: The fastnotebook method and the original's, per unit, as ``methods`` names them.
FASTNOTEBOOK = "fastnotebook"
ORIGINAL = {"chars": "original (langchain)", "tokens": "original (langchain+tiktoken)"}
UNIT_NAMES = {"chars": "1500 characters", "tokens": "400 tokens"}
KIND_NAMES = {"html": "HTML", "markdown": "Markdown", "plain": "plain text"}

#: The pipeline run whose shares of wall time the headline table gives.
PIPELINE_MODEL_RUN = "pipeline, default model (sample)"


def replace_between_markers(
    text: str,
    content: str,
    begin: str = BEGIN_MARKER,
    end: str = END_MARKER,
    *,
    inline: bool = False,
) -> str:
    """``text`` with everything between the ``begin`` and ``end`` markers
    replaced by ``content`` (on lines of its own unless ``inline``);
    ``ValueError`` when the markers are missing, repeated or out of order (a
    document without them is not ours to rewrite)."""
    if text.count(begin) != 1 or text.count(end) != 1:
        raise ValueError(f"expected one {begin} and one {end}")
    start = text.index(begin) + len(begin)
    stop = text.index(end)
    if stop < start:
        raise ValueError(f"{end} comes before {begin}")
    middle = content.strip() if inline else "\n" + content.strip("\n") + "\n"
    return text[:start] + middle + text[stop:]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _mbs(value: float) -> str:
    return f"{value:,.0f} MB/s" if value >= 10 else f"{value:.1f} MB/s"


def pipeline_shares(result: dict[str, Any]) -> str:
    """The share of a pipeline run's wall time each part kept busy, as
    ``benches/bench_pipeline.py`` reports it."""
    wall = float(result["embed_seconds"])
    stages: dict[str, float] = result["embed_stages"]

    def busy(names: tuple[str, ...]) -> float:
        return 100 * sum(stages.get(n, 0.0) for n in names) / wall

    model = busy(("model",))
    database = busy(("plan", "load", "write", "index"))
    ours = busy(("read", "parse", "hash", "chunk", "pool", "prepare"))
    ours_text = f"{ours:.2f}%" if ours >= 0.005 else "under 0.01%"
    return f"model {model:.1f}%, database {database:.1f}%, fastnotebook {ours_text}"


def headline_rows(report: Report, pipeline: dict[str, Any] | None = None) -> list[list[str]]:
    """The headline table: each content type and unit against the original
    and the fastest peer, token counting, pooling and, when a pipeline run's
    results are given, the shares of bulk embedding's wall time."""
    rows: list[list[str]] = []
    for unit in ("chars", "tokens"):
        for kind in KINDS:
            same = [r for r in report.chunking if r.kind == kind and r.unit == unit]
            ours = next((r for r in same if r.method == FASTNOTEBOOK), None)
            original = next((r for r in same if r.method == ORIGINAL[unit]), None)
            if ours is None or original is None:
                continue
            # Peers are other libraries: fastnotebook's own rows (the current
            # Open Notebook contract) are not.
            ours_or_original = (FASTNOTEBOOK, OPEN_NOTEBOOK_HEAD, ORIGINAL[unit])
            peers = [r for r in same if r.method not in ours_or_original]
            fastest = max(peers, key=lambda r: r.timing.median, default=None)
            peer = "-"
            if fastest is not None:
                ratio = ours.timing.median / max(fastest.timing.median, 1e-9)
                peer = f"{fastest.method}: {_mbs(fastest.timing.median)} ({ratio:.1f}x)"
            identical = ours.identical_to_original
            rows.append(
                [
                    f"chunk_text, {KIND_NAMES[kind]}, {UNIT_NAMES[unit]}",
                    _mbs(ours.timing.median),
                    _mbs(original.timing.median),
                    _fmt(ours.ratio_to_original, ".1f", "x"),
                    peer,
                    "-" if identical is None else f"{100 * identical:.0f}%",
                    _fmt(ours.ratio_to_token_pass, ".2f", "x"),
                ]
            )
    rows += _record_headline_rows(report.records)
    for encoding in sorted({r.encoding for r in report.tokens}, reverse=True):
        ours_t = [
            r for r in report.tokens if r.encoding == encoding and r.method.endswith("token_count")
        ]
        base = [r for r in report.tokens if r.encoding == encoding and r.method == "tiktoken"]
        if not ours_t or not base:
            continue
        speeds = [r.timing.median for r in ours_t]
        ratios = [r.ratio_to_tiktoken for r in ours_t if r.ratio_to_tiktoken is not None]
        same_t = [r.identical_to_tiktoken for r in ours_t if r.identical_to_tiktoken is not None]
        base_speeds = [r.timing.median for r in base]
        rows.append(
            [
                f"token_count, {encoding} (HTML, Markdown, plain text)",
                f"{min(speeds):.0f}-{max(speeds):.0f} MB/s",
                f"tiktoken {min(base_speeds):.1f}-{max(base_speeds):.1f} MB/s",
                f"{min(ratios):.1f}-{max(ratios):.1f}x" if ratios else "-",
                "-",
                f"{100 * min(same_t):.0f}%" if same_t else "-",
                "-",
            ]
        )
    pooling = {r.method: r for r in report.pooling}
    for ours_name, base_name, label in (
        (
            "fastnotebook mean_pool_embeddings (lists)",
            "original (numpy, from lists)",
            "mean_pool_embeddings, lists of floats",
        ),
        (
            "fastnotebook mean_pool_segments (array)",
            "numpy vectorised (array)",
            "mean_pool_segments, float32 array",
        ),
    ):
        if ours_name in pooling and base_name in pooling:
            ours_p, base_p = pooling[ours_name], pooling[base_name]
            copy = pooling.get("memcpy of the array (numpy copy)")
            note = (
                f"numpy copy of the array: {copy.gb_per_s:.2f} GB/s"
                if copy is not None and "array" in ours_name
                else "-"
            )
            rows.append(
                [
                    f"{label} ({ours_p.shape})",
                    f"{ours_p.gb_per_s:.2f} GB/s",
                    f"{base_name}: {base_p.gb_per_s:.2f} GB/s",
                    f"{base_p.per_document_us / ours_p.per_document_us:.1f}x",
                    note,
                    "-",
                    "-",
                ]
            )
    if pipeline is not None and PIPELINE_MODEL_RUN in pipeline:
        run = pipeline[PIPELINE_MODEL_RUN]
        rows.append(
            [
                f"bulk embedding, default model ({run['chunks']:,} chunks)",
                f"share of wall time (the parts overlap): {pipeline_shares(run)}",
                "-",
                "-",
                "-",
                "-",
                "-",
            ]
        )
    return rows


def _record_headline_rows(results: list[RecordResult]) -> list[list[str]]:
    """``chunk`` records, one thread, against the fastest peer of each of the
    headline cases (there is no original to compare with)."""
    rows = []
    for case in HEADLINE_CASES:
        same = [r for r in results if r.case == case]
        ours = next((r for r in same if r.method == "fastnotebook chunk"), None)
        peers = [r for r in same if not r.method.startswith("fastnotebook")]
        fastest = max(peers, key=lambda r: r.mbs, default=None)
        if ours is None or fastest is None:
            continue
        ratio = ours.mbs / max(fastest.mbs, 1e-9)
        rows.append(
            [
                f"chunk records, {case}",
                _mbs(ours.mbs),
                "-",
                "-",
                f"{fastest.method}: {_mbs(fastest.mbs)} ({ratio:.1f}x)",
                "-",
                "-",
            ]
        )
    return rows


HEADLINE_HEADER = [
    "task",
    "fastnotebook",
    "original",
    "speed-up",
    "fastest other library (fastnotebook's speed-up)",
    "same output as the original",
    "time vs one token_count pass",
]


def _stamp(report: Report, commit: str, date: str) -> str:
    env = report.environment
    return (
        f"Measured {date}, commit {commit}, on {env['cpu']} ({env['cores']} cores), "
        f"Python {env['python']}, corpus {report.corpus}."
    )


def headline_figure(report: Report) -> str:
    """The README's headline sentence: chunking in characters against the
    original, per content type."""
    parts = []
    for kind in KINDS:
        ours = next(
            (
                r
                for r in report.chunking
                if r.kind == kind and r.unit == "chars" and r.method == FASTNOTEBOOK
            ),
            None,
        )
        if ours is not None and ours.ratio_to_original is not None:
            parts.append(f"{ours.ratio_to_original:.0f}x on {KIND_NAMES[kind]}")
    if not parts:
        return "faster than the original"
    parts[0] = parts[0].replace(" on ", " faster than the original on ", 1)
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def readme_section(report: Report, commit: str, date: str, pipeline: dict[str, Any] | None) -> str:
    """What ``--docs`` writes between the README's markers."""
    lines = _table(HEADLINE_HEADER, headline_rows(report, pipeline))
    lines += ["", _stamp(report, commit, date)]
    return "\n".join(lines)


def performance_section(
    report: Report, commit: str, date: str, pipeline: dict[str, Any] | None
) -> str:
    """What ``--docs`` writes between docs/performance.md's markers: the
    headline table, then every table of the run in full."""
    lines = [_stamp(report, commit, date), "", "### Headline", ""]
    lines += _table(HEADLINE_HEADER, headline_rows(report, pipeline))
    lines += ["", "![Chunking throughput by method and content type](perf/throughput.png)", ""]
    for title, header, rows in sections(report):
        lines += [f"### {title}", "", *_table(header, rows), ""]
    if pipeline:
        rows = [
            [
                name,
                f"{r['documents']:,}",
                f"{r['chunks']:,}",
                f"{r['bytes'] / 1e6:.2f}",
                f"{r['embed_seconds']:.1f}",
                f"{r['peak_mb']:.0f}",
                pipeline_shares(r),
            ]
            for name, r in pipeline.items()
        ]
        header = [
            "run",
            "documents",
            "chunks",
            "MB",
            "embed s",
            "peak MB",
            "busy (share of wall; the parts overlap)",
        ]
        lines += ["### Bulk embedding (`benches/bench_pipeline.py`)", "", *_table(header, rows), ""]
    lines.append(TIMING_NOTE)
    lines += [f"Missing: {name}: {reason}" for name, reason in report.missing.items()]
    return "\n".join(lines)


def current_commit(root: Path) -> str:
    """The short hash of ``root``'s checked-out commit, or ``unknown``."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"


def write_docs(
    report: Report,
    root: Path,
    out_dir: Path,
    *,
    commit: str | None = None,
    date: str | None = None,
) -> list[Path]:
    """Rewrite the figures of ``root``'s README.md and docs/performance.md
    (between the markers) from ``report`` and, when ``out_dir`` holds one,
    the pipeline benchmark's ``pipeline.json``. Returns the files written."""
    commit = commit or current_commit(root)
    date = date or datetime.datetime.now(datetime.UTC).date().isoformat()
    pipeline_file = out_dir / "pipeline.json"
    pipeline = (
        json.loads(pipeline_file.read_text(encoding="utf-8")) if pipeline_file.is_file() else None
    )
    targets = {
        root / "README.md": readme_section(report, commit, date, pipeline),
        root / "docs" / "performance.md": performance_section(report, commit, date, pipeline),
    }
    for path, content in targets.items():
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file to write the figures into")
        text = replace_between_markers(path.read_text(encoding="utf-8"), content)
        if FIGURE_BEGIN in text:
            figure = headline_figure(report)
            text = replace_between_markers(text, figure, FIGURE_BEGIN, FIGURE_END, inline=True)
        path.write_text(text, encoding="utf-8")
    return list(targets)
