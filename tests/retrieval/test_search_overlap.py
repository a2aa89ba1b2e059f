"""A lone search embeds its query while its keyword legs run: on SQLite the legs run in the
caller (they are in-process indexes), so the query's embedding goes to another thread; with
other searches in flight the cores are busy already and it is embedded in the caller."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from tests.support.engine import QueryFails

from recallery import Engine, ModelError, SearchRequest
from recallery.providers.registry import ModelRegistry
from recallery.store.postgres import PostgresStore
from recallery.store.sqlite import SQLiteStore
from recallery.testing import DeterministicEmbedder

MEET_S = 5.0
#: The query the embedders below watch for.
QUERY = "Where in Berlin does Alice live?"


class _Meeting(DeterministicEmbedder):
    """Embeds a query only once the keyword leg has started too (a barrier of two that
    breaks after :data:`MEET_S`): one after the other, the search fails."""

    def __init__(self, meeting: threading.Barrier) -> None:
        super().__init__()
        self.meeting = meeting
        self.threads: list[str] = []

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if list(texts) == [QUERY]:
            self.threads.append(threading.current_thread().name)
            self.meeting.wait()
        return super().embed(texts)


def _before_the_keyword_leg(store: SQLiteStore, first: Callable[[], object]) -> None:
    """Run ``first`` in whichever thread runs a search's keyword legs, as they start."""
    leg = store.keyword_window_search

    def after_first(*args: Any, **kwargs: Any) -> Any:
        first()
        return leg(*args, **kwargs)

    store.keyword_window_search = after_first  # type: ignore[method-assign]


def _written(engine: Engine) -> tuple[Any, str]:
    alice = engine.principal(engine.create_user("alice").id)
    memory = engine.create_memory(
        alice, name="n", memory_type=["raw"], embd_id="x@Builtin", llm_id="none@None"
    )
    engine.add_turn(alice, [memory.id], user_input="I moved to Berlin.", agent_response="ok")
    engine.add_turn(alice, [memory.id], user_input="I like tea.", agent_response="ok")
    return alice, memory.id


def test_a_lone_search_embeds_its_query_while_the_keyword_legs_run(
    sqlite_store: SQLiteStore,
) -> None:
    meeting = threading.Barrier(2, timeout=MEET_S)
    embedder = _Meeting(meeting)
    engine = Engine(sqlite_store, models=ModelRegistry(builtin=lambda: embedder))
    try:
        alice, memory = _written(engine)
        _before_the_keyword_leg(sqlite_store, meeting.wait)
        hits = engine.search(alice, SearchRequest(QUERY, (memory,)))
        assert hits[0].entry.content.startswith("User Input: I moved to Berlin.")
        assert embedder.threads and embedder.threads[0] != threading.current_thread().name
    finally:
        engine.close()


def test_with_another_search_in_flight_the_query_is_embedded_in_the_caller(
    sqlite_store: SQLiteStore,
) -> None:
    """Searches under load do not hand their embedding over: the cores are busy already."""
    embedder = _Meeting(threading.Barrier(1))
    engine = Engine(sqlite_store, models=ModelRegistry(builtin=lambda: embedder))
    try:
        alice, memory = _written(engine)
        inside, leave = threading.Event(), threading.Event()

        def held() -> None:
            if threading.current_thread().name == "other":
                inside.set()
                leave.wait(MEET_S)

        _before_the_keyword_leg(sqlite_store, held)
        other = threading.Thread(
            target=engine.search, args=(alice, SearchRequest("tea", (memory,))), name="other"
        )
        other.start()
        try:
            assert inside.wait(MEET_S)
            engine.search(alice, SearchRequest(QUERY, (memory,)))
        finally:
            leave.set()
            other.join()
        assert embedder.threads == [threading.current_thread().name]
    finally:
        engine.close()


def test_where_the_keyword_legs_run_on_a_second_connection_the_caller_embeds(
    postgres_store: PostgresStore,
) -> None:
    """PostgreSQL runs the legs beside on a connection of its own: a handover would only
    add a thread for the caller to wait on."""
    embedder = _Meeting(threading.Barrier(1))
    engine = Engine(postgres_store, models=ModelRegistry(builtin=lambda: embedder))
    try:
        alice, memory = _written(engine)
        hits = engine.search(alice, SearchRequest(QUERY, (memory,)))
        assert hits[0].entry.content.startswith("User Input: I moved to Berlin.")
        assert embedder.threads == [threading.current_thread().name]
    finally:
        engine.close()


def test_a_query_embedding_that_fails_on_its_thread_reaches_the_caller(
    sqlite_store: SQLiteStore,
) -> None:
    engine = Engine(sqlite_store, models=ModelRegistry(builtin=QueryFails))
    try:
        alice, memory = _written(engine)
        for _ in range(3):
            with pytest.raises(ModelError, match="down"):
                engine.search(alice, SearchRequest("boom", (memory,)))
        hits = engine.search(alice, SearchRequest("Berlin", (memory,)))
        assert hits[0].entry.content.startswith("User Input: I moved to Berlin.")
    finally:
        engine.close()
