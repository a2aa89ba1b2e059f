"""The ``memstrata`` console script (and ``python -m memstrata``).

The command line is built with click, which comes with the ``server`` extra; without it this
prints one line naming the extra and exits with status 1, instead of a traceback.
"""

from __future__ import annotations

import sys

from memstrata.errors import MissingExtra
from memstrata.extras import require


def main() -> None:
    try:
        require("click", extra="server", what="the memstrata command")
    except MissingExtra as exc:
        sys.exit(f"Error: {exc}")  # as click prints its errors
    from memstrata.cli import main as command

    command()


if __name__ == "__main__":  # pragma: no cover
    main()
