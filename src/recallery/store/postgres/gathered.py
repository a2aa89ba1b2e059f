"""A search's reads folded into fewer statements on PostgreSQL, where every read is a round
trip: the candidates' cosines and the raw turns' lengths of one step of the gather
(:mod:`recallery.store.gather`) in one statement instead of two."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from recallery.models import EntryType, Scope
from recallery.store.filters import EntryFilter, where_clause
from recallery.store.sql import Conn


def cosines_and_lengths(
    conn: Conn,
    scope: Scope,
    cosine_ids: Sequence[int],
    length_ids: Sequence[int],
    vector: NDArray[np.float32],
) -> tuple[dict[int, float], dict[int, int]]:
    """The cosine similarity of ``vector`` with the stored vectors of ``cosine_ids`` (those
    with one; 0 for another dimension or a zero vector, as ``cosines_of`` gives it) and the
    length in characters of the raw turns among ``length_ids``, of ``scope``, in any state."""
    wanted = frozenset(cosine_ids) | frozenset(length_ids)
    if not scope or not wanted:
        return {}, {}
    where, params = where_clause(
        scope, EntryFilter(message_ids=wanted, current_only=False), id_array=True
    )
    rows = conn.execute(
        "SELECT e.message_id, e.embedding IS NOT NULL, "
        "CASE WHEN vector_dims(e.embedding) = ? THEN e.embedding <=> ? END, "
        "CASE WHEN e.message_type = ? AND e.message_id = ANY(?::bigint[]) "
        f"THEN length(e.content) END FROM entries e WHERE {where}",
        [
            int(vector.shape[0]),
            np.ascontiguousarray(vector, np.float32),
            EntryType.RAW.value,
            list(length_ids),
            *params,
        ],
    )
    measure = frozenset(cosine_ids)
    cosines = {
        int(i): 0.0 if d is None or math.isnan(d) else 1.0 - float(d)
        for i, has, d, _ in rows
        if has and int(i) in measure
    }
    lengths = {int(i): int(n) for i, _, _, n in rows if n is not None}
    return cosines, lengths


__all__ = ["cosines_and_lengths"]
