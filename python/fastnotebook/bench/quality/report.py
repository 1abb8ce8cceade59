"""The evaluation's outputs: JSON, a Markdown table (overall and per corpus),
a plot of recall and IoU against mean chunk tokens, and the table written
into README.md and docs/quality.md between ``<!-- quality:begin -->`` and
``<!-- quality:end -->`` (and the per-corpus table into docs/quality.md
between ``<!-- quality-corpora:begin -->`` and ``<!-- quality-corpora:end -->``)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from fastnotebook.bench.quality.evaluate import Evaluation

__all__ = [
    "BEGIN",
    "CORPORA_BEGIN",
    "CORPORA_END",
    "END",
    "markdown",
    "plot",
    "table",
    "write",
    "write_docs",
]

BEGIN = "<!-- quality:begin -->"
END = "<!-- quality:end -->"
CORPORA_BEGIN = "<!-- quality-corpora:begin -->"
CORPORA_END = "<!-- quality-corpora:end -->"


def _pct(mean: float, std: float | None = None) -> str:
    if std is None:
        return f"{100 * mean:.1f}"
    return f"{100 * mean:.1f} ± {100 * std:.1f}"


def table(evaluation: Evaluation, *, std: bool = True) -> str:
    """The overall table: one row per configuration, best IoU first."""
    rows = sorted(evaluation.results, key=lambda r: -r.overall["iou"].mean)
    lines = [
        "| chunker | chunks | mean tokens | recall % | precision % | IoU % | precision-Ω % "
        "| chunking MB/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = [
            _pct(r.overall[m].mean, r.overall[m].std if std else None)
            for m in ("recall", "precision", "iou", "precision_omega")
        ]
        lines.append(
            f"| {r.name} | {r.chunks} | {r.mean_tokens:.0f} ± {r.std_tokens:.0f} | "
            + " | ".join(cells)
            + f" | {r.chunk_mb_per_s:.2f} |"
        )
    return "\n".join(lines)


def _per_corpus(evaluation: Evaluation) -> str:
    corpora = list(evaluation.corpora)
    head = "| chunker | " + " | ".join(corpora) + " |"
    lines = [
        "Recall / IoU / precision-Ω (%) per corpus:",
        "",
        head,
        "|---|" + "---|" * len(corpora),
    ]
    for r in sorted(evaluation.results, key=lambda r: -r.overall["iou"].mean):
        cells = [
            "{:.1f} / {:.1f} / {:.1f}".format(
                *(100 * r.corpora[c][m].mean for m in ("recall", "iou", "precision_omega"))
            )
            for c in corpora
        ]
        lines.append(f"| {r.name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _about(evaluation: Evaluation) -> str:
    corpora = ", ".join(evaluation.corpora)
    return (
        f"{evaluation.dataset}: {evaluation.questions} questions on {len(evaluation.corpora)} "
        f"corpora ({corpora}); embeddings {evaluation.model}; top {evaluation.top_k} chunks "
        f"of all corpora by exact cosine; tokens of {evaluation.encoding}; metrics as means "
        "± population standard deviations over the questions."
    )


def markdown(evaluation: Evaluation) -> str:
    """The report as Markdown."""
    parts = [
        "# Retrieval quality of chunkers",
        "",
        _about(evaluation),
        "",
        table(evaluation),
        "",
        _per_corpus(evaluation),
    ]
    if evaluation.skipped:
        parts += ["", "Skipped: " + "; ".join(f"{k} ({v})" for k, v in evaluation.skipped.items())]
    return "\n".join(parts) + "\n"


def plot(evaluation: Evaluation, path: Path) -> Path:
    """Recall and IoU against mean chunk tokens, one point per configuration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(12, 5))
    colours = {"fastnotebook": "tab:blue", "open-notebook": "tab:green", "peer": "tab:orange"}
    for ax, metric, title in ((axes[0], "recall", "Recall"), (axes[1], "iou", "IoU")):
        for family, colour in colours.items():
            rows = [r for r in evaluation.results if r.family == family]
            if not rows:
                continue
            ax.scatter(
                [r.mean_tokens for r in rows],
                [100 * r.overall[metric].mean for r in rows],
                c=colour,
                label=family,
            )
            for r in rows:
                ax.annotate(
                    r.name, (r.mean_tokens, 100 * r.overall[metric].mean), fontsize=6, alpha=0.8
                )
        ax.set_xlabel(f"mean chunk tokens ({evaluation.encoding})")
        ax.set_ylabel(f"{title} (%)")
        ax.set_title(f"{title}, top {evaluation.top_k}")
        ax.grid(alpha=0.3)
        ax.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def write(evaluation: Evaluation, out: Path, *, with_plot: bool = True) -> list[Path]:
    """``eval.json``, ``eval.md`` and (matplotlib installed) ``eval.png`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "eval.json", out / "eval.md"]
    written[0].write_text(json.dumps(evaluation.to_dict(), indent=2) + "\n", encoding="utf-8")
    written[1].write_text(markdown(evaluation), encoding="utf-8")
    if with_plot:
        written.append(plot(evaluation, out / "eval.png"))
    return written


def write_docs(evaluation: Evaluation, root: Path, *, commit: str | None = None) -> list[Path]:
    """The table in ``root``'s README.md and docs/quality.md (between the
    markers), and the per-corpus table in docs/quality.md (between its own)."""
    from fastnotebook.bench.report import current_commit, replace_between_markers

    commit = commit or current_commit(root)
    date = datetime.datetime.now(datetime.UTC).date().isoformat()
    content = (
        f"{_about(evaluation)} Measured {date} at {commit} by `fastnotebook eval`.\n\n"
        + table(evaluation, std=False)
    )
    written = []
    for path in (root / "README.md", root / "docs" / "quality.md"):
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file to write the table into")
        text = replace_between_markers(path.read_text(encoding="utf-8"), content, BEGIN, END)
        if path.parent.name == "docs":
            text = replace_between_markers(
                text, _per_corpus(evaluation), CORPORA_BEGIN, CORPORA_END
            )
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
