"""A search's legs as the reader asks the backend for them: keyword matches, conversation
windows, vector neighbours and the candidates' cosines, each over the scope and checked
against the search's filter the way the backend offers. Mixed into the store's
:class:`~.reader.Reader` beside the entry reads, as accounts and jobs are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from recallery.models import Scope
from recallery.store.filters import EntryFilter
from recallery.store.queries import Passing
from recallery.store.sql import Conn
from recallery.store.steps import Handover, KeywordStep

if TYPE_CHECKING:
    from recallery.store.backend import Backend


class LegReads:
    """Mixed into :class:`~.reader.Reader`, over its connection and backend."""

    conn: Conn
    store: Backend

    def _passing(self, scope: Scope, f: EntryFilter) -> Passing:
        raise NotImplementedError  # the reader's

    def vectors(self, ids: Sequence[int]) -> dict[int, NDArray[np.float32]]:
        """The stored vectors of those of ``ids`` that exist and have one."""
        if not ids:
            return {}
        return self.store.vectors_of(self.conn, ids)

    def cosines(
        self, ids: Sequence[int], vector: NDArray[np.float32], scope: Scope | None = None
    ) -> dict[int, float]:
        """The cosine similarity of ``vector`` with the stored vectors of those of ``ids``
        that have one (0 for a vector of another dimension)."""
        if not ids:
            return {}
        memories = None if scope is None else scope.memory_ids
        return self.store.cosines_of(self.conn, ids, vector, memories)

    def keyword_candidates(
        self, scope: Scope, text: str, f: EntryFilter, limit: int
    ) -> list[tuple[int, float]]:
        """Best keyword matches as (message_id, score), higher is better."""
        if not scope or limit <= 0:
            return []
        passing = self._passing(scope, f)
        return self.store.keyword_search(self.conn, scope, text, f, limit, passing)

    def window_candidates(
        self, scope: Scope, text: str, f: EntryFilter, limit: int
    ) -> list[tuple[int, float]]:
        """Best keyword matches among conversation windows (a raw turn with the turns it
        answers) as (message_id, score); none where the backend keeps no window index."""
        if not scope or limit <= 0:
            return []
        passing = self._passing(scope, f)
        return self.store.window_search(self.conn, scope, text, f, limit, passing)

    def keyword_and_windows(
        self,
        scope: Scope,
        text: str,
        f: EntryFilter,
        limit: int,
        windows: int,
        vector: Handover | None = None,
    ) -> KeywordStep:
        """:meth:`keyword_candidates` and :meth:`window_candidates` (``windows`` of them,
        none where 0) of one query, scored together where the backend can; with the query's
        ``vector`` handed over, their candidates' cosines and lengths where the backend reads
        them beside (:meth:`~.backend.Backend.keyword_window_search`)."""
        if not scope or limit <= 0:
            return KeywordStep([], self.window_candidates(scope, text, f, windows))
        passing = self._passing(scope, f)
        return self.store.keyword_window_search(
            self.conn, scope, text, f, limit, windows, passing, vector
        )

    def vector_candidates(
        self, scope: Scope, vector: NDArray[np.float32], f: EntryFilter, limit: int
    ) -> list[tuple[int, float]]:
        """Nearest entries as (message_id, cosine similarity), higher is better."""
        if not scope or limit <= 0:
            return []
        passing = self._passing(scope, f)
        return self.store.vector_search(self.conn, scope, vector, f, limit, passing)


__all__ = ["LegReads"]
