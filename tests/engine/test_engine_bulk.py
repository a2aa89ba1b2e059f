"""Bulk changes keep their word: the dry run says exactly what applying changes (cascades in,
entries already as asked out), applying with its token changes exactly that or nothing, and a
change is one transaction. The property test runs random selections, actions and writes made
between the preview and the apply."""

from __future__ import annotations

from typing import Any
from uuid import uuid4

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.engine import actions, extract, found, turn

from recallery import Conflict, Engine, InvalidInput, Memory, NotFound, Principal
from recallery.models import Scope
from recallery.requests import BulkAction, MessageFilter
from recallery.store.filters import EntryFilter
from recallery.store.writer import Writer


def state(engine: Engine, memory: Memory) -> dict[int, tuple[Any, ...]]:
    """Every entry of ``memory`` (retired ones too) as the fields a bulk change sets."""
    with engine.store.read() as r:
        every, _ = r.entries(Scope.of(memory.id), EntryFilter(current_only=False), limit=10**6)
    return {e.message_id: (e.status, e.forget_at, e.trust) for e in every}


def differing(before: dict[int, tuple[Any, ...]], after: dict[int, tuple[Any, ...]]) -> set[int]:
    return {i for i in before.keys() | after.keys() if before.get(i) != after.get(i)}


# --- the dry run counts what changes (defect 7) ---------------------------------------------


