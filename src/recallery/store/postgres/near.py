"""A raw turn's neighbours in its conversation, for every turn asked, in one statement."""

from __future__ import annotations

from collections.abc import Sequence

from recallery.models import Scope
from recallery.store.neighbours import Near
from recallery.store.sql import Conn

# Before (side 0) and after (side 1) each raw turn among the ids, nearest first: a range of
# entries_conversation (memory, session, user, agent, valid_at, message_id, and the type it
# includes, so no heap page is read) each. A turn without neighbours still comes back once
# (side NULL). The two CTEs are also a part of a search's second step (:mod:`.gathered`).
NEAR_CTES = """
c AS (
    SELECT e.message_id, e.memory_id, e.session_id, e.user_id, e.agent_id, e.valid_at
    FROM entries e
    WHERE e.message_id = ANY(?::bigint[]) AND e.memory_id = ANY(?::text[])
      AND e.message_type = 'raw'
), near AS MATERIALIZED (
    SELECT c.message_id AS centre, 0 AS side, b.message_id, b.k
    FROM c CROSS JOIN LATERAL (
        SELECT n.message_id,
               row_number() OVER (ORDER BY n.valid_at DESC, n.message_id DESC) AS k
        FROM (
            SELECT n.valid_at, n.message_id FROM entries n
            WHERE n.memory_id = c.memory_id AND n.session_id = c.session_id
              AND n.user_id = c.user_id AND n.agent_id = c.agent_id
              AND n.message_type = 'raw'
              AND (n.valid_at, n.message_id) < (c.valid_at, c.message_id)
            ORDER BY n.valid_at DESC, n.message_id DESC LIMIT ?) n) b
    UNION ALL
    SELECT c.message_id, 1, a.message_id, a.k
    FROM c CROSS JOIN LATERAL (
        SELECT n.message_id, row_number() OVER (ORDER BY n.valid_at, n.message_id) AS k
        FROM (
            SELECT n.valid_at, n.message_id FROM entries n
            WHERE n.memory_id = c.memory_id AND n.session_id = c.session_id
              AND n.user_id = c.user_id AND n.agent_id = c.agent_id
              AND n.message_type = 'raw'
              AND (n.valid_at, n.message_id) > (c.valid_at, c.message_id)
            ORDER BY n.valid_at, n.message_id LIMIT ?) n) a
)"""
_NEAR = f"""
WITH {NEAR_CTES}
SELECT c.message_id, near.side, near.message_id
FROM c LEFT JOIN near ON near.centre = c.message_id
ORDER BY c.message_id, near.side, near.k
"""


def conversation_near(conn: Conn, scope: Scope, ids: Sequence[int], reach: int) -> dict[int, Near]:
    """Each raw turn's nearest ``reach`` turns on either side, by a LATERAL range of the
    conversation index each (the portable UNION ALL of four ranges per turn took PostgreSQL
    longer to plan than to run)."""
    rows = conn.execute(_NEAR, [list(ids), sorted(scope.memory_ids), reach, reach])
    sides: dict[int, tuple[list[int], list[int]]] = {}
    for centre, side, neighbour in rows:
        found = sides.setdefault(int(centre), ([], []))
        if side is not None:
            found[int(side)].append(int(neighbour))
    return {mid: (tuple(before), tuple(after)) for mid, (before, after) in sides.items()}


__all__ = ["NEAR_CTES", "conversation_near"]
