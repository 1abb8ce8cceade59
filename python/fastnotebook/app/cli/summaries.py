"""The final summary tables of ``ingest`` and ``embed``, and the list of
sources (search hits: ``hits``)."""

from __future__ import annotations

from collections.abc import Sequence

from fastnotebook.app.cli.hits import counted
from fastnotebook.app.pipeline import EmbedReport, IngestReport
from fastnotebook.app.pipeline.progress import format_rate, table
from fastnotebook.app.pipeline.sources import SourceInfo
from fastnotebook.app.pipeline.state import LABELS

__all__ = ["embed_summary", "ingest_summary", "sources_table"]

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
    if report.skipped:
        extra.append(f"{len(report.skipped):,} files skipped (not text, or not a file to read):")
        extra += [f"  {path}: {why}" for path, why in report.skipped[:_FAILURES_SHOWN]]
        if len(report.skipped) > _FAILURES_SHOWN:
            extra.append(f"  ... and {len(report.skipped) - _FAILURES_SHOWN} more")
    if report.decoded:
        extra.append(
            f"{len(report.decoded):,} files not UTF-8, decoded (check their text; "
            "--encoding names the encoding):"
        )
        extra += [f"  {path}: {why}" for path, why in report.decoded[:_FAILURES_SHOWN]]
        if len(report.decoded) > _FAILURES_SHOWN:
            extra.append(f"  ... and {len(report.decoded) - _FAILURES_SHOWN} more")
    if report.cleaned:
        removed = sum(n for _, n in report.cleaned)
        extra.append(f"{removed:,} NUL characters removed from {len(report.cleaned):,} files")
    if report.removed:
        extra.append(f"{len(report.removed):,} sources removed (files gone):")
        extra += [f"  {record}: {path}" for record, path in report.removed[:_FAILURES_SHOWN]]
        if len(report.removed) > _FAILURES_SHOWN:
            extra.append(f"  ... and {len(report.removed) - _FAILURES_SHOWN} more")
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
    p = report.provider
    if p.requests and (p.concurrency > 1 or p.throttled or p.retried or p.split):
        limit = f"concurrency {p.concurrency}"
        if p.lowest_limit < p.concurrency:
            limit += f" (lowered to {p.lowest_limit} while throttled)"
        line = f"provider: {limit}, {counted(p.requests, 'request')}"
        for n, what in ((p.throttled, "throttled"), (p.retried, "retried"), (p.split, "split")):
            if n:
                line += f", {n} {what}"
        if p.batch_limit:
            line += f"; batches of at most {p.batch_limit} chunks"
        lines.append(line)
    if report.interrupted:
        lines.append("interrupted: run `fastnotebook embed` again to finish")
    lines += _failures(report.failures)
    return "\n".join(lines)


def sources_table(sources: Sequence[SourceInfo]) -> str:
    """``fastnotebook sources list``: one row per source."""
    if not sources:
        return "no sources"

    def state(source: SourceInfo) -> str:
        notes = []
        if not source.readable:
            notes.append("unreadable (NUL in text)")
        if source.exists is False:
            notes.append("file gone")
        elif source.changed:
            notes.append("changed")  # on disk, since it was ingested
        if notes in ([], ["changed"]):
            notes.append("embedded" if source.embedded else "not embedded")
        return ", ".join(notes)

    rows: list[list[object]] = [[s.id, s.chunks, f"{s.size / 1e3:.1f}", state(s)] for s in sources]
    # The path (or title) last and left-aligned: the table aligns numbers.
    lines = table(["id", "chunks", "kB", "state"], rows).splitlines()
    width = max(len(line) for line in lines)
    where = ["path", "-" * 4] + [s.path or f"({s.title or 'untitled'})" for s in sources]
    embedded = sum(s.embedded for s in sources)
    changed = sum(bool(s.changed) and s.exists is not False for s in sources)
    total = f"{counted(len(sources), 'source')}, {embedded} embedded"
    if changed:
        total += f", {changed} changed on disk since ingested (`fastnotebook ingest` updates them)"
    return "\n".join(
        [f"{line.ljust(width)}  {path}" for line, path in zip(lines, where, strict=True)] + [total]
    )
