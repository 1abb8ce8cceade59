"""``python -m fastnotebook``: the command line (``fastnotebook.app.cli``)."""

from fastnotebook.app.cli import main, run

__all__ = ["main", "run"]

if __name__ == "__main__":
    run()
