"""The final summary tables of ``ingest`` and ``embed``, and search hits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastnotebook.app.pipeline import EmbedReport, IngestReport
from fastnotebook.app.pipeline.progress import format_rate, table
from fastnotebook.app.pipeline.state import LABELS

__all__ = ["embed_summary", "hits_text", "ingest_summary"]

_FAILURES_SHOWN = 20


def _failures(failures: Sequence[tuple[str, str]]) -> list[str]:
    if not failures:
        return []
    lines = [f"failed ({len(failures)}):"]
    lines += [f"  {what}: {why}" for what, why in failures[:_FAILURES_SHOWN]]
    if len(failures) > _FAILURES_SHOWN:
        lines.append(f"  ... and {len(failures) - _FAILURES_SHOWN} more")
    return lines


def ingest_summary(report: IngestReport) -> str:
    rows: list[list[object]] = [
        [
            "files",
            report.files,
            report.created,
            report.updated,
            report.unchanged,
            len(report.failures),
            f"{report.bytes / 1e6:.2f}",
        ],
    ]
    lines = [table(["ingest", "found", "new", "updated", "unchanged", "failed", "MB"], rows)]
    extra = []
    if report.unsupported:
        extra.append(f"{report.unsupported:,} files skipped (type not supported)")
    extra += [f"not found: {path}" for path in report.missing]
    lines += extra
    lines.append(f"{report.seconds:.2f} s, {format_rate(report.bytes, report.seconds)}")
    lines += _failures(report.failures)
    return "\n".join(lines)


def embed_summary(report: EmbedReport) -> str:
    rows: list[list[object]] = [
        [
            LABELS[kind],
            c.due + c.unchanged,
            c.embedded,
            c.unchanged,
            c.failed,
            c.chunks,
            f"{c.bytes / 1e6:.2f}",
        ]
        for kind, c in report.counts.items()
    ]
    total_bytes = sum(c.bytes for c in report.counts.values())
    lines = [
        table(["embed", "records", "embedded", "unchanged", "failed", "chunks", "MB"], rows),
        f"model {report.model}, chunks {report.chunking}",
        f"{report.seconds:.2f} s, {format_rate(total_bytes, report.seconds)}; "
        + report.clock.breakdown(report.seconds),
    ]
    if report.interrupted:
        lines.append("interrupted: run `fastnotebook embed` again to finish")
    lines += _failures(report.failures)
    return "\n".join(lines)


def _snippet(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def hits_text(hits: Sequence[dict[str, Any]], paths: dict[str, str]) -> str:
    if not hits:
        return "no hits"
    lines = []
    for rank, hit in enumerate(hits, 1):
        where = paths.get(str(hit["parent_id"])) or str(hit["id"])
        lines.append(
            f"{rank:>2}. {hit['similarity']:.3f}  {hit.get('title') or '(untitled)'}  [{where}]"
        )
        if hit.get("matches"):
            lines.append(f"      {_snippet(str(hit['matches'][0]))}")
    return "\n".join(lines)
