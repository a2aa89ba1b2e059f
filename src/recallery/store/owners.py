"""Whose entries are, as the store's own guard of invariant 7: a version link (``supersedes``,
``superseded_by``) joins two entries of one person of one memory
(:mod:`recallery.ownership`), whichever path writes it. Reads ids, memories and users only,
never content."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from recallery.ownership import Owned, check_link
from recallery.store.sql import Conn, chunks, marks

#: Ids per ``IN (...)`` list.
CHUNK = 500


class Owner(NamedTuple):
    """The memory and end user an entry belongs to."""

    memory_id: str
    user_id: str


def owners(conn: Conn, ids: Sequence[int]) -> dict[int, Owner]:
    """The memory and user of each of ``ids`` that exists."""
    found: dict[int, Owner] = {}
    for chunk in chunks(list(ids), CHUNK):
        rows = conn.execute(
            "SELECT message_id, memory_id, user_id FROM entries "
            f"WHERE message_id IN ({marks(len(chunk))})",
            chunk,
        )
        found.update({int(r[0]): Owner(str(r[1]), str(r[2] or "")) for r in rows})
    return found


def check_links(conn: Conn, links: Sequence[tuple[int, Owned]]) -> None:
    """Refuse (``Conflict``, naming both users) any of ``links`` (the linked-to id, and the
    entry or new entry linking to it) that would join two people's entries."""
    if not links:
        return
    found = owners(conn, sorted({i for i, _ in links}))
    for other_id, entry in links:
        other = found.get(other_id)
        if other is not None:
            check_link(other, entry)


def check_relinks(conn: Conn, ids: Sequence[int], changes: Mapping[str, object]) -> None:
    """Refuse an update that points ``ids`` at another person's entry."""
    for link in ("supersedes", "superseded_by"):
        other = changes.get(link)
        if other is not None:
            mine = owners(conn, ids).values()
            check_links(conn, [(int(str(other)), o) for o in mine])


def crossed_links(conn: Conn, memory_ids: Sequence[str]) -> list[tuple[int, int]]:
    """Every version link of ``memory_ids`` between two people's entries, as (older, newer)
    ids, whichever side holds it (``superseded_by`` on the older, ``supersedes`` on the
    newer), ascending."""
    if not memory_ids:
        return []
    ids = marks(len(memory_ids))
    rows = conn.execute(
        "SELECT o.message_id, n.message_id FROM entries o JOIN entries n "
        "ON n.message_id = o.superseded_by OR n.supersedes = o.message_id "
        f"WHERE o.memory_id IN ({ids}) "
        "AND (n.user_id <> o.user_id OR n.memory_id <> o.memory_id)",
        list(memory_ids),
    )
    return sorted({(int(r[0]), int(r[1])) for r in rows})


__all__ = ["Owner", "check_links", "check_relinks", "crossed_links", "owners"]
