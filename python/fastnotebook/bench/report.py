"""Presenting a benchmark report: tables on the terminal (rich), a Markdown
summary for the README, PNG plots (matplotlib)."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

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


def sections(report: Report) -> list[tuple[str, list[str], list[list[str]]]]:
    return [
        ("Chunking", CHUNKING_HEADER, chunking_rows(report.chunking)),
        ("Token counting", TOKEN_HEADER, token_rows(report.tokens)),
        ("Mean pooling", POOLING_HEADER, pooling_rows(report.pooling)),
    ]


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
