"""Supersession of raw turns: the slots each turn fills (``turn_slots``) and the links from
an older turn to the later one of the same user and memory that fills a slot of it with a
new value (``supersessions``). Written with the turns, in their transaction; both go with
their entries (a trigger in SQLite, a cascading foreign key in PostgreSQL), so an erased
turn leaves no slot and no link. Links never cross memories or users: a turn is only
compared with turns of its own memory and user. What a turn's slots are is the text's rule
(:func:`recallery.text.slots.slots`); a writer's caller reads them and the store keeps them.

:func:`reslot` gives turns already stored the slots today's patterns read (a migration of either
store runs it whenever the patterns change)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence

from recallery.models import NewEntry
from recallery.store.sql import Conn, Row, chunks, marks
from recallery.text.slots import slots

#: Raw turns read at a time by :func:`reslot`.
RESLOT_BATCH = 2000


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
            if found:
                links += _record(
                    self.conn, e.tenant_id, e.memory_id, e.user_id or "", message_id, found
                )
        return links


def _record(
    conn: Conn, tenant: str, memory: str, user: str, message_id: int, found: Mapping[str, str]
) -> int:
    """One turn's slots, and a link between it and each turn of its memory and user that
    fills one of them with another value (the older one to the newer, by valid time then
    id); how many links."""
    rows = conn.execute(
        f"SELECT s.message_id, s.slot, s.value, e.valid_at, n.valid_at "
        f"FROM turn_slots s JOIN entries e ON e.message_id = s.message_id "
        f"JOIN entries n ON n.message_id = ? "
        f"WHERE s.memory_id = ? AND s.user_id = ? AND s.slot IN ({marks(len(found))})",
        [message_id, memory, user, *found],
    )
    pairs = set()
    for other, slot, value, at, new_at in rows:
        if found[slot] != value:
            older = (at, int(other)) < (new_at, message_id)
            pairs.add((int(other), message_id) if older else (message_id, int(other)))
    if pairs:
        conn.executemany(
            "INSERT INTO supersessions (tenant_id, older, newer, memory_id) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [[tenant, older_id, newer_id, memory] for older_id, newer_id in sorted(pairs)],
        )
    conn.executemany(
        "INSERT INTO turn_slots (tenant_id, message_id, memory_id, user_id, slot, "
        "value) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [[tenant, message_id, memory, user, slot, value] for slot, value in found.items()],
    )
    return len(pairs)


def read_again_later(
    migrations: Sequence[tuple[int, str, object]], done: Collection[int], again: object
) -> frozenset[int]:
    """The pending migrations whose script is ``again`` (a backend's :func:`reslot`) with a
    later pending one that runs it too: recorded without running, as that one reads every
    turn with today's patterns (a store three slot changes behind reads its turns once)."""
    pending = [v for v, _, script in migrations if script is again and v not in done]
    return frozenset(pending[:-1])


def reslot(conn: Conn) -> int:
    """The slots and links of every stored raw turn whose user input today's patterns read
    otherwise than its stored slots say (none stored included), made again; how many links
    they make. A turn read as before is left as it is, with its links; a turn read anew
    loses its slots and links and gets today's, linked with the turns of its memory and user
    as writing it today would. Turns are read in id order in batches. Run inside the
    caller's transaction (a migration's), so a failure leaves the store as it was. Each
    migration that changed the patterns runs it (the last of those a store lacks only:
    :func:`read_again_later`): before, only English turns had slots; then a joined Japanese
    or Korean clause kept its subject and a value ended at "with"; then time words opened a
    statement in every language, German put its verb second, and a short Latin-script
    sentence was read in the language its words vote for; then English read what one has
    been doing, started doing or was hired for, and a value ended before for how long."""
    links = 0
    for rows in _raw_turns(conn):
        ids = [int(r[0]) for r in rows]
        held: dict[int, dict[str, str]] = {}
        stored = conn.execute(
            f"SELECT message_id, slot, value FROM turn_slots "
            f"WHERE message_id IN ({marks(len(ids))})",
            ids,
        )
        for message_id, slot, value in stored:
            held.setdefault(int(message_id), {})[str(slot)] = str(value)
        read = {int(r[0]): slots(str(r[4])) for r in rows}
        again = [r for r in rows if read[int(r[0])] != held.get(int(r[0]), {})]
        if again:
            ids = [int(r[0]) for r in again]
            conn.execute(f"DELETE FROM turn_slots WHERE message_id IN ({marks(len(ids))})", ids)
            conn.execute(
                f"DELETE FROM supersessions WHERE older IN ({marks(len(ids))}) "
                f"OR newer IN ({marks(len(ids))})",
                ids * 2,
            )
            for message_id, tenant, memory, user, _ in again:
                if found := read[int(message_id)]:
                    links += _record(conn, tenant, memory, user or "", int(message_id), found)
    return links


def _raw_turns(conn: Conn) -> Iterator[list[Row]]:
    """Stored raw turns (id, tenant, memory, user, content) in id order, in batches of
    :data:`RESLOT_BATCH`."""
    last = -1
    while True:
        rows = conn.execute(
            "SELECT e.message_id, e.tenant_id, e.memory_id, e.user_id, e.content FROM entries e "
            "WHERE e.message_type = 'raw' AND e.message_id > ? ORDER BY e.message_id LIMIT ?",
            [last, RESLOT_BATCH],
        )
        if not rows:
            return
        last = int(rows[-1][0])
        yield rows


__all__ = [
    "RESLOT_BATCH",
    "SupersessionReads",
    "SupersessionWrites",
    "reslot",
]
