"""Supersession of raw turns: the slots each turn fills (``turn_slots``) and the links from
an older turn to the later one of the same user and memory that fills a slot of it with a
new value (``supersessions``). Written with the turns, in their transaction; both go with
their entries (a trigger in SQLite, a cascading foreign key in PostgreSQL), so an erased
turn leaves no slot and no link. Links never cross memories or users: a turn is only
compared with turns of its own memory and user. What a turn's slots are is the text's rule
(:func:`recallery.text.slots.slots`); a writer's caller reads them and the store keeps them.

:func:`reslot` gives turns already stored the slots of the languages that gained a table since
they were written (a migration of either store runs it): before, only English turns had slots."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from recallery.models import NewEntry
from recallery.store.sql import Conn, Row, chunks, marks
from recallery.text.cues import language
from recallery.text.slots import slots, user_statement

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


def reslot(conn: Conn) -> int:
    """The slots of every stored raw turn whose user input is not English (English turns
    have had theirs since they were written, by the same patterns), and the links they make
    with the turns of their memory and user; how many links. Turns are read in id order in
    batches; a turn that already has slots is left as it is. Run inside the caller's
    transaction (a migration's), so a failure leaves the store as it was."""
    links = 0
    for rows in _raw_turns(conn, slotted=False):
        links += _slotted(conn, [r for r in rows if language(user_statement(str(r[4]))) != "en"])
    return links


#: The languages whose slot patterns changed since turns were stored with slots: a Japanese
#: clause after a te-form and a Korean one after -고 now go on with the subject before them
#: (姉は大阪に住んでいて、銀行で働いています is the sister's job, not the speaker's), and in
#: German, French, Spanish, Russian and Arabic a value ends before "with" (mit, avec, con, с,
#: مع): "Ich wohne in Berlin mit meiner Familie" lives in Berlin, not somewhere new.
RESLOT_AGAIN = frozenset({"ja", "ko", "de", "fr", "es", "ru", "ar"})


def reslot_again(conn: Conn, languages: frozenset[str] = RESLOT_AGAIN) -> int:
    """The slots and links of every stored raw turn in ``languages`` that has slots made
    again by today's patterns (a turn read wrong loses the slot, and its links with it); how
    many links they make. Run inside the caller's transaction, as :func:`reslot`."""
    links = 0
    for rows in _raw_turns(conn, slotted=True):
        again = [r for r in rows if language(user_statement(str(r[4]))) in languages]
        if again:
            ids = [int(r[0]) for r in again]
            conn.execute(f"DELETE FROM turn_slots WHERE message_id IN ({marks(len(ids))})", ids)
            conn.execute(
                f"DELETE FROM supersessions WHERE older IN ({marks(len(ids))}) "
                f"OR newer IN ({marks(len(ids))})",
                ids * 2,
            )
            links += _slotted(conn, again)
    return links


def _raw_turns(conn: Conn, *, slotted: bool) -> Iterator[list[Row]]:
    """Stored raw turns (id, tenant, memory, user, content) in id order, in batches of
    :data:`RESLOT_BATCH`: those with slots, or those without."""
    last = -1
    while True:
        rows = conn.execute(
            "SELECT e.message_id, e.tenant_id, e.memory_id, e.user_id, e.content FROM entries e "
            f"WHERE e.message_type = 'raw' AND e.message_id > ? AND {'' if slotted else 'NOT '}"
            "EXISTS (SELECT 1 FROM turn_slots s WHERE s.message_id = e.message_id) "
            "ORDER BY e.message_id LIMIT ?",
            [last, RESLOT_BATCH],
        )
        if not rows:
            return
        last = int(rows[-1][0])
        yield rows


def _slotted(conn: Conn, rows: list[Row]) -> int:
    """The slots of the turns ``rows`` and the links they make; how many links."""
    links = 0
    for message_id, tenant, memory, user, content in rows:
        found = slots(str(content))
        if found:
            links += _record(conn, tenant, memory, user or "", int(message_id), found)
    return links


__all__ = [
    "RESLOT_AGAIN",
    "RESLOT_BATCH",
    "SupersessionReads",
    "SupersessionWrites",
    "reslot",
    "reslot_again",
]
