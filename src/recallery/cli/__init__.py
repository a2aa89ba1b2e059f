"""The ``recallery`` command: serve the API (with the background worker), manage users, keys
and teams, and move memories in and out as JSONL. Everything goes through the engine.

Commands other than ``serve`` work on the data directory directly, as its administrator
(the first admin user, created on an empty directory): whoever can run them can read the
files anyway. Each area's commands live in a module of their own and join :data:`main`,
the group, when this package is imported.
"""

from __future__ import annotations

from recallery.cli import accounts, backups, memories, serve, subjects  # noqa: F401  (they add commands)
from recallery.cli.common import main

__all__ = ["main"]
