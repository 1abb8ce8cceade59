"""``python -m fastnotebook``: the command line (``fastnotebook.cli``)."""

from fastnotebook.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
