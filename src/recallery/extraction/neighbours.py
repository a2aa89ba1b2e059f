"""What a candidate is compared with: near entries of its type and of its person in its memory
(:mod:`recallery.ownership`), found with the hybrid search's candidate pools (keyword and
vector) through a store Reader."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from recallery.extraction.extractor import Candidate
from recallery.extraction.reconcile import Neighbour
from recallery.models import Scope, Trust
from recallery.store.filters import EntryFilter
from recallery.store.gather import hybrid_candidates
from recallery.store.reader import Reader

#: Neighbours drawn from each search leg per candidate.
NEIGHBOURS = 10


def near(
    r: Reader, memory_id: str, user_id: str, candidate: Candidate, vector: NDArray[np.float32]
) -> tuple[list[Neighbour], list[Neighbour]]:
    """Current entries of the candidate's type near it (forgotten and rejected ones left out),
    and rejected entries of that type near it (retired versions included), of one person
    (``user_id``; "" is the unnamed group) in one memory."""
    scope = Scope.of(memory_id)
    types = frozenset({candidate.type})
    current = EntryFilter(types=types, user_id=user_id, hide_forgotten=True, hide_rejected=True)
    rejected = EntryFilter(
        types=types, user_id=user_id, trust=frozenset({Trust.REJECTED}), current_only=False
    )
    return (
        _near(r, scope, candidate.content, vector, current),
        _near(r, scope, candidate.content, vector, rejected),
    )


def _near(
    r: Reader, scope: Scope, text: str, vector: NDArray[np.float32], f: EntryFilter
) -> list[Neighbour]:
    _, cosine = hybrid_candidates(r, scope, text, vector, f, NEIGHBOURS)
    found = r.get_entries(scope, cosine)
    return [
        Neighbour(e.message_id, e.content, cosine[e.message_id], e.valid_at, e.invalid_at)
        for e in found.values()
    ]
