"""What a search did is one typed event: an agent's search or context emits one
``Retrieved`` (the checked query and memories, the ids it returned best first, the time) to
each listener; the playground's try-out and a refused search emit none. The engine's two
listeners, the use counts and the request log, record the same ids."""

from __future__ import annotations

import pytest

from recallery import Engine, Memory, Principal
from recallery.errors import InvalidInput
from recallery.models import Entry
from recallery.requests import SearchRequest
from recallery.requests.requestlog import Call, begin
from recallery.retrieval.retrieved import Retrieved
from recallery.services.search import SearchService
from recallery.testing import FrozenClock


def _turn(engine: Engine, actor: Principal, memory: Memory, text: str, user: str) -> Entry:
    (entry,) = engine.add_turn(
        actor, [memory.id], user_input=text, agent_response="ok", user_id=user
    )
    return entry


def _seeded(engine: Engine, alice: Principal, memory: Memory) -> set[int]:
    """Three people's turns, one in Russian, one in Chinese; the ids a search finds."""
    found = {
        _turn(engine, alice, memory, "Мармелад из Занзибара zanzibar", "tom").message_id,
        _turn(engine, alice, memory, "桑给巴尔的果酱 zanzibar", "ann").message_id,
        _turn(engine, alice, memory, "zanzibar marmalade on toast", "li").message_id,
    }
    _turn(engine, alice, memory, "a walk by the harbour", "tom")
    return found


def test_a_search_and_a_context_emit_one_event_a_try_out_and_a_refusal_none(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    found = _seeded(engine, alice, memory)
    heard: list[Retrieved] = []
    search = SearchService(engine.store, engine.models, clock, engine.settings, [heard.append])
    request = SearchRequest(query="zanzibar", memory_ids=(memory.id,))
    hits = search.search(alice, request)
    ids = tuple(h.entry.message_id for h in hits)
    assert set(ids) == found
    assert heard == [Retrieved("zanzibar", (memory.id,), ids, clock.now())]
    search.context(alice, request)
    assert len(heard) == 2 and heard[1].entry_ids == ids
    search.try_out(alice, request)
    with pytest.raises(InvalidInput, match="query"):
        search.search(alice, SearchRequest(query=" ", memory_ids=(memory.id,)))
    assert len(heard) == 2


def test_the_use_counts_and_the_request_log_record_the_same_event(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    found = _seeded(engine, alice, memory)
    call = Call(channel="rest", route="/api/v1/messages/search", user_id=alice.user_id)
    with begin(call):
        hits = engine.search(alice, SearchRequest(query="zanzibar", memory_ids=(memory.id,)))
    assert call.returned == [h.entry.message_id for h in hits] and set(call.returned) == found
    engine.log_request(call, 200, 1.0)
    engine.usage.flush()
    engine.request_recorder.flush()
    for message_id in found:
        reads = engine.entry_reads(alice, memory.id, message_id)
        assert (reads.returned, reads.use_count) == (1, 1)


def test_a_memory_named_by_a_plain_id_is_logged_as_that_id(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    """Validation takes one memory id as text; the call notes the id, not its characters."""
    _seeded(engine, alice, memory)
    call = Call(channel="mcp", route="recall", user_id=alice.user_id)
    loose = SearchRequest(query="zanzibar", memory_ids=memory.id)  # type: ignore[arg-type]
    with begin(call):
        assert engine.search(alice, loose)
    assert call.memory_ids == {memory.id}
