"""``fastnotebook embed --engine ray``: the bulk embedding job as a Ray Data
pipeline, on a local Ray or a cluster (``pip install 'fastnotebook[ray]'``).

The job is the local pipeline's (``fastnotebook.app.pipeline.stages``), with
its stages spread over a Ray cluster::

    read -> hash + chunk (Rust, map_batches tasks) -> model (actor pool) -> sink

- read: the due records of the database (planned by ``state.plan`` on the
  driver, so unchanged records never reach Ray), or the files of a folder or
  any pyarrow filesystem URI (``s3://``, ``gs://``, ``file://``...), read by
  Ray tasks; a file whose bytes hash as in the Parquet output already is
  skipped on the driver, before anything is scheduled;
- hash + chunk: ``map_batches`` tasks on Arrow batches, the same chunking
  (configuration included) as the local pipeline; the Rust core chunks with
  the GIL released;
- model: ``concurrency`` actors, each building the configured embedding model
  once (``model_manager``'s configuration, passed from the driver), with
  ``num_gpus`` each; a killed actor is restarted and its batch retried by Ray
  (``max_restarts``, ``max_task_retries``);
- sink: (a) the database, written by the driver alone with the local
  pipeline's transactions (``writer.prepare`` and ``execute``: a record's
  chunks, vectors and ``embedding_state`` row in one transaction, as many
  in flight as the local run keeps), so a later local ``embed`` sees the
  records as done and the stored rows equal a local run's; or
  (b) Parquet files (one row per chunk: text, vector, hashes, model) on any
  pyarrow filesystem, also written by the driver.

Records are collected on the driver until every chunk is back, so a record
is written whole or not at all, whatever Ray retried. The database source is
processed in windows of ``window_bytes`` of text, which bounds the driver's
memory. Ray is imported only here, and only when the job runs.

Modules: ``cluster`` (options, the cluster's stages, collecting records),
``database`` (``embed_ray``) and ``parquet`` (``embed_files_to_parquet``).
"""

from fastnotebook.app.pipeline.ray_engine.cluster import (
    FAULT_ENV,
    INSTALL_HINT,
    RayOptions,
    require_ray,
)
from fastnotebook.app.pipeline.ray_engine.database import embed_ray
from fastnotebook.app.pipeline.ray_engine.parquet import ParquetReport, embed_files_to_parquet

__all__ = [
    "FAULT_ENV",
    "INSTALL_HINT",
    "ParquetReport",
    "RayOptions",
    "embed_files_to_parquet",
    "embed_ray",
    "require_ray",
]
