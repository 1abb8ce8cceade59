"""The fastnotebook command line: ``run`` is the ``fastnotebook`` program
(``fastnotebook.app.cli.launch``), ``main`` runs one command and
``build_parser`` describes them all (``fastnotebook.app.cli.dispatch``).

Its names are imported on first use (``fastnotebook._lazy``): a search that
the process holding the database answers (``search_route``) imports only
what it prints with.
"""

from fastnotebook._lazy import lazy_exports

TYPE_CHECKING = False  # as typing's, without importing it

if TYPE_CHECKING:
    from fastnotebook.app.cli.dispatch import build_parser, main
    from fastnotebook.app.cli.launch import exit_now, run

__all__ = ["build_parser", "exit_now", "main", "run"]

if not TYPE_CHECKING:  # checkers see the imports above, not a __getattr__
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "build_parser": f"{__name__}.dispatch",
            "main": f"{__name__}.dispatch",
            "exit_now": f"{__name__}.launch",
            "run": f"{__name__}.launch",
        },
    )
