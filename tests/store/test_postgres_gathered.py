"""A search's round trips on PostgreSQL (issue 53): the gather reads each step's cosines and
lengths in one statement, not two, and ranks exactly as with the reads apart; a filtered
search still returns none of another customer's turns."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from recallery import Engine, Principal, SearchRequest
from recallery.models import Scope
from recallery.providers.registry import ModelRegistry
from recallery.requests.messages import TurnInput
from recallery.store.filters import EntryFilter
from recallery.store.postgres import PostgresStore, estimates, gathered
from recallery.store.postgres.conn import PgConn
from recallery.store.sql import Row
from recallery.testing import DeterministicEmbedder, FrozenClock
from recallery.testing.bm25 import corpus

pytestmark = pytest.mark.postgres

#: Three customers of one support memory; their own words, some in Russian and Chinese.
FACTS = {
    "marta": [
        "I live in Lisbon and I work as a UX designer.",
        "These days I drink coffee, not tea.",
    ],
    "pavel": ["Я живу в Казани и работаю бухгалтером.", "I live in Porto now, near the river."],
    "li": ["我住在成都，在一家公司当会计。", "I live in Lyon and teach at a school."],
}


@pytest.fixture
def support(postgres_store: PostgresStore) -> Iterator[tuple[Engine, Principal, str]]:
    """One memory: each customer's facts among 60 turns of filler chat in their own session
    (more than the vector leg's 50, so the keyword leg and the neighbours bring candidates
    without a cosine yet)."""
    embedder = DeterministicEmbedder()
    engine = Engine(
        postgres_store, models=ModelRegistry(builtin=lambda: embedder), clock=FrozenClock()
    )
    admin = engine.principal(engine.create_user("admin").id)
    memory = engine.create_memory(
        admin,
        name="support",
        memory_type=["raw"],
        embd_id="BAAI/bge-small-en-v1.5@Builtin",
        llm_id="glm-4-flash@ZHIPU-AI",
    )
    filler = corpus(180)
    for n, (user, facts) in enumerate(FACTS.items()):
        texts = filler[60 * n : 60 * n + 30] + facts + filler[60 * n + 30 : 60 * (n + 1)]
        turns = [TurnInput(t, user_id=user, session_id=f"{user}-1") for t in texts]
        engine.add_messages(admin, [memory.id], turns)
    yield engine, admin, memory.id
    engine.usage.close()
    engine.request_log.close()


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement the PostgreSQL store executes from here on, in order."""
    seen: list[str] = []
    execute = PgConn.execute

    def recorded(self: PgConn, sql: str, params: Sequence[object] = ()) -> list[Row]:
        seen.append(sql)
        return execute(self, sql, params)

    monkeypatch.setattr(PgConn, "execute", recorded)
    return seen


#: The candidates' cosines, the raw turns' lengths, and the two in one statement.
READS = (
    "SELECT message_id, CASE WHEN vector_dims",
    "SELECT e.message_id, e.message_type, length(e.content)",
    "SELECT e.message_id, e.embedding IS NOT NULL",
)


def _cosine_or_length_reads(statements: list[str]) -> int:
    return sum(s.lstrip().startswith(READS) for s in statements)


def _sent(statements: list[str]) -> int:
    """How many statements a search sent, less the table statistics the keyword leg reads
    once a while (whichever search comes first after they went stale reads them) and the
    snapshot export that runs the keyword leg beside the rest where a pooled connection is
    free at that moment."""
    return sum(s not in (estimates.STATISTICS, "SELECT pg_export_snapshot()") for s in statements)


def test_a_search_reads_cosines_and_lengths_together_and_ranks_as_with_them_apart(
    support: tuple[Engine, Principal, str],
    statements: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine, admin, memory = support
    request = SearchRequest(
        "where does the customer live?",
        (memory,),
        top_n=10,
        similarity_threshold=0.0,
        user_id="marta",
        explain=True,
    )
    statements.clear()
    folded = engine.search(admin, request)
    folded_sent, folded_reads = _sent(statements), _cosine_or_length_reads(statements)

    monkeypatch.setattr(PostgresStore, "cosines_and_lengths", lambda *args, **kwargs: None)
    statements.clear()
    apart = engine.search(admin, request)
    apart_sent, apart_reads = _sent(statements), _cosine_or_length_reads(statements)

    assert (folded_reads, apart_reads) == (2, 4)  # the candidates' step and the neighbours'
    assert folded_sent == apart_sent - 2
    assert [(h.entry.message_id, h.score, h.why) for h in folded] == [
        (h.entry.message_id, h.score, h.why) for h in apart
    ]
    assert "I live in Lisbon and I work as a UX designer." in [h.entry.content for h in folded]
    assert {h.entry.user_id for h in folded} == {"marta"}  # pavel's and li's Lisbon-like turns out


def test_the_folded_read_gives_what_the_two_reads_give(
    support: tuple[Engine, Principal, str],
) -> None:
    """Cosines of the ids asked for cosines only (an id asked for its length alone gets
    none), lengths of raw turns of the scope only (another memory's turn gets none)."""
    engine, admin, memory = support
    other = engine.create_memory(
        admin,
        name="elsewhere",
        memory_type=["raw"],
        embd_id="BAAI/bge-small-en-v1.5@Builtin",
        llm_id="glm-4-flash@ZHIPU-AI",
    )
    (outside,) = engine.add_messages(admin, [other.id], [TurnInput("我住在成都", user_id="li")])
    store = engine.store
    assert isinstance(store, PostgresStore)
    vector = DeterministicEmbedder().embed(["where do I live"])[0].astype(np.float32)
    scope = Scope.of(memory)
    with store.read() as r:
        ids = r.entry_ids(scope, EntryFilter(current_only=False))[:40]
        cosine_ids, length_ids = ids[:25], [*ids[15:], outside.message_id]
        assert isinstance(r.conn, PgConn)
        cosines, lengths = gathered.cosines_and_lengths(
            r.conn, scope, cosine_ids, length_ids, vector
        )
        assert cosines == r.cosines(cosine_ids, vector, scope)
        assert lengths == r.lengths(scope, length_ids)
        assert outside.message_id not in lengths and set(lengths) == set(ids[15:])
        assert gathered.cosines_and_lengths(r.conn, scope, [], [], vector) == ({}, {})
