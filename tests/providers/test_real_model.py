"""The engine with the real local embedding model: meaning beats shared words."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from recallery import Engine, Principal, SearchRequest, TurnInput
from recallery.providers.registry import ModelRegistry
from recallery.store.sqlite import SQLiteStore

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def real_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    path: Path = tmp_path_factory.mktemp("real") / "db.sqlite"
    engine = Engine(SQLiteStore(path), models=ModelRegistry())
    yield engine
    engine.close()


def test_search_finds_a_paraphrase_that_keywords_alone_miss(real_engine: Engine) -> None:
    actor: Principal = real_engine.principal(real_engine.create_user("reader").id)
    memory = real_engine.create_memory(
        actor,
        name="pets",
        memory_type=["raw"],
        embd_id="BAAI/bge-small-en-v1.5@Builtin",
        llm_id="x@Y",
    )
    turns = [
        "Our puppy chewed through the sofa cushions again last night.",
        "The quarterly budget review moved to Thursday afternoon.",
        "I prefer window seats on long flights.",
        "The printer on the third floor is out of toner.",
    ]
    written = real_engine.add_messages(actor, [memory.id], [TurnInput(t) for t in turns])
    query = "my dog destroyed the couch"
    keyword_only = real_engine.search(
        actor,
        SearchRequest(
            query, (memory.id,), keywords_similarity_weight=1.0, similarity_threshold=0.01
        ),
    )
    assert keyword_only == []
    hybrid = real_engine.search(actor, SearchRequest(query, (memory.id,), top_n=1))
    assert [h.entry.message_id for h in hybrid] == [written[0].message_id]
    assert hybrid[0].vector_score > 0.4