def test_disable_does_not_count_turns_already_disabled(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    ids = [turn(engine, alice, mem, f"note {i}").message_id for i in range(4)]
    engine.set_status(alice, mem.id, ids[0], False)
    dry = engine.bulk(alice, mem.id, "disable", message_ids=ids)
    assert (dry.selected, dry.count, dry.changed) == (4, 3, tuple(ids[1:]))
    done = engine.bulk(alice, mem.id, "disable", message_ids=ids, dry_run=False)
    assert (done.count, done.changed) == (3, tuple(ids[1:]))


def test_a_verdict_on_selected_turns_reviews_the_facts_extracted_from_them(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    """Confirming or rejecting turns picked by a filter reviews their current facts: what a
    curator selecting turns on the Messages page means. Another turn's fact is left as it is."""
    spam = turn(engine, alice, mem, "buy cheap watches", user_id="bot")
    fact = extract(engine, spam, "The user sells cheap watches.")
    kept = turn(engine, alice, mem, "I live in Lisbon", user_id="ann")
    other = extract(engine, kept, "The user lives in Lisbon.")
    where = MessageFilter(user_id="bot")
    dry = engine.bulk(alice, mem.id, "reject", filter=where, reason="spam")
    assert (dry.selected, dry.changed) == (1, (spam.message_id, fact))
    done = engine.bulk(alice, mem.id, "reject", filter=where, reason="spam", dry_run=False)
    assert done.changed == dry.changed
    trust = {e: engine.get_entry(alice, mem.id, e)[0].trust.value for e in (fact, other)}
    assert trust == {fact: "rejected", other: "unreviewed"}
    assert fact not in found(engine, alice, mem, "cheap watches")
    confirmed = engine.bulk(alice, mem.id, "confirm", message_ids=[kept.message_id], dry_run=False)
    assert confirmed.changed == (kept.message_id, other)


def test_erasing_a_corrected_turn_erases_its_older_versions_too(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    """The erasure's changes start at the older version (a smaller id than the one selected),
    which the plan never read: applying still knows the memory."""
    old = turn(engine, alice, mem, "I live in Porto")
    new = engine.correct(alice, mem.id, old.message_id, "I live in Lisbon")
    dry = engine.bulk(alice, mem.id, "erase", message_ids=[new.message_id])
    assert dry.changed == (old.message_id, new.message_id)
    done = engine.bulk(alice, mem.id, "erase", message_ids=[new.message_id], dry_run=False)
    assert done.changed == dry.changed
    for gone in (old.message_id, new.message_id):
        with pytest.raises(NotFound):
            engine.get_entry(alice, mem.id, gone)


def test_restore_with_nothing_forgotten_counts_nothing(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    ids = [turn(engine, alice, mem, f"note {i}").message_id for i in range(4)]
    dry = engine.bulk(alice, mem.id, "restore", filter=MessageFilter())
    assert (dry.selected, dry.count) == (4, 0)
    before = actions(engine, alice, mem)
    assert engine.bulk(alice, mem.id, "restore", message_ids=ids, dry_run=False).count == 0
    assert actions(engine, alice, mem) == before


def test_the_dry_run_counts_the_extracts_that_go_with_their_turns(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    turns = [turn(engine, alice, mem, f"trip {i}", session_id="trip") for i in range(2)]
    facts = [extract(engine, t, f"fact {i}") for i, t in enumerate(turns)]
    dry = engine.bulk(alice, mem.id, "forget", filter=MessageFilter(session_id="trip"))
    assert (dry.selected, dry.count) == (2, 4)
    assert set(dry.changed) == {*(t.message_id for t in turns), *facts}
    done = engine.bulk(
        alice, mem.id, "forget", filter=MessageFilter(session_id="trip"), dry_run=False
    )
    assert done.changed == dry.changed
    assert actions(engine, alice, mem)["entry.forget"] == 4


# --- apply acts on what was previewed (defect 3) --------------------------------------------


def test_apply_with_the_token_refuses_a_selection_that_grew(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    for i in range(3):
        turn(engine, alice, mem, f"trip {i}", session_id="trip")
    where = MessageFilter(session_id="trip")
    dry = engine.bulk(alice, mem.id, "forget", filter=where)
    assert dry.count == 3
    turn(engine, alice, mem, "written after the preview", session_id="trip")
    before, events = state(engine, mem), actions(engine, alice, mem)
    with pytest.raises(Conflict, match="would now change 4 of 4"):
        engine.bulk(alice, mem.id, "forget", filter=where, dry_run=False, token=dry.token)
    assert state(engine, mem) == before and actions(engine, alice, mem) == events
    again = engine.bulk(alice, mem.id, "forget", filter=where)
    done = engine.bulk(alice, mem.id, "forget", filter=where, dry_run=False, token=again.token)
    assert done.count == 4 and done.changed == again.changed


def test_erase_with_the_token_never_deletes_what_was_not_counted(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    t = turn(engine, alice, mem, "leaver one", user_id="leaver")
    dry = engine.bulk(alice, mem.id, "erase", message_ids=[t.message_id])
    fact = extract(engine, t, "extracted after the preview")
    with pytest.raises(Conflict):
        engine.bulk(
            alice, mem.id, "erase", message_ids=[t.message_id], dry_run=False, token=dry.token
        )
    assert fact in state(engine, mem)


def test_a_token_that_is_not_one_names_its_field(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    t = turn(engine, alice, mem, "note")
    with pytest.raises(InvalidInput) as refused:
        engine.bulk(alice, mem.id, "forget", message_ids=[t.message_id], token=["x"])
    assert refused.value.field == "token"


# --- all or nothing (defect 4) --------------------------------------------------------------


def test_an_id_erased_since_the_preview_changes_nothing(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    ids = [turn(engine, alice, mem, f"note {i}").message_id for i in range(5)]
    engine.bulk(alice, mem.id, "forget", message_ids=ids)
    engine.erase(alice, mem.id, ids[-1])
    before, events = state(engine, mem), actions(engine, alice, mem)
    with pytest.raises(NotFound, match="nothing was changed"):
        engine.bulk(alice, mem.id, "forget", message_ids=ids, dry_run=False)
    assert state(engine, mem) == before and actions(engine, alice, mem) == events


def test_a_failure_half_way_leaves_every_entry_as_it_was(
    engine: Engine, alice: Principal, mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [turn(engine, alice, mem, f"note {i}").message_id for i in range(6)]
    before, events = state(engine, mem), actions(engine, alice, mem)
    written = 0
    original = Writer.audit

    def failing(self: Writer, **kw: Any) -> None:
        nonlocal written
        written += 1
        if written == 4:
            raise RuntimeError("the disk filled up")
        original(self, **kw)

    monkeypatch.setattr(Writer, "audit", failing)
    with pytest.raises(RuntimeError):
        engine.bulk(alice, mem.id, "disable", message_ids=ids, dry_run=False)
    monkeypatch.undo()
    assert state(engine, mem) == before and actions(engine, alice, mem) == events


# --- the property ---------------------------------------------------------------------------

ACTIONS = [a.value for a in BulkAction]
#: What may happen between the preview and the apply.
WRITES = ["nothing", "new turn", "new extract", "forget one", "disable one", "erase one"]


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    turns = draw(
        st.lists(st.tuples(st.integers(0, 2), st.booleans(), st.booleans()), min_size=1, max_size=5)
    )
    return {
        "turns": turns,  # per turn: extracts, disabled, forgotten
        "action": draw(st.sampled_from(ACTIONS)),
        "by_filter": draw(st.booleans()),
        "pick": draw(st.lists(st.integers(0, 50), min_size=1, max_size=6)),
        "write": draw(st.sampled_from(WRITES)),
        "target": draw(st.integers(0, 50)),
    }


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=scenarios())
@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_the_dry_run_is_what_applying_changes(
    engine: Engine, alice: Principal, case: dict[str, Any]
) -> None:
    memory = engine.create_memory(
        alice,
        name=f"m{uuid4().hex[:12]}",
        memory_type=["raw", "semantic"],
        embd_id="x@Builtin",
        llm_id="m@nowhere",
    )
    every: list[int] = []
    raws = []
    for i, (extracts, disabled, forgotten) in enumerate(case["turns"]):
        t = turn(engine, alice, memory, f"turn {i}", session_id="s")
        raws.append(t)
        every.append(t.message_id)
        every.extend(extract(engine, t, f"fact {i}.{k}") for k in range(extracts))
        if disabled:
            engine.set_status(alice, memory.id, t.message_id, False)
        if forgotten:
            engine.forget(alice, memory.id, every[-1])
    chosen = sorted({every[p % len(every)] for p in case["pick"]})
    where: dict[str, Any] = (
        {"filter": MessageFilter(session_id="s")} if case["by_filter"] else {"message_ids": chosen}
    )
    action = case["action"]
    dry = engine.bulk(alice, memory.id, action, **where)
    assert dry.count == len(dry.changed)

    write, target = case["write"], every[case["target"] % len(every)]
    if write == "new turn":
        turn(engine, alice, memory, "late", session_id="s")
    elif write == "new extract":
        extract(engine, raws[case["target"] % len(raws)], "late fact")
    elif write == "forget one":
        engine.forget(alice, memory.id, target)
    elif write == "disable one":
        engine.set_status(alice, memory.id, target, False)
    elif write == "erase one":
        engine.erase(alice, memory.id, target)

    before, events = state(engine, memory), actions(engine, alice, memory)
    try:
        done = engine.bulk(alice, memory.id, action, dry_run=False, token=dry.token, **where)
    except (Conflict, NotFound):
        assert write != "nothing"
        assert state(engine, memory) == before and actions(engine, alice, memory) == events
        return
    assert (done.count, done.changed) == (dry.count, dry.changed)
    assert differing(before, state(engine, memory)) == set(dry.changed)
    assert sum(actions(engine, alice, memory).values()) - sum(events.values()) == dry.count
