"""``python -m recallery.cli``: the command line, as the console script runs it."""

from recallery.cli import main

if __name__ == "__main__":  # pragma: no cover
    main()
