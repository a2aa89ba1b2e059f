"""The ``recallery`` console script (and ``python -m recallery``).

The command line is built with click, which comes with the ``server`` extra; without it this
prints one line naming the extra and exits with status 1, instead of a traceback.
"""

from __future__ import annotations

import sys

from recallery.errors import MissingExtra
from recallery.extras import require


def main() -> None:
    try:
        require("click", extra="server", what="the recallery command")
    except MissingExtra as exc:
        sys.exit(f"Error: {exc}")  # as click prints its errors
    from recallery.cli import main as command

    command()


if __name__ == "__main__":  # pragma: no cover
    main()
