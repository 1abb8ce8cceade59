"""``fastnotebook embed --engine ray``: the bulk embedding job on Ray
(``pip install 'fastnotebook[ray]'``); see ``cluster`` for how it runs."""

from fastnotebook.app.pipeline.ray_engine.cluster import (
    FAULT_ENV,
    INSTALL_HINT,
    ParquetReport,
    RayOptions,
    embed_files_to_parquet,
    embed_ray,
    require_ray,
)

__all__ = [
    "FAULT_ENV",
    "INSTALL_HINT",
    "ParquetReport",
    "RayOptions",
    "embed_files_to_parquet",
    "embed_ray",
    "require_ray",
]
