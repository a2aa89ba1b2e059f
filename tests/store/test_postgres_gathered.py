"""A search's round trips on PostgreSQL (issue 53): the gather is two statements on the
calling thread (the vector leg, read while the keyword legs run beside it and read their
candidates' cosines and lengths with the query's vector handed over, then everything after
the ranking's leaders: neighbours with the filter, their cosines and lengths, valid times,
supersession links followed, the newer ends' entries), and the hits' rows a third. It ranks
exactly as the reads apart, and as SQLite on the same turns (without conversation windows,
which PostgreSQL scores from estimated statistics); what a filter leaves out stays out."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import psycopg
import pytest

from recallery import Engine, Hit, SearchRequest
from recallery.models import Scope
from recallery.providers.registry import ModelRegistry
from recallery.requests.gathered import Pools, Wants
from recallery.requests.messages import TurnInput
from recallery.retrieval import plan
from recallery.retrieval.stages import Ranking
from recallery.store import postgres
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.store.gather import gather
from recallery.store.postgres import PostgresStore, gathered, search, windows
from recallery.store.reader import Reader
from recallery.store.sqlite import SQLiteStore
from recallery.testing import DeterministicEmbedder, FrozenClock
from recallery.testing.bm25 import corpus

pytestmark = pytest.mark.postgres

#: Three customers of one support memory, each in a session of their own among filler chat:
#: Marta moves twice (a chain of supersession links), Pavel writes Russian, Li Chinese.
FACTS = {
    "marta": [
        "I live in Lisbon and I work as a UX designer.",
        "These days I drink coffee, not tea.",
        "I moved to Porto last spring, near the river.",
        "I'm living in Braga now, close to the old town.",
    ],
    "pavel": ["Я живу в Казани и работаю бухгалтером.", "I live in Kazan, by the Volga."],
    "li": ["我住在成都，在一家公司当会计。", "I live in Chengdu and teach at a school."],
}
#: Turns every search must leave out: forgotten, disabled, or in a memory not searched.
FORGOTTEN = "I live in Madrid, in a flat above the bakery."
DISABLED = "I started as a barista at the harbour cafe."
ELSEWHERE = "I live in Lisbon too, next to the tram stop."
QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("where does the customer live?", {"user_id": "marta"}),
    ("where do I live now?", {"user_id": "marta", "recency_weight": 0.3}),
    ("where do they live?", {}),
    ("coffee or tea", {"session_id": "marta-1"}),
    ("Казани бухгалтером", {}),
    ("我住在成都", {"user_id": "li"}),
    ("what did I say first about Lisbon?", {"neighbour_span": 3}),
    # a pool larger than the windows' seeds: keyword matches measured beside them
    ("teaching school in Paris", {"top_n": 30}),
]


class _Memory:
    """One store with the support memory and another memory, written the same way."""

    def __init__(self, store: Store) -> None:
        embedder = DeterministicEmbedder()
        self.engine = Engine(
            store, models=ModelRegistry(builtin=lambda: embedder), clock=FrozenClock()
        )
        self.admin = self.engine.principal(self.engine.create_user("admin").id)
        self.id = self._memory("support")
        other = self._memory("elsewhere")
        filler = corpus(180)
        for n, (user, facts) in enumerate(FACTS.items()):
            texts = filler[60 * n : 60 * n + 30] + facts + filler[60 * n + 30 : 60 * (n + 1)]
            if user == "marta":  # Madrid before the facts, the new job after them
                texts[40:40], texts[10:10] = [DISABLED], [FORGOTTEN]
            turns = [TurnInput(t, user_id=user, session_id=f"{user}-1") for t in texts]
            written = self.engine.add_messages(self.admin, [self.id], turns)
            by_text = {e.content: e.message_id for e in written}
            if user == "marta":
                self.engine.forget(self.admin, self.id, by_text[FORGOTTEN])
                self.engine.set_status(self.admin, self.id, by_text[DISABLED], False)
        self.engine.add_messages(self.admin, [other], [TurnInput(ELSEWHERE, user_id="marta")])

    def _memory(self, name: str) -> str:
        return self.engine.create_memory(
            self.admin,
            name=name,
            memory_type=["raw"],
            embd_id="BAAI/bge-small-en-v1.5@Builtin",
            llm_id="glm-4-flash@ZHIPU-AI",
        ).id

    def search(self, query: str, **knobs: Any) -> list[Hit]:
        knobs = {"top_n": 10, "similarity_threshold": 0.0, "explain": True, **knobs}
        request = SearchRequest(query, (self.id,), **knobs)
        return self.engine.search(self.admin, request)


@pytest.fixture
def both(
    sqlite_store: SQLiteStore, postgres_store: PostgresStore
) -> Iterator[tuple[_Memory, _Memory]]:
    pair = (_Memory(sqlite_store), _Memory(postgres_store))
    yield pair
    for side in pair:
        side.engine.close()


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    """Every statement sent on a read-only connection from here on (what psycopg's cursor
    executes, so the snapshot a second connection imports counts too), in order, with the
    thread that sent it; the keyword legs always run beside (a second connection waited for)."""
    seen: list[tuple[int, str]] = []
    execute = psycopg.Cursor.execute

    def recorded(cur: psycopg.Cursor[Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        if cur.connection.read_only:
            seen.append((threading.get_ident(), str(query)))
        return execute(cur, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", recorded)
    monkeypatch.setattr(postgres, "BESIDE_WAIT_S", 10.0)
    return seen


def _ranked(hits: list[Hit]) -> list[tuple[str, float, tuple[tuple[str, float], ...]]]:
    return [(h.entry.content, h.score, h.why) for h in hits]


def _close(a: list[Hit], b: list[Hit]) -> None:
    """The same hits in the same order with the same contributions (to rounding: SQLite's
    cosines are float32 dot products, PostgreSQL's pgvector's in double)."""
    assert [h.entry.content for h in a] == [h.entry.content for h in b]
    for x, y in zip(a, b, strict=True):
        assert x.score == pytest.approx(y.score, rel=1e-6, abs=1e-9)
        assert [n for n, _ in x.why] == [n for n, _ in y.why]
        assert [v for _, v in x.why] == pytest.approx([v for _, v in y.why], rel=1e-6, abs=1e-9)


def test_a_search_sends_two_gather_statements_on_the_calling_thread(
    both: tuple[_Memory, _Memory], statements: list[tuple[int, str]]
) -> None:
    _, pg = both
    caller = threading.get_ident()
    for query, knobs in QUERIES:
        statements.clear()
        pg.search(query, **knobs)
        mine = [" ".join(sql.split()) for thread, sql in statements if thread == caller]
        # the memories searched (their own read), the snapshot the keyword legs share
        # (exported, then imported by their connection), the two steps, the hits' rows: a
        # round trip more fails here
        assert len(mine) == 6, mine
        assert mine[0].startswith("SELECT id, tenant_id, name")
        assert mine[1] == "SELECT pg_export_snapshot()"
        assert mine[2].startswith("SET TRANSACTION SNAPSHOT")
        assert "cfg AS" in mine[3] or mine[3].startswith("WITH vx AS")
        assert "UNION ALL SELECT 1" not in mine[3]  # the vector leg alone: no cosines asked
        assert mine[4].startswith("WITH RECURSIVE c AS")
        assert mine[5].startswith("SELECT e.message_id, e.memory_id, e.tenant_id")
        beside = [sql for thread, sql in statements if thread != caller]
        assert beside and not any("RECURSIVE" in sql or "vx AS" in sql for sql in beside)
        # the keyword legs' last statement, the windows', reads the candidates' cosines
        assert "vector_dims" in beside[-1] and "around AS" in beside[-1]


def test_the_two_steps_rank_as_the_reads_apart_and_as_sqlite(
    both: tuple[_Memory, _Memory],
    statements: list[tuple[int, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lite, pg = both
    caller = threading.get_ident()
    for query, knobs in QUERIES:
        stepped = pg.search(query, **knobs)
        monkeypatch.setattr(PostgresStore, "gathers_in_steps", False)
        statements.clear()
        apart = pg.search(query, **knobs)
        sent_apart = sum(thread == caller for thread, _ in statements)
        monkeypatch.setattr(PostgresStore, "gathers_in_steps", True)
        assert _ranked(stepped) == _ranked(apart), query
        assert sent_apart >= 7  # the vector leg, cosines, neighbours, filter, ... apart
        # SQLite scores every conversation window with exact statistics, PostgreSQL those
        # around the keyword leg's matches with estimated ones (store/postgres/windows.py)
        _close(
            pg.search(query, **knobs, context_weight=0.0),
            lite.search(query, **knobs, context_weight=0.0),
        )
        found = {h.entry.content for h in stepped}
        assert not found & {FORGOTTEN, DISABLED, ELSEWHERE}, query
        if "user_id" in knobs:
            assert {h.entry.user_id for h in stepped} == {knobs["user_id"]}


def test_the_two_steps_gather_what_the_reads_apart_gather(
    both: tuple[_Memory, _Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every part of what a search gathers, supersession links included: Porto's newer turn
    (Braga) comes with both entries; Lisbon's latest link ends at the disabled new job, so
    Lisbon has none; the forgotten Madrid turn is no candidate."""
    _, pg = both
    embedder = DeterministicEmbedder()
    scope = Scope.of(pg.id)
    f = EntryFilter.retrieval(valid_on=FrozenClock().now(), user_id="marta")

    def leaders(pools: Pools, lengths: Mapping[int, int]) -> list[int]:
        return sorted(pools.cosine, key=lambda i: (-pools.cosine[i], -i))[:30]

    wants = Wants(50, windows=30, span=2, leaders=leaders, lengths=True, times=True, hops=3)
    found = {}
    for steps in (True, False):
        monkeypatch.setattr(PostgresStore, "gathers_in_steps", steps)
        for query in ("where do I live now?", "what is my job?", "Казань"):
            vector = embedder.embed([query])[0].astype(np.float32)
            with pg.engine.store.read() as r:
                found[steps, query] = gather(r, scope, query, vector, f, wants)
    for query in ("where do I live now?", "what is my job?", "Казань"):
        assert found[True, query] == found[False, query]
    now = found[True, "where do I live now?"]
    linked = {now.linked[o].content: now.linked[n].content for o, n in now.superseding.items()}
    assert linked == {FACTS["marta"][2]: FACTS["marta"][3]}
    assert now.times and now.neighbours and now.lengths
    # whose each timed turn is (the time band orders one person's turns only)
    assert now.people.keys() == now.times.keys()
    assert set(now.people.values()) == {(pg.id, "marta")}


