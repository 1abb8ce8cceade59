"""``python -m fastnotebook``: the command line (``fastnotebook.app.cli``)."""

from fastnotebook.app.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
