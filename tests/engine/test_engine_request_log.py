"""The request log in the engine, on every backend: an erased entry's id leaves the log
whichever way it goes (single erase, cascade, a user's erasure, memory deletion); a call
recorded after its entry went names nothing; retention prunes by size and by age."""

from __future__ import annotations

from recallery import Engine, Memory, Principal
from recallery.models import Entry
from recallery.requests import SearchRequest
from recallery.requests.requestlog import Call, RequestQuery, begin
from recallery.store.base import Store
from recallery.testing import FrozenClock


def _turn(engine: Engine, actor: Principal, memory: Memory, text: str, **kw: str) -> Entry:
    (entry,) = engine.add_turn(actor, [memory.id], user_input=text, agent_response="ok", **kw)
    return entry


def _searched(engine: Engine, actor: Principal, memory: Memory, query: str) -> list[int]:
    """One logged search, as an edge records it; the ids it returned."""
    call = Call(channel="mcp", route="recall", key_id="k1", user_id=actor.user_id)
    with begin(call):
        hits = engine.search(actor, SearchRequest(query=query, memory_ids=(memory.id,)))
    engine.log_request(call, 200, 1.0)
    engine.request_recorder.flush()
    return [h.entry.message_id for h in hits]


def _ids_in_log(store: Store) -> set[int]:
    with store.read() as r:
        return {int(row[0]) for row in r.conn.execute("SELECT message_id FROM request_entries")}


def test_every_way_of_erasing_takes_the_ids_out_of_the_log(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    one = _turn(engine, alice, memory, "zanzibar marmalade one", user_id="tom")
    two = _turn(engine, alice, memory, "zanzibar marmalade two", user_id="ann")
    three = _turn(engine, alice, memory, "zanzibar marmalade three", user_id="ann")
    returned = _searched(engine, alice, memory, "zanzibar marmalade")
    assert set(returned) == {one.message_id, two.message_id, three.message_id}
    assert _ids_in_log(engine.store) == set(returned)
    engine.erase(alice, memory.id, two.message_id)
    assert _ids_in_log(engine.store) == {one.message_id, three.message_id}
    engine.erase_subject(alice, "tom", dry_run=False)
    assert _ids_in_log(engine.store) == {three.message_id}
    engine.delete_memory(alice, memory.id)
    assert _ids_in_log(engine.store) == set()
    rows, total = engine.request_log(alice, RequestQuery())
    assert total == 1 and rows[0].entry_ids == ()  # the call is still logged, its ids are not


def test_a_call_recorded_after_its_entry_was_erased_names_nothing(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    entry = _turn(engine, alice, memory, "zanzibar marmalade")
    call = Call(channel="rest", route="/api/v1/messages/search", user_id=alice.user_id)
    with begin(call):
        engine.search(alice, SearchRequest(query="zanzibar", memory_ids=(memory.id,)))
    assert call.returned == [entry.message_id]
    engine.erase(alice, memory.id, entry.message_id)
    engine.log_request(call, 200, 1.0)  # queued while the erasure ran
    engine.request_recorder.flush()
    assert _ids_in_log(engine.store) == set()


def test_retention_prunes_by_size_and_by_age(
    engine: Engine, alice: Principal, clock: FrozenClock
) -> None:
    log = engine.request_recorder
    for _ in range(5):
        log.record(Call(channel="rest", route="/r", user_id=alice.user_id), 200, 1.0)
        clock.advance(seconds=1)
    log.flush()
    assert engine.request_log(alice, RequestQuery())[1] == 5
    log.settings = log.settings.__class__(request_log_max_rows=3)
    newest = [r.at for r in engine.request_log(alice, RequestQuery())[0]][:3]
    assert log.prune() == 2
    assert [r.at for r in engine.request_log(alice, RequestQuery())[0]] == newest
    clock.advance(days=31)
    assert log.prune() == 3 and engine.request_log(alice, RequestQuery())[1] == 0


def test_the_log_turned_off_records_nothing(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    engine.request_recorder.settings = engine.settings.__class__(request_log=False)
    _turn(engine, alice, memory, "zanzibar marmalade")
    _searched(engine, alice, memory, "zanzibar")
    assert engine.request_log(alice, RequestQuery())[1] == 0
