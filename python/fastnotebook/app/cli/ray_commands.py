"""``fastnotebook embed --engine ray``: the options of the Ray engine and the
command's two paths (the database, or files to Parquet). Ray itself is
imported only when the engine runs (``fastnotebook.app.pipeline.ray_engine``)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from fastnotebook.app.cli.database import run_db
from fastnotebook.app.cli.errors import EXIT_FAILED, CliError, positive_int
from fastnotebook.app.cli.options import use_data_dir

if TYPE_CHECKING:
    from fastnotebook.app.pipeline.ray_engine import RayOptions
    from fastnotebook.app.pipeline.state import Kind

__all__ = ["add_ray_arguments", "cmd_embed_ray"]


def _positive_float(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {raw!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def add_ray_arguments(embed_cmd: argparse.ArgumentParser) -> None:
    """``--engine`` and the Ray engine's options on ``embed``."""
    group = embed_cmd.add_argument_group(
        "Ray engine", "run the job on a Ray cluster (pip install 'fastnotebook[ray]')"
    )
    group.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="local: this process (default); ray: a Ray Data job",
    )
    group.add_argument(
        "--address",
        default=None,
        help="the Ray cluster: local (start one here, the default), auto (this machine's "
        "cluster), ray://HOST:10001 (Ray Client) or HOST:6379 (the head)",
    )
    group.add_argument("--actors", type=positive_int, default=1, help="model actors (default 1)")
    group.add_argument(
        "--gpus", type=_positive_float, default=0.0, help="GPUs per model actor (default 0)"
    )
    group.add_argument(
        "--actor-cpus", type=_positive_float, default=1.0, help="CPUs per model actor (default 1)"
    )
    group.add_argument(
        "--task-cpus",
        type=_positive_float,
        default=1.0,
        help="CPUs per read and chunk task (default 1)",
    )
    group.add_argument(
        "--input",
        metavar="PATH_OR_URI",
        help="embed these files (a folder or a pyarrow filesystem URI: s3://, gs://, file://) "
        "instead of the database's records; needs --parquet",
    )
    group.add_argument(
        "--parquet",
        metavar="PATH_OR_URI",
        help="write chunks, vectors and hashes as Parquet files here instead of the database",
    )


def _ray_options(args: argparse.Namespace) -> RayOptions:
    from fastnotebook.app.pipeline.ray_engine import RayOptions

    return RayOptions(
        address=args.address,
        concurrency=args.actors,
        num_gpus=args.gpus,
        num_cpus=args.actor_cpus,
        task_cpus=args.task_cpus,
        batch_size=args.batch_size,
    )


def cmd_embed_ray(args: argparse.Namespace, kinds: tuple[Kind, ...]) -> int:
    """``embed --engine ray``: files to Parquet (``--input``/``--parquet``),
    or the database's due records (of ``kinds``) to the database or to Parquet."""
    from fastnotebook.app.cli.summaries import embed_summary
    from fastnotebook.app.pipeline import EmbedOptions
    from fastnotebook.app.pipeline.ray_engine import (
        embed_files_to_parquet,
        embed_ray,
        require_ray,
    )

    require_ray()
    ray_options = _ray_options(args)
    if args.input:
        if not args.parquet:
            raise CliError(
                "--input needs --parquet (to embed files into the database, "
                "`fastnotebook ingest` them, then `fastnotebook embed --engine ray`)",
                code=2,
            )
        report = embed_files_to_parquet(args.input, args.parquet, ray_options)
        if not args.quiet:
            print(
                f"{report.embedded} files embedded ({report.chunks} chunks), "
                f"{report.unchanged} unchanged, {len(report.failures)} failed, "
                f"{len(report.written)} Parquet files written to {report.output} "
                f"in {report.seconds:.1f} s"
            )
        for what, why in report.failures:
            print(f"failed: {what}: {why}", file=sys.stderr)
        return EXIT_FAILED if report.failures else 0
    if args.parquet:
        raise CliError(
            "--parquet needs --input (the files to embed); the database's records "
            "go to the database",
            code=2,
        )
    options = EmbedOptions(
        kinds=kinds,
        rebuild=args.rebuild,
        batch_size=args.batch_size,
        vector_index=args.vector_index,
    )

    async def work(db: object) -> int:
        report = await embed_ray(options, ray_options, progress=not args.quiet)
        if not args.quiet:
            print(embed_summary(report))
        else:
            for what, why in report.failures:
                print(f"failed: {what}: {why}", file=sys.stderr)
        return EXIT_FAILED if report.failures else 0

    use_data_dir(args)
    return run_db(work, create=False)
