"""The search service: one request checked once, the memories the caller may read, then two
steps: gather (:func:`recallery.store.gather.gather`: every candidate with what ranking needs,
in one read) and rank (:mod:`recallery.retrieval.stages`: pure stages, each a named
contribution), then the hits' entries read in the same snapshot; then what was retrieved
announced to the service's listeners as one :class:`~recallery.retrieval.retrieved.Retrieved`
(use counts, the request log; a playground's try-out announces nothing) and the context
block built from the hits.

Every field of a :class:`~recallery.requests.SearchRequest` is validated here and nowhere
else, from the loosely typed values adapters pass on (query strings, JSON bodies, SDK
arguments), each as its declared kind says; the defaults are the request type's own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from typing import Any

import numpy as np
from numpy.typing import NDArray

from recallery import validation as v
from recallery.access import readable
from recallery.clock import Clock
from recallery.errors import InvalidInput
from recallery.models import Fusion, Hit, Principal
from recallery.providers.base import Embedder, embed_query
from recallery.providers.registry import ModelRegistry
from recallery.requests import Context, SearchRequest, search_fields
from recallery.retrieval.context import assemble
from recallery.retrieval.fusion import hinted_weight
from recallery.retrieval.recency import band_lean, time_lean
from recallery.retrieval.retrieved import RetrievalListener, Retrieved
from recallery.retrieval.stages import Knobs, Ranking
from recallery.settings import Settings
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.store.gather import gather
from recallery.store.reader import Reader
from recallery.store.steps import KeywordStep

#: Threads that embed a lone search's query while its keyword legs run in the caller.
_EMBEDDING = ThreadPoolExecutor(max_workers=4, thread_name_prefix="recallery-embed")


class SearchService:
    """Hybrid search and the context block built from it."""

    def __init__(
        self,
        store: Store,
        models: ModelRegistry,
        clock: Clock,
        settings: Settings,
        listeners: Sequence[RetrievalListener] = (),
    ) -> None:
        self.store = store
        self.models = models
        self.clock = clock
        self.settings = settings
        #: Who hears what each search retrieved (:mod:`recallery.retrieval.retrieved`).
        self.listeners = tuple(listeners)
        self.observer = models.observer
        self._running = 0
        self._counting = threading.Lock()

    def search(self, actor: Principal, request: SearchRequest) -> list[Hit]:
        """Hybrid search: BM25 and vector candidates filtered in the store, fused, best first.
        What it returned is announced as retrieved (the use counts, LRU eviction's order;
        the current call's record in the request log)."""
        req = checked(request, self.settings)
        hits = self._counted(actor, req)
        ids = tuple(h.entry.message_id for h in hits)
        event = Retrieved(req.query, req.memory_ids, ids, self.clock.now())
        for listener in self.listeners:
            listener(event)
        return hits

    def try_out(
        self, actor: Principal, request: SearchRequest, max_tokens: int = 2000
    ) -> tuple[list[Hit], Context]:
        """What :meth:`search` and :meth:`context` would give an agent, from one search, for
        a person trying a query (the web playground): ranked exactly as an agent's search,
        but no retrieval is counted, so trying queries never moves LRU eviction."""
        _check_budget(max_tokens)
        hits = self._counted(actor, checked(request, self.settings))
        return hits, self._assembled(hits, max_tokens)

    def _assembled(self, hits: list[Hit], max_tokens: int) -> Context:
        """The context block of ``hits``, each superseded raw turn marked."""
        with self.store.read() as r:
            superseded = r.superseding(h.entry.message_id for h in hits)
        return assemble(hits, max_tokens, superseded=superseded)

    def _counted(self, actor: Principal, req: SearchRequest) -> list[Hit]:
        """The hits of a :func:`checked` request. Searches in flight are counted: one alone
        whose store runs the keyword legs in process embeds its query on another thread."""
        with self._counting:
            self._running += 1
            alone = self._running == 1
        try:
            return self._search(actor, req, alone)
        finally:
            with self._counting:
                self._running -= 1

    def _search(self, actor: Principal, req: SearchRequest, alone: bool) -> list[Hit]:
        with self.store.read() as r:
            return self._search_in(r, actor, req, alone)

    def _search_in(self, r: Reader, actor: Principal, req: SearchRequest, alone: bool) -> list[Hit]:
        """:meth:`_search` in the read transaction ``r``: the memories searched, the legs,
        the gather and the hits' rows all in one snapshot (a transaction fewer: two round
        trips on PostgreSQL)."""
        ids = list(req.memory_ids)
        scope, memories = readable(actor, ids, {m.id: m for m in r.memories(ids)})
        if not scope:
            return []
        embedders = {id(self.models.embedder(m.model_id)): m.model_id for m in memories}
        if len(embedders) > 1:
            raise InvalidInput("memory_id", "memories use different embedding models")
        embd_id = memories[0].model_id
        f = EntryFilter.retrieval(
            valid_on=req.valid_on or self.clock.now(),
            as_of=req.as_of,
            types=req.types,
            user_id=req.user_id,
            agent_id=req.agent_id,
            session_id=req.session_id,
            trust=req.trust,
            origins=req.origin,
        )
        keyword_weight = req.keywords_similarity_weight
        if req.fusion is Fusion.BALANCED:
            keyword_weight = hinted_weight(keyword_weight, self.models.keyword_balance(embd_id))
        ranking = Ranking(knobs(req, keyword_weight))
        wants = ranking.wants()
        timed = self.observer.timed
        r.remember_checks()
        # The keyword legs run while the query is embedded, on a second connection where the
        # store has one (handed the vector once embedded, for their candidates' cosines),
        # else in the caller while a lone search's query is embedded on another thread.
        handover = alone and self.store.legs_in_process
        query = embedding(self.models.embedder(embd_id), req.query, beside=handover)
        handed = Handing()

        def keyword(s: Reader) -> KeywordStep:
            with timed("search.keyword"):
                return s.keyword_and_windows(
                    scope, req.query, f, wants.pool, wants.windows, handed.vector
                )

        with self.store.beside(r, keyword) as kw:
            query_vector = None
            try:
                with timed("search.embed"):
                    query_vector = query()
            finally:
                handed.give(query_vector)
            with timed("search.gather"):
                found = gather(r, scope, req.query, query_vector, f, wants, kw)
        with timed("search.rank"):
            ranked = ranking.rank(found, explain=req.explain)
        # what was found, read in the same snapshot once ranked (the fetch phase)
        entries = r.get_entries(scope, [s.message_id for s in ranked])
        # A store's in-memory indexes may already hold a row committed after this read's
        # snapshot began; the snapshot does not, so the row waits for the next search.
        return [
            Hit(entries[s.message_id], s.score, s.keyword, s.vector, s.why)
            for s in ranked
            if s.message_id in entries
        ]

    def context(self, actor: Principal, request: SearchRequest, max_tokens: int = 2000) -> Context:
        """The hits of ``request`` as a fenced, token-bounded block for a prompt."""
        _check_budget(max_tokens)
        return self._assembled(self.search(actor, request), max_tokens)


def _check_budget(max_tokens: object) -> None:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidInput("max_tokens", "max_tokens must be a positive integer.")


class Handing:
    """The query's vector handed from the caller, who embeds it, to the keyword legs beside
    (:data:`~recallery.store.steps.Handover`): on another thread they wait for it; run in the
    caller, before it is embedded, they get None, as they do where embedding fails."""

    def __init__(self) -> None:
        self._caller = threading.get_ident()
        self._given = threading.Event()
        self._vector: NDArray[np.float32] | None = None

    def give(self, vector: NDArray[np.float32] | None) -> None:
        self._vector = vector
        self._given.set()

    def vector(self) -> NDArray[np.float32] | None:
        if threading.get_ident() == self._caller and not self._given.is_set():
            return None
        self._given.wait()
        return self._vector


def embedding(embedder: Embedder, text: str, *, beside: bool) -> Callable[[], NDArray[np.float32]]:
    """The vector of the query ``text``, to collect: with ``beside``, computed on another
    thread from now on, else when collected. A search alone in the process whose keyword
    legs run in the caller hands it over (the legs, 2-3 ms at 100k entries on SQLite, then
    cost no wall time of their own). With other searches in flight the cores are busy
    already: the handover cost a loaded server about a twentieth of its requests. Where the
    legs run on a second connection the caller only waits, and the handover cost a search
    on PostgreSQL at 100k entries about 2 %."""
    if not beside:
        return lambda: embed_query(embedder, [text])[0]
    # in the caller's context (a trace's current span, say: api/tracing.py)
    pending = _EMBEDDING.submit(copy_context().run, embed_query, embedder, [text])
    return lambda: pending.result()[0]


def knobs(req: SearchRequest, keyword_weight: float) -> Knobs:
    """The ranking of a checked request (``keyword_weight``: the one fusion uses), its time
    cues read once: a query about the past ("first", "back when", "in 2019") asks for what
    the later turn replaced, so supersession is off for it."""
    lean = time_lean(req.query) if req.supersession else 0.0
    weight = req.recency_weight or 0.0
    return Knobs(
        query=req.query,
        top_n=req.top_n,
        keyword_weight=keyword_weight,
        threshold_weight=req.keywords_similarity_weight,
        method=req.fusion,
        threshold=req.similarity_threshold,
        window_weight=0.0 if req.fusion is Fusion.RRF else req.context_weight or 0.0,
        span=req.neighbour_span or 0,
        neighbour_weight=req.neighbour_weight or 0.0,
        context_length=req.context_length or 0,
        recency=weight * time_lean(req.query, req.recency_plain or 0.0) if weight else 0.0,
        band=req.recency_band,
        band_lean=band_lean(req.query) if req.recency_band else 0.0,
        supersession=req.supersession if lean > 0 else 0.0,
    )


def checked(req: SearchRequest, settings: Settings) -> SearchRequest:
    """``req`` with every field validated and typed, each as its declared kind says (an error
    names the field's wire name); a knob left None takes the server's setting of that name
    where there is one (conversation context), else its declared default."""
    values: dict[str, Any] = {}
    for spec in search_fields():
        value = getattr(req, spec.name)
        if value is None:
            value = getattr(settings, spec.name, spec.default)
        values[spec.name] = _CHECKS[spec.metadata["kind"]](value, spec.metadata["wire"])
    return SearchRequest(**values)


def _length(value: object, field: str) -> int:
    """A length in characters: a non-negative integer."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(field, f"{field} must be a non-negative integer.")
    return value


def _filter_id(value: object, field: str) -> str | None:
    """An exact-match filter; None or empty text means none."""
    return None if value is None or value == "" else v.text(value, field, limit=v.MAX_ID_TEXT)


__all__ = ["SearchService", "checked", "knobs"]


#: How each kind of declared search field is checked: (value, wire name) -> the typed value.
_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "query": lambda value, field: v.text(value, field, limit=v.MAX_QUERY_BYTES, empty=False),
    "memories": lambda value, field: tuple(v.memory_ids(value, field)),
    "size": v.top_n,
    "unit": v.unit_float,
    "id": _filter_id,
    "types": v.entry_types,
    "time": v.optional_timestamp,
    "fusion": lambda value, field: v.fusion(value),
    "span": v.span,
    "length": _length,
    "trust": lambda value, field: v.trust_states(value, field, searchable=True),
    "origins": v.origins,
    "flag": v.boolean,
}
