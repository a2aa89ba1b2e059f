"""Conversation neighbours of retrieved turns: the portable SQL that finds the turns around
each one, and the walk that keeps the visible ones.

Finding them is a backend hook (:meth:`Store.conversation_near`; SQLite answers from an
in-process index, the default here from covering index ranges); checking which pass the
search's filter is the same for every backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from recallery.models import Scope
from recallery.store.queries import Passing, remembering
from recallery.store.sql import Conn, Row, chunks, marks

#: Candidates whose neighbours one statement looks up (four subqueries each; SQLite allows
#: 500 terms in a compound SELECT).
NEIGHBOUR_CHUNK = 100
#: Turns looked at per side and distance, so hidden (forgotten, disabled...) ones can be skipped.
NEIGHBOUR_REACH = 3

Near = tuple[tuple[int, ...], tuple[int, ...]]
"""Turns before (nearest first) and after (nearest first) one turn in its conversation."""


def nearest_visible(
    near: Mapping[int, Sequence[Sequence[int]]], span: int, passing: Passing
) -> dict[int, tuple[tuple[int, ...], ...]]:
    """For each turn of ``near`` (its sides of raw turns, nearest first): the visible turns
    at distance 1..``span``, one (before, after) tuple per distance, either side missing
    where it has run out."""
    visible, hidden = _visible(near, span, passing)
    out: dict[int, tuple[tuple[int, ...], ...]] = {}
    for mid, sides in near.items():
        shown: Sequence[Sequence[int]] = sides  # with nothing hidden, the nearest are visible
        if hidden:
            shown = [[n for n in side if n in visible] for side in sides]
        before, after = shown
        out[mid] = tuple([(*before[d : d + 1], *after[d : d + 1]) for d in range(span)])
    return out


def _visible(
    near: Mapping[int, Sequence[Sequence[int]]], span: int, passing: Passing
) -> tuple[set[int], bool]:
    """Which turns of ``near`` pass the filter, and whether any turn checked did not: the
    nearest ``span`` of every side first, then further out only while some side has fewer
    than ``span`` visible and turns left (hidden turns are rare; each round is one query)."""
    visible: set[int] = set()
    checked: set[int] = set()
    depth = span
    while True:
        ask = {n for sides in near.values() for side in sides for n in side[:depth]}
        ask -= checked
        if ask:  # (turns of this depth may all have been checked on another side already)
            visible |= passing(ask)
            checked |= ask
            if len(visible) == len(checked):
                return visible, False  # every side's nearest ``depth`` are visible
        if not any(
            len(side) > depth and sum(n in visible for n in side[:depth]) < span
            for sides in near.values()
            for side in sides
        ):
            return visible, len(visible) < len(checked)
        depth += span


def reach(span: int) -> int:
    """Turns looked up on each side of a turn for its visible neighbours up to ``span``."""
    return NEIGHBOUR_REACH * span


def visible_neighbours(
    near: Mapping[int, Near], span: int, passing: Passing, *, theirs: bool = False
) -> dict[int, tuple[tuple[int, ...], ...]]:
    """:func:`nearest_visible` of each turn of ``near`` from its sides' nearest
    :func:`reach`; ``theirs``: also of each of those neighbours, from the rest of ``near``,
    which then reaches twice as far (:func:`around`).

    With ``theirs``, the turns both walks look at first (the turns of ``near`` and those within
    twice ``span`` of them) are checked together: one question to ``passing`` instead of one
    per walk (on PostgreSQL one statement fewer a search); the walks ask again only about
    turns further out, where some were hidden."""
    far = reach(span)
    own = {mid: (before[:far], after[:far]) for mid, (before, after) in near.items()}
    if theirs:
        passing = remembering(passing)
        passing(
            {*near, *(n for sides in near.values() for side in sides for n in side[: 2 * span])}
        )
    found = nearest_visible(own, span, passing)
    if theirs:
        joined = {n for rings in found.values() for ring in rings for n in ring}
        found.update(nearest_visible(around(near, joined - found.keys(), far), span, passing))
    return found


def around(near: Mapping[int, Near], wanted: Iterable[int], reach: int) -> dict[int, Near]:
    """The nearest ``reach`` turns on either side of each of ``wanted`` that lies within
    ``reach`` of a turn of ``near``, from that turn's sides alone: they are one conversation
    in order, so a turn ``d`` before the centre has the rest of the centre's before side
    before it, and the nearer part of it, the centre and the centre's after side after it.
    ``near`` must reach ``2 * reach`` on either side (less only where the conversation ends)."""
    out: dict[int, Near] = {}
    want = set(wanted)
    for centre, (before, after) in near.items():
        for side, (this, other) in enumerate(((before, after), (after, before))):
            for d, turn in enumerate(this[:reach]):
                if turn in want and turn not in out:
                    onward = tuple(this[d + 1 : d + 1 + reach])
                    back = (*this[:d][::-1], centre, *other)[:reach]
                    out[turn] = (back, onward) if side else (onward, back)
    return out


def conversation_near(conn: Conn, scope: Scope, ids: Sequence[int], reach: int) -> dict[int, Near]:
    """For each raw entry of ``scope`` among ``ids``: up to ``reach`` raw turns before and
    after it in its conversation, nearest first, visible or not (the caller checks). One
    statement of covering index ranges per :data:`NEIGHBOUR_CHUNK` ids."""
    rows = conn.execute(
        "SELECT message_id, memory_id, user_id, agent_id, session_id, valid_at FROM entries "
        f"WHERE message_type = 'raw' AND message_id IN ({marks(len(ids))})",
        list(ids),
    )
    rows = [r for r in rows if r[1] in scope.memory_ids]
    found: dict[tuple[int, int], list[tuple[float, int]]] = {}
    for chunk in chunks(rows, NEIGHBOUR_CHUNK):
        sql, args = _neighbour_query(chunk, reach)
        for centre, side, valid, nid in conn.execute(sql, args):
            found.setdefault((int(centre), int(side)), []).append((float(valid), int(nid)))
    out: dict[int, Near] = {}
    for row in rows:
        mid = int(row[0])
        before = [n for _, n in sorted(found.get((mid, 0), []), reverse=True)]
        after = [n for _, n in sorted(found.get((mid, 1), []))]
        out[mid] = (tuple(before[:reach]), tuple(after[:reach]))
    return out


def _neighbour_query(rows: list[Row], reach: int) -> tuple[str, list[object]]:
    """One statement: for each (id, memory, user, agent, session, valid_at) row, the ``reach``
    nearest raw turns before (side 0) and after (side 1) it in its conversation, visible or
    not (a covering index range each; visibility is checked once for all of them)."""
    same = (
        "e.memory_id = ? AND e.session_id = ? AND e.user_id = ? AND e.agent_id = ? "
        "AND e.message_type = 'raw'"
    )
    parts: list[str] = []
    args: list[object] = []
    for n, (mid, memory_id, user, agent, session, valid) in enumerate(rows):
        for side, op, order in ((0, "<", "DESC"), (1, ">", "ASC")):
            # two index ranges: the same valid time with a nearer id, then strictly beyond
            bounds = (
                (f"e.valid_at = ? AND e.message_id {op} ?", [valid, mid]),
                (f"e.valid_at {op} ?", [valid]),
            )
            for part, (bound, bound_args) in enumerate(bounds):
                parts.append(
                    f"SELECT * FROM (SELECT ? AS centre, {side} AS side, e.valid_at, "
                    f"e.message_id FROM entries e WHERE {same} AND {bound} "
                    f"ORDER BY e.valid_at {order}, e.message_id {order} LIMIT ?) "
                    f"AS n{n}_{side}_{part}"
                )
                args.extend([mid, memory_id, session, user, agent, *bound_args, reach])
    return " UNION ALL ".join(parts), args
