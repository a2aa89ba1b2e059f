"""Hybrid search and context assembly."""

from __future__ import annotations

from dataclasses import replace

from memstrata import validation as v
from memstrata.errors import InvalidInput
from memstrata.facade.core import (
    MIN_POOL,
    POOL_FACTOR,
    EngineCore,
    SearchRequest,
)
from memstrata.models import (
    Hit,
    Principal,
)
from memstrata.retrieval.candidates import hybrid_candidates, with_neighbours
from memstrata.retrieval.context import Context, assemble
from memstrata.retrieval.fusion import fuse
from memstrata.store.filters import EntryFilter

#: Conversation context is looked up for the best ``CONTEXT_FACTOR * top_n`` candidates by
#: their own score (at least ``MIN_CONTEXT``): further down, no bonus reaches the top.
CONTEXT_FACTOR, MIN_CONTEXT = 3, 30


class Searching(EngineCore):
    def search(self, actor: Principal, request: SearchRequest) -> list[Hit]:
        """Hybrid search: BM25 and vector candidates filtered in the store, fused, best first."""
        req = self._checked(request)
        scope, memories = self._readable_with(actor, list(req.memory_ids))
        if not scope:
            return []
        if len({id(self.embedder(m)) for m in memories}) > 1:
            raise InvalidInput("memory_id", "memories use different embedding models")
        query_vector = self.embedder(memories[0]).embed([req.query])[0]
        f = EntryFilter.retrieval(
            valid_on=req.valid_on or self.clock.now(),
            as_of=req.as_of,
            types=req.types,
            user_id=req.user_id,
            agent_id=req.agent_id,
            session_id=req.session_id,
        )
        pool = max(POOL_FACTOR * req.top_n, MIN_POOL)
        span, weight = req.neighbour_span or 0, req.neighbour_weight or 0.0
        with self.store.read() as r:
            keyword, vector = hybrid_candidates(r, scope, req.query, query_vector, f, pool)
            neighbours = {}
            if span and weight:
                own = fuse(
                    keyword,
                    vector,
                    keyword_weight=req.keywords_similarity_weight,
                    method=req.fusion,
                    limit=max(CONTEXT_FACTOR * req.top_n, MIN_CONTEXT),
                )
                candidates = {s.message_id for s in own}
                neighbours = with_neighbours(r, scope, f, candidates, span, vector, query_vector)
            ranked = fuse(
                keyword,
                vector,
                keyword_weight=req.keywords_similarity_weight,
                method=req.fusion,
                threshold=req.similarity_threshold,
                neighbours=neighbours,
                neighbour_weight=weight,
                limit=req.top_n,
            )
            entries = r.get_entries(scope, [s.message_id for s in ranked])
        hits = [Hit(entries[s.message_id], s.score, s.keyword, s.vector) for s in ranked]
        self.usage.record([h.entry.message_id for h in hits], self.clock.now())
        return hits

    def context(self, actor: Principal, request: SearchRequest, max_tokens: int = 2000) -> Context:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise InvalidInput("max_tokens", "max_tokens must be a positive integer.")
        return assemble(self.search(actor, request), max_tokens)

    def _checked(self, req: SearchRequest) -> SearchRequest:
        query = v.text(req.query, "query", limit=v.MAX_QUERY_BYTES, empty=False)
        return replace(
            req,
            query=query,
            memory_ids=tuple(v.memory_ids(list(req.memory_ids))),
            top_n=v.top_n(req.top_n),
            similarity_threshold=v.unit_float(req.similarity_threshold, "similarity_threshold"),
            keywords_similarity_weight=v.unit_float(
                req.keywords_similarity_weight, "keywords_similarity_weight"
            ),
            fusion=v.fusion(req.fusion),
            neighbour_weight=v.unit_float(
                self.settings.neighbour_weight
                if req.neighbour_weight is None
                else req.neighbour_weight,
                "neighbour_weight",
            ),
            neighbour_span=v.span(
                self.settings.neighbour_span if req.neighbour_span is None else req.neighbour_span
            ),
        )
