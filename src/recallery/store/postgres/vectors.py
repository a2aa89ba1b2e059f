"""A stored vector's cosine with the query's, as every PostgreSQL read that measures one writes
it: the SQL expression and what its value means. Declared once so the vector leg's steps and
the keyword legs that read cosines beside them agree with the reads apart."""

from __future__ import annotations

import math

#: The cosine distance of a row's vector (table alias ``e``) from the query's (``?`` the
#: query's dimension, ``?`` its vector): NULL for a vector of another dimension.
DISTANCE = "CASE WHEN vector_dims(e.embedding) = ? THEN e.embedding <=> ? END"


def cosine_of(distance: float | None) -> float:
    """The cosine similarity of a :data:`DISTANCE`: another dimension (NULL) or a zero vector
    (NaN) is 0, as a dot product gives it."""
    return 0.0 if distance is None or math.isnan(distance) else 1.0 - float(distance)


__all__ = ["DISTANCE", "cosine_of"]
