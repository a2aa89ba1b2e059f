"""What the store holds, counted for an operator (``/metrics``): entries by state and type,
tombstones, jobs by state and outcome, memories. Counts only, never a name, an id or text,
and only for an administrator."""

from __future__ import annotations

from dataclasses import dataclass

from recallery.errors import Forbidden
from recallery.models import Principal
from recallery.store.base import Store

#: An entry's one state, the first that holds in this order (retrieval returns ``current``).
ENTRY_STATE = """
    CASE WHEN retired_at IS NOT NULL THEN 'retired'
         WHEN forget_at IS NOT NULL THEN 'forgotten'
         WHEN trust = 'rejected' THEN 'rejected'
         WHEN status = 0 THEN 'disabled'
         ELSE 'current' END
"""


@dataclass(frozen=True)
class StoreCounts:
    #: (state, message_type) -> entries.
    entries: dict[tuple[str, str], int]
    #: (state, outcome or "") -> jobs.
    jobs: dict[tuple[str, str], int]
    tombstones: int
    memories: int
    #: Bytes the memories' entries take, as their budgets count them.
    stored_bytes: int = 0


class StatsService:
    def __init__(self, store: Store) -> None:
        self.store = store

    def store_counts(self, actor: Principal) -> StoreCounts:
        """Entries, jobs, tombstones and memories, counted over the whole store (one scan
        of the entries table: at a million entries a scrape reads them all)."""
        if not actor.is_admin:
            raise Forbidden("Only an administrator may read the store's counts.")
        with self.store.read() as r:
            entries = r.conn.execute(
                f"SELECT {ENTRY_STATE}, message_type, count(*) FROM entries GROUP BY 1, 2"
            )
            jobs = r.conn.execute("SELECT state, outcome, count(*) FROM jobs GROUP BY 1, 2")
            tombstones = r.conn.execute("SELECT count(*) FROM tombstones")[0][0]
            memories, stored = r.conn.execute(
                "SELECT count(*), coalesce(sum(used_bytes), 0) FROM memories"
            )[0]
        return StoreCounts(
            entries={(str(s), str(t)): int(n) for s, t, n in entries},
            jobs={(str(s), str(o or "")): int(n) for s, o, n in jobs},
            tombstones=int(tombstones),
            memories=int(memories),
            stored_bytes=int(stored),
        )


__all__ = ["StatsService", "StoreCounts"]
