"""``python -m fastnotebook``: the command line (``fastnotebook.app.cli``)."""

from fastnotebook.app.cli.launch import run

if __name__ == "__main__":
    run()
