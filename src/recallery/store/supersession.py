"""Supersession of raw turns: the slots each turn fills (``turn_slots``) and the links from
an older turn to the later one of the same user and memory that fills a slot of it with a
new value (``supersessions``). Written with the turns, in their transaction; both go with
their entries (a trigger in SQLite, a cascading foreign key in PostgreSQL), so an erased
turn leaves no slot and no link. Links never cross memories or users: a turn is only
compared with turns of its own memory and user. What a turn's slots are is retrieval's rule
(:func:`recallery.retrieval.slots.slots`); the caller reads them and the store keeps them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from recallery.models import NewEntry
from recallery.store.sql import Conn, chunks, marks


class SupersessionReads:
    """Mixed into :class:`~.reader.Reader`, over its connection."""

    conn: Conn

    def superseding(self, ids: Iterable[int]) -> dict[int, int]:
        """For each of ``ids`` that a later turn supersedes, the latest such turn (by valid
        time, then id)."""
        out: dict[int, int] = {}
        for chunk in chunks(list(ids), 500):
            rows = self.conn.execute(
                f"SELECT s.older, s.newer FROM supersessions s "
                f"JOIN entries e ON e.message_id = s.newer "
                f"WHERE s.older IN ({marks(len(chunk))}) ORDER BY e.valid_at, s.newer",
                chunk,
            )
            out |= {int(r[0]): int(r[1]) for r in rows}
        return out


class SupersessionWrites:
    """Mixed into :class:`~.writer.Writer`, over its connection."""

    conn: Conn

    def record_slots(
        self,
        ids: Sequence[int],
        entries: Sequence[NewEntry],
        filled: Sequence[Mapping[str, str]],
    ) -> int:
        """The slots ``filled`` by new raw turns ``entries`` (written as ``ids``; one mapping
        of slot to value a turn), and a link from each earlier turn of the same memory and user
        that one of them fills with another value; how many links were written. Turns are
        taken in order, so a batch links within itself."""
        links = 0
        for message_id, e, found in zip(ids, entries, filled, strict=True):
            if not found:
                continue
            user = e.user_id or ""
            rows = self.conn.execute(
                f"SELECT s.message_id, s.slot, s.value, e.valid_at, n.valid_at "
                f"FROM turn_slots s JOIN entries e ON e.message_id = s.message_id "
                f"JOIN entries n ON n.message_id = ? "
                f"WHERE s.memory_id = ? AND s.user_id = ? AND s.slot IN ({marks(len(found))})",
                [message_id, e.memory_id, user, *found],
            )
            pairs = set()
            for other, slot, value, at, new_at in rows:
                if found[slot] != value:
                    older = (at, int(other)) < (new_at, message_id)
                    pairs.add((int(other), message_id) if older else (message_id, int(other)))
            for older_id, newer_id in sorted(pairs):
                self.conn.execute(
                    "INSERT INTO supersessions (tenant_id, older, newer, memory_id) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    [e.tenant_id, older_id, newer_id, e.memory_id],
                )
            links += len(pairs)
            for slot, value in found.items():
                self.conn.execute(
                    "INSERT INTO turn_slots (tenant_id, message_id, memory_id, user_id, slot, "
                    "value) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    [e.tenant_id, message_id, e.memory_id, user, slot, value],
                )
        return links


__all__ = ["SupersessionReads", "SupersessionWrites"]
