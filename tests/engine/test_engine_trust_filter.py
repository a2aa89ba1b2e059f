"""The ``trust`` filter on search, context and the Messages list: each state seeded beside the
others, so a filter that is ignored, or one that lets rejected entries back, fails."""

from __future__ import annotations

import pytest

from recallery import (
    Engine,
    Entry,
    InvalidInput,
    Memory,
    MessageFilter,
    Principal,
    SearchRequest,
    Trust,
)


@pytest.fixture
def seeded(engine: Engine, alice: Principal, memory: Memory) -> dict[Trust, Entry]:
    """Three turns about tea, one in each trust state."""
    out = {}
    for trust, text in [
        (Trust.CONFIRMED, "green tea every morning"),
        (Trust.UNREVIEWED, "green tea after lunch"),
        (Trust.REJECTED, "green tea before bed"),
    ]:
        (entry,) = engine.add_turn(alice, [memory.id], user_input=text, agent_response="ok")
        if trust is not Trust.UNREVIEWED:
            engine.review(alice, memory.id, entry.message_id, trust.value)
        out[trust] = entry
    return out


def ids(engine: Engine, actor: Principal, memory: Memory, trust: object) -> set[int]:
    request = SearchRequest(
        "green tea",
        (memory.id,),
        top_n=10,
        similarity_threshold=0.0,
        trust=trust,  # type: ignore[arg-type]
    )
    return {h.entry.message_id for h in engine.search(actor, request)}


def test_search_keeps_only_the_trust_states_asked_for(
    engine: Engine, alice: Principal, memory: Memory, seeded: dict[Trust, Entry]
) -> None:
    confirmed, unreviewed, rejected = (
        seeded[t].message_id for t in (Trust.CONFIRMED, Trust.UNREVIEWED, Trust.REJECTED)
    )
    assert ids(engine, alice, memory, None) == {confirmed, unreviewed}
    assert ids(engine, alice, memory, frozenset({Trust.CONFIRMED})) == {confirmed}
    assert ids(engine, alice, memory, "unreviewed") == {unreviewed}
    assert ids(engine, alice, memory, ["confirmed", "unreviewed"]) == {confirmed, unreviewed}
    assert rejected not in ids(engine, alice, memory, "confirmed,unreviewed")


def test_search_refuses_to_look_for_rejected_entries(
    engine: Engine, alice: Principal, memory: Memory, seeded: dict[Trust, Entry]
) -> None:
    with pytest.raises(InvalidInput) as err:
        ids(engine, alice, memory, "rejected")
    assert err.value.field == "trust"
    with pytest.raises(InvalidInput) as err:
        ids(engine, alice, memory, "trusted")
    assert err.value.field == "trust"


def test_context_takes_the_same_filter(
    engine: Engine, alice: Principal, memory: Memory, seeded: dict[Trust, Entry]
) -> None:
    request = SearchRequest(
        "green tea", (memory.id,), similarity_threshold=0.0, trust=frozenset({Trust.CONFIRMED})
    )
    block = engine.context(alice, request)
    assert block.message_ids == (seeded[Trust.CONFIRMED].message_id,)


def test_the_messages_list_filters_by_trust_rejected_included(
    engine: Engine, alice: Principal, memory: Memory, seeded: dict[Trust, Entry]
) -> None:
    def listed(trust: object) -> set[int]:
        page = engine.list_messages(alice, memory.id, MessageFilter(trust=trust))
        return {e.message_id for e in page.items}

    everyone = {e.message_id for e in seeded.values()}
    assert listed(None) == everyone
    assert listed("rejected") == {seeded[Trust.REJECTED].message_id}
    assert listed(["confirmed", "rejected"]) == {
        seeded[Trust.CONFIRMED].message_id,
        seeded[Trust.REJECTED].message_id,
    }
    confirmed = MessageFilter(trust="confirmed")  # type: ignore[arg-type]
    assert engine.list_messages(alice, memory.id, confirmed).total == 1
    with pytest.raises(InvalidInput):
        listed("nobody")