def test_both_stores_gather_whose_each_timed_candidate_is(
    both: tuple[_Memory, _Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unfiltered, the candidates are three customers' (one writing Russian, one Chinese);
    each store and each way of reading names the same person for every timed turn."""
    embedder = DeterministicEmbedder()
    wants = Wants(50, windows=30, span=2, leaders=None, lengths=False, times=True, hops=2)
    users = {}
    for side in both:
        f = EntryFilter.retrieval(valid_on=FrozenClock().now())
        for steps in (True, False):
            monkeypatch.setattr(PostgresStore, "gathers_in_steps", steps)
            for query in ("where do they live?", "Казани", "我住在成都"):
                vector = embedder.embed([query])[0].astype(np.float32)
                with side.engine.store.read() as r:
                    found = gather(r, Scope.of(side.id), query, vector, f, wants)
                    entries = r.get_entries(Scope.of(side.id), found.people)
                assert found.people.keys() == found.times.keys()
                assert found.people == {i: (side.id, e.user_id) for i, e in entries.items()}
                users[query] = users.get(query, set()) | {u for _, u in found.people.values()}
    assert users["where do they live?"] == {"marta", "pavel", "li"}


def test_the_keyword_legs_read_their_candidates_cosines_and_lengths(
    both: tuple[_Memory, _Memory],
) -> None:
    """With the query's vector handed over, the window statement measures every candidate
    of both legs (keyword matches beyond the windows' seeds too) as the reads apart do;
    without it, none, and step one reads them (the ranking is the same: above)."""
    _, pg = both
    scope = Scope.of(pg.id)
    f = EntryFilter.retrieval(valid_on=FrozenClock().now(), user_id="marta")
    query = "cooked teaching in Paris"
    vector = DeterministicEmbedder().embed([query])[0].astype(np.float32)
    with pg.engine.store.read() as r:
        step = r.keyword_and_windows(scope, query, f, 120, 30, lambda: vector)
        assert len(step.keyword) > windows.SEEDS and step.windows
        found = {i for i, _ in step.keyword} | {i for i, _ in step.windows}
        assert found <= step.read
        apart = r.cosines(sorted(step.read), vector, scope)
        assert step.cosine == pytest.approx(apart, rel=1e-6, abs=1e-9)
        assert step.lengths == r.lengths(scope, sorted(step.read))
        entries = r.get_entries(scope, step.read)
        assert {e.user_id for e in entries.values() if e.message_id in found} == {"marta"}
        unmeasured = r.keyword_and_windows(scope, query, f, 120, 30, lambda: None)
        assert (unmeasured.keyword, unmeasured.windows) == (step.keyword, step.windows)
        assert not unmeasured.read and not unmeasured.cosine and not unmeasured.lengths


def test_the_first_step_asks_the_index_as_the_vector_leg_does(
    postgres_store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the HNSW index (the scope counted large), with ``hnsw.ef_search`` set for the
    limit, and the exact query where the index gives fewer rows than asked (one user in
    three passes the filter); another user's turns and another memory's stay out. It leaves
    the rest of its transaction (step two) on generic plans."""
    embedder = DeterministicEmbedder(dimension=384)
    engine = Engine(
        postgres_store, models=ModelRegistry(builtin=lambda: embedder), clock=FrozenClock()
    )
    admin = engine.principal(engine.create_user("admin").id)
    made = [
        engine.create_memory(
            admin,
            name=name,
            memory_type=["raw"],
            embd_id="BAAI/bge-small-en-v1.5@Builtin",
            llm_id="glm-4-flash@ZHIPU-AI",
        ).id
        for name in ("one", "two")
    ]
    texts = [*corpus(300), "Я живу в Казани.", "我住在成都。"]
    for memory in made:
        turns = [
            TurnInput(t, user_id="ab"[n % 3 == 0], session_id="s") for n, t in enumerate(texts)
        ]
        engine.add_messages(admin, [memory], turns)
    assert 384 in postgres_store.indexed_dims
    # words of the corpus, so the distances differ (a query sharing none ties every turn at
    # 0, and which of the tied turns make the limit is the plan's choice)
    vector = embedder.embed(["my sister's garden and tea"])[0].astype(np.float32)
    scope, f = Scope.of(made[0]), EntryFilter(user_id="b")
    monkeypatch.setattr(gathered, "EXACT_MAX_ROWS", 0)
    monkeypatch.setattr(search, "EXACT_MAX_ROWS", 0)
    for scan in ("off", "relaxed_order"):  # without iterative scans the index runs short
        with postgres_store.read() as r:
            r.conn.execute(f"SET LOCAL hnsw.iterative_scan = {scan}")
            with_b = set(r.entry_ids(scope, EntryFilter(user_id="b", current_only=False)))
            for limit in (5, 50, 150):
                step = gathered.first_step(
                    r.conn, scope, vector, f, limit, frozenset({384}), [], []
                )
                setting = r.conn.execute("SELECT current_setting('hnsw.ef_search')")[0][0]
                assert setting == str(search.ef_search(limit))
                leg = search.vector_search(r.conn, scope, vector, f, limit, frozenset({384}))
                assert _same_ranking(step.vector, leg) and len(leg) == min(limit, len(with_b))
                assert {i for i, _ in leg} <= with_b
                # step two, next in this transaction, plans once for every value
                mode = r.conn.execute("SELECT current_setting('plan_cache_mode')")[0][0]
                assert mode == "force_generic_plan"
        with postgres_store.read() as r:  # for this transaction only
            assert r.conn.execute("SELECT current_setting('plan_cache_mode')")[0][0] == "auto"
    engine.close()


def test_times_and_links_of_the_placed_candidates_rank_as_every_candidates(
    both: tuple[_Memory, _Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gather reads valid times and supersession links only for the candidates the
    ranking's later stages look at (:meth:`Ranking.placed_ids`): every search ranks, scores
    and explains as with those read for every candidate, in both stores, for three customers
    (Russian, Chinese) with the time band, recency and supersession at work; and far fewer
    turns are asked about."""
    asked: dict[bool, list[int]] = {True: [], False: []}
    placed = True
    real_times, real_wants = Reader.valid_times, Ranking.wants

    def times(self: Reader, scope: Scope, ids: Iterable[int]) -> list[Any]:
        wanted = list(ids)
        asked[placed].append(len(wanted))
        return real_times(self, scope, wanted)

    monkeypatch.setattr(Reader, "valid_times", times)
    for side in both:
        for query, knobs in QUERIES:
            placed = True
            few = side.search(query, **knobs)
            placed = False
            with monkeypatch.context() as m:
                m.setattr(Ranking, "wants", lambda self: replace(real_wants(self), placed=None))
                every = side.search(query, **knobs)
            assert _ranked(few) == _ranked(every), query
    assert asked[True] and max(asked[True]) <= plan.RECENCY_POOL
    assert sum(asked[True]) * 3 < sum(asked[False])


def _same_ranking(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> bool:
    """The same similarities in order, and the same turns but among those tied with the last
    one kept (which of them make the limit is the scan's choice)."""
    edge = a[-1][1] if a else None
    same = [round(s, 6) for _, s in a] == [round(s, 6) for _, s in b]
    return same and [i for i, s in a if s != edge] == [i for i, s in b if s != edge]
