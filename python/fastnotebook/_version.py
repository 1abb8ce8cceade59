"""The installed distribution's version (``fastnotebook.__version__``),
read when it is first asked for: the metadata lookup is most of what
importing the package would otherwise cost."""

from importlib import metadata

__all__ = ["__version__"]

__version__ = metadata.version("fastnotebook")  # Cargo.toml's, through maturin
