"""Curation at the engine, on every store: the Messages filters, bulk changes with a dry run,
the review queue and entries over time. Every filter seeds entries it must leave out."""

from __future__ import annotations

from datetime import timedelta

import pytest
from tests.support.engine import actions, extract, extracted, turn

from recallery import (
    Engine,
    EntryType,
    Forbidden,
    InvalidInput,
    Memory,
    NotFound,
    Principal,
    SearchRequest,
)
from recallery.models import Trust
from recallery.requests import Bucket, BulkAction, MessageFilter, message_filter_fields
from recallery.testing import FrozenClock

TYPES = ["raw", "semantic", "episodic"]


#: A Messages filter field by its SDK keyword.
ARGS = {spec.metadata["arg"]: spec.name for spec in message_filter_fields()}


def listed(engine: Engine, actor: Principal, memory: Memory, **filters: object) -> list[int]:
    where = MessageFilter(**{ARGS[k]: v for k, v in filters.items()})  # type: ignore[arg-type]
    page = engine.list_messages(actor, memory.id, where)
    return sorted(e.message_id for e in page.items)


def found(engine: Engine, actor: Principal, memory: Memory, query: str) -> set[int]:
    request = SearchRequest(query, (memory.id,), top_n=50, similarity_threshold=0.0)
    return {h.entry.message_id for h in engine.search(actor, request)}


# --- the Messages filters -------------------------------------------------------------------


def test_each_messages_filter_keeps_only_its_turns(
    engine: Engine, alice: Principal, mem: Memory, memory: Memory
) -> None:
    a = turn(engine, alice, mem, "plain", user_id="u-1", session_id="s-1", agent_id="ag-1")
    b = turn(engine, alice, mem, "second", user_id="u-2", session_id="s-10", agent_id="ag-2")
    c = turn(engine, alice, mem, "third", user_id="u-1", session_id="x-1", agent_id="ag-1")
    turn(engine, alice, memory, "other memory", user_id="u-1", session_id="s-1")
    extract(engine, a, "a fact", EntryType.SEMANTIC)
    extract(engine, b, "an event", EntryType.EPISODIC)
    engine.set_status(alice, mem.id, b.message_id, False)
    engine.forget(alice, mem.id, c.message_id)
    engine.review(alice, mem.id, a.message_id, "confirmed")

    assert listed(engine, alice, mem) == [a.message_id, b.message_id, c.message_id]
    assert listed(engine, alice, mem, user_id="u-1") == [a.message_id, c.message_id]
    assert listed(engine, alice, mem, session_id="s-1") == [a.message_id]
    assert listed(engine, alice, mem, keywords="S-1") == [a.message_id, b.message_id]
    assert listed(engine, alice, mem, agent_ids=["ag-2"]) == [b.message_id]
    assert listed(engine, alice, mem, types=["semantic"]) == [a.message_id]
    assert listed(engine, alice, mem, types="semantic,episodic") == [a.message_id, b.message_id]
    assert listed(engine, alice, mem, status=False) == [b.message_id]
    assert listed(engine, alice, mem, status=True) == [a.message_id, c.message_id]
    assert listed(engine, alice, mem, forgotten=True) == [c.message_id]
    assert listed(engine, alice, mem, forgotten=False) == [a.message_id, b.message_id]
    assert listed(engine, alice, mem, trust="confirmed") == [a.message_id]
    assert listed(engine, alice, mem, user_id="u-1", forgotten=False) == [a.message_id]
    episodic = MessageFilter(types=["episodic"])  # type: ignore[arg-type]
    page = engine.list_messages(alice, mem.id, episodic)
    assert page.total == 1 and [x.content for x in page.extracted[b.message_id]] == ["an event"]


def test_a_corrected_extract_no_longer_marks_its_turn_by_the_old_version(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    a = turn(engine, alice, mem, "one")
    fact = extract(engine, a, "a fact", EntryType.SEMANTIC)
    engine.correct(alice, mem.id, fact, "a better fact")
    assert listed(engine, alice, mem, types=["semantic"]) == [a.message_id]
    engine.erase(alice, mem.id, engine.history(alice, mem.id, fact)[-1].message_id)
    assert listed(engine, alice, mem, types=["semantic"]) == []


def test_messages_filters_name_the_field_they_refuse(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    for bad, field in (
        ({"types": ["fact"]}, "message_type"),
        ({"status": "yes"}, "status"),
        ({"forgotten": 1}, "forgotten"),
        ({"user_id": 7}, "user_id"),
        ({"agent_ids": [3]}, "agent_id"),
        ({"trust": "sure"}, "trust"),
    ):
        with pytest.raises(InvalidInput) as refused:
            engine.list_messages(alice, mem.id, MessageFilter(**bad))  # type: ignore[arg-type]
        assert refused.value.field == field


# --- bulk changes ---------------------------------------------------------------------------


def test_a_dry_run_counts_and_changes_nothing(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    ids = [
        turn(engine, alice, mem, f"lisbon note {i}", session_id="trip").message_id for i in (1, 2)
    ]
    turn(engine, alice, mem, "lisbon elsewhere", session_id="home")
    before = actions(engine, alice, mem)
    result = engine.bulk(alice, mem.id, "forget", filter=MessageFilter(session_id="trip"))
    assert (result.action, result.dry_run, result.count, result.ids) == (
        BulkAction.FORGET,
        True,
        2,
        tuple(ids),
    )
    assert result.changed == tuple(ids) and result.selected == 2 and result.token
    assert actions(engine, alice, mem) == before
    assert len(found(engine, alice, mem, "lisbon")) == 3


def test_bulk_forget_by_filter_cascades_and_audits_each_entry(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    trip = [turn(engine, alice, mem, f"lisbon note {i}", session_id="trip") for i in (1, 2)]
    home = turn(engine, alice, mem, "lisbon at home", session_id="home")
    fact = extract(engine, trip[0], "lisbon is sunny")
    result = engine.bulk(
        alice, mem.id, "forget", filter=MessageFilter(session_id="trip"), dry_run=False
    )
    assert result.count == 3 and result.selected == 2 and not result.dry_run
    assert set(result.changed) == {trip[0].message_id, trip[1].message_id, fact}
    assert found(engine, alice, mem, "lisbon") == {home.message_id}
    assert actions(engine, alice, mem)["entry.forget"] == 3
    restored = engine.bulk(
        alice, mem.id, "restore", message_ids=[trip[0].message_id], dry_run=False
    )
    assert set(restored.changed) == {trip[0].message_id, fact}
    assert found(engine, alice, mem, "lisbon") == {home.message_id, trip[0].message_id, fact}


def test_bulk_disable_and_enable_by_id(engine: Engine, alice: Principal, mem: Memory) -> None:
    a, b, c = (turn(engine, alice, mem, f"berlin note {i}") for i in range(3))
    off = engine.bulk(
        alice, mem.id, "disable", message_ids=[a.message_id, str(b.message_id)], dry_run=False
    )
    assert off.ids == (a.message_id, b.message_id)
    assert found(engine, alice, mem, "berlin") == {c.message_id}
    assert listed(engine, alice, mem, status=False) == [a.message_id, b.message_id]
    engine.bulk(alice, mem.id, "enable", message_ids=[a.message_id], dry_run=False)
    assert found(engine, alice, mem, "berlin") == {a.message_id, c.message_id}
    assert actions(engine, alice, mem)["entry.disable"] == 2


def test_bulk_erase_removes_turns_extracts_and_versions_once(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    a = turn(engine, alice, mem, "secret one", user_id="leaver")
    b = turn(engine, alice, mem, "secret two", user_id="leaver")
    keep = turn(engine, alice, mem, "secret kept", user_id="stayer")
    fact = extract(engine, a, "a secret fact")
    fixed = engine.correct(alice, mem.id, fact, "a corrected secret fact").message_id
    dry = engine.bulk(alice, mem.id, "erase", filter=MessageFilter(user_id="leaver"))
    assert (dry.selected, dry.count) == (2, 4)  # two turns, the fact and its correction
    done = engine.bulk(
        alice,
        mem.id,
        "erase",
        message_ids=[a.message_id, b.message_id, fixed],
        dry_run=False,
        reason="user left",
    )
    assert set(done.changed) == {a.message_id, b.message_id, fact, fixed}
    assert found(engine, alice, mem, "secret") == {keep.message_id}
    events = engine.audit_log(alice, memory_id=mem.id, action="entry.erase").items
    assert sorted(e.message_id for e in events if e.message_id is not None) == sorted(done.changed)
    assert {e.reason for e in events} == {"user left"}


def test_bulk_is_checked_as_each_change_would_be(
    engine: Engine, alice: Principal, bob: Principal
) -> None:
    shared = engine.create_memory(
        alice,
        name="team",
        memory_type=["raw"],
        embd_id="x@Builtin",
        llm_id="y@Z",
        permissions="team",
    )
    private = engine.create_memory(
        alice, name="mine", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    t = turn(engine, alice, shared, "shared turn")
    p = turn(engine, alice, private, "private turn")
    engine.join_team(alice, alice.user_id, bob.user_id)
    bob = engine.principal(bob.user_id)
    assert engine.bulk(bob, shared.id, "forget", message_ids=[t.message_id]).count == 1
    with pytest.raises(Forbidden, match="only the owner may erase"):
        engine.bulk(bob, shared.id, "erase", message_ids=[t.message_id])
    with pytest.raises(NotFound):
        engine.bulk(bob, private.id, "forget", message_ids=[p.message_id])
    _, key = engine.create_api_key(alice, alice.user_id, scope=[shared.id])
    scoped = engine.authenticate(key)
    with pytest.raises(NotFound):
        engine.bulk(scoped, private.id, "disable", filter=MessageFilter())
    with pytest.raises(NotFound, match=str(p.message_id)):
        engine.bulk(alice, shared.id, "forget", message_ids=[t.message_id, p.message_id])
    assert found(engine, alice, private, "private") == {p.message_id}


def test_bulk_refuses_what_it_cannot_do(engine: Engine, alice: Principal, mem: Memory) -> None:
    t = turn(engine, alice, mem, "a turn")
    for kwargs, field in (
        ({"action": "shred", "message_ids": [t.message_id]}, "action"),
        ({"action": "forget"}, "message_ids"),
        ({"action": "forget", "message_ids": [1], "filter": MessageFilter()}, "message_ids"),
        ({"action": "forget", "message_ids": []}, "message_ids"),
        ({"action": "forget", "message_ids": ["x"]}, "message_ids"),
        ({"action": "forget", "message_ids": [t.message_id], "dry_run": "no"}, "dry_run"),
        ({"action": "forget", "filter": MessageFilter(user_id="x" * 300)}, "filter.user_id"),
    ):
        action = kwargs.pop("action")
        with pytest.raises(InvalidInput) as refused:
            engine.bulk(alice, mem.id, action, **kwargs)  # type: ignore[arg-type]
        assert refused.value.field == field


# --- the review queue -----------------------------------------------------------------------


def test_the_review_queue_holds_unreviewed_extracts_oldest_first(
    engine: Engine, alice: Principal, mem: Memory, clock: FrozenClock
) -> None:
    raw = turn(engine, alice, mem, "where I live")
    first = extract(engine, raw, "lives in Lisbon")
    clock.advance(minutes=1)
    second = extract(engine, raw, "went to Porto", EntryType.EPISODIC)
    confirmed = extract(engine, raw, "confirmed fact")
    rejected = extract(engine, raw, "rejected fact")
    forgotten = extract(engine, raw, "forgotten fact")
    corrected = extract(engine, raw, "corrected fact")
    engine.review(alice, mem.id, confirmed, "confirmed")
    engine.review(alice, mem.id, rejected, "rejected")
    engine.forget(alice, mem.id, forgotten)
    newer = engine.correct(alice, mem.id, corrected, "a corrected fact").message_id
    other = engine.create_memory(
        alice, name="other", memory_type=TYPES, embd_id="x@Builtin", llm_id="m@nowhere"
    )
    extract(engine, turn(engine, alice, other, "elsewhere"), "another memory's fact")

    page = engine.review_queue(alice, mem.id)
    # a correction by someone who may review is their verdict: it does not wait
    assert engine.get_entry(alice, mem.id, newer)[0].trust is Trust.CONFIRMED
    assert [i.entry.message_id for i in page.items] == [first, second]
    assert page.total == 2
    assert all(i.source is not None and i.source.message_id == raw.message_id for i in page.items)
    second_page = engine.review_queue(alice, mem.id, page=2, page_size=1)
    assert [i.entry.message_id for i in second_page.items] == [second]
    engine.review(alice, mem.id, first, "rejected")
    assert [i.entry.message_id for i in engine.review_queue(alice, mem.id).items] == [second]
    with pytest.raises(InvalidInput) as refused:
        engine.review_queue(alice, mem.id, page_size=0)
    assert refused.value.field == "page_size"


def test_a_disabled_entry_leaves_the_review_queue_until_enabled(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    """A disabled entry is out of every retrieval, so it waits for no verdict (issue 54 item
    5); enabled again, it waits again. Three users, two scripts."""
    said = {"ivan": "живёт в Москве", "li": "住在上海", "tom": "lives in Lisbon"}
    facts = {
        user: extracted(engine, turn(engine, alice, mem, text, user_id=user), text)
        for user, text in said.items()
    }
    engine.set_status(alice, mem.id, facts["li"], False)

    def waiting(**kw: object) -> tuple[list[int], int]:
        page = engine.review_queue(alice, mem.id, **kw)  # type: ignore[arg-type]
        return [i.entry.message_id for i in page.items], page.total

    assert waiting() == ([facts["ivan"], facts["tom"]], 2)  # before: li's disabled fact too
    assert waiting(user_id="li") == ([], 0)
    engine.set_status(alice, mem.id, facts["li"], True)
    assert waiting() == ([facts["ivan"], facts["li"], facts["tom"]], 3)


def test_the_review_queue_is_for_readers_only(
    engine: Engine, alice: Principal, bob: Principal, mem: Memory
) -> None:
    extract(engine, turn(engine, alice, mem, "private"), "a private fact")
    with pytest.raises(NotFound):
        engine.review_queue(bob, mem.id)


# --- entries over time ----------------------------------------------------------------------


def test_the_timeline_counts_entries_by_type_and_recording_day(
    engine: Engine, alice: Principal, mem: Memory, memory: Memory, clock: FrozenClock
) -> None:
    clock.set(clock.now().replace(hour=10))
    first = turn(engine, alice, mem, "day one")
    extract(engine, first, "a fact")
    clock.advance(days=1)
    for text in ("day two", "day two again"):
        turn(engine, alice, mem, text)
    engine.forget(alice, mem.id, first.message_id)  # forgotten entries still count
    turn(engine, alice, memory, "another memory's turn")
    clock.advance(days=1)
    old = turn(engine, alice, mem, "backdated", conversation_time=clock.now() - timedelta(days=30))

    t = engine.timeline(alice, mem.id, bucket="day", buckets=4)
    assert t.bucket is Bucket.DAY and len(t.starts) == 4
    assert t.starts[-1] == clock.now().replace(hour=0, minute=0, second=0, microsecond=0)
    assert t.counts[EntryType.RAW] == (0, 1, 2, 1)  # by record time: backdating changes nothing
    assert t.counts[EntryType.SEMANTIC] == (0, 1, 0, 0)
    assert t.counts[EntryType.EPISODIC] == (0, 0, 0, 0)
    assert t.totals == (0, 2, 2, 1)
    engine.erase(alice, mem.id, old.message_id)
    assert engine.timeline(alice, mem.id, buckets=4).counts[EntryType.RAW] == (0, 1, 2, 0)
    weeks = engine.timeline(alice, mem.id, bucket="week", buckets=2)
    assert weeks.starts[-1].weekday() == 0 and sum(weeks.totals) == 4


def test_the_timeline_refuses_odd_buckets(engine: Engine, alice: Principal, mem: Memory) -> None:
    for kwargs, field in (({"bucket": "month"}, "bucket"), ({"buckets": 0}, "buckets")):
        with pytest.raises(InvalidInput) as refused:
            engine.timeline(alice, mem.id, **kwargs)  # type: ignore[arg-type]
        assert refused.value.field == field


def test_bulk_verdicts_are_reviews(
    engine: Engine, alice: Principal, bob: Principal, mem: Memory
) -> None:
    raw = turn(engine, alice, mem, "facts")
    a, b, c = (extract(engine, raw, f"lisbon fact {i}") for i in range(3))
    engine.review(alice, mem.id, b, "rejected")
    done = engine.bulk(alice, mem.id, "reject", message_ids=[a, b], dry_run=False, reason="wrong")
    assert done.selected == 2 and done.count == 1 and done.changed == (a,)  # b was already
    assert found(engine, alice, mem, "lisbon fact") == {raw.message_id, c}
    assert [i.entry.message_id for i in engine.review_queue(alice, mem.id).items] == [c]
    engine.bulk(alice, mem.id, "confirm", message_ids=[c], dry_run=False)
    assert engine.review_queue(alice, mem.id).total == 0
    rejects = engine.audit_log(alice, memory_id=mem.id, action="entry.reject").items
    assert sorted((e.message_id, e.reason) for e in rejects) == [(a, "wrong"), (b, "")]


# --- what became of the facts ---------------------------------------------------------------


def test_the_facts_page_counts_what_became_of_its_facts(
    engine: Engine, alice: Principal, mem: Memory
) -> None:
    """Read with the page: current, replaced (a correction), repeated by a turn still held
    (a repeat by a turn since erased is not), and erased or evicted (tombstones), each of the
    facts the filters select; three people, one of them writing Chinese."""
    tom, again, gone = (turn(engine, alice, mem, t, user_id="tom") for t in ("cat", "cat!", "x"))
    ana = turn(engine, alice, mem, "我住在上海", user_id="ana")
    li = turn(engine, alice, mem, "Привет", user_id="li")
    cat = extracted(engine, tom, "Tom has a cat")
    engine.correct(alice, mem.id, cat, "Tom has a grey cat")
    shanghai = extracted(engine, ana, "用户住在上海")
    extracted(engine, li, "Li says hello", message_type=EntryType.EPISODIC)
    lost = extracted(engine, li, "Li is leaving")
    with engine.store.write() as w:
        assert w.add_evidence(cat, again.message_id, engine.clock.now())
        assert w.add_evidence(shanghai, gone.message_id, engine.clock.now())
    engine.erase(alice, mem.id, gone.message_id)  # its repeat goes with it
    engine.erase(alice, mem.id, lost)

    def counts(**filters: object) -> tuple[int | None, ...]:
        page = engine.facts(alice, mem.id, **filters)  # type: ignore[arg-type]
        c = page.counts
        assert c.current == page.total
        return c.current, c.repeated, c.replaced, c.erased, c.evicted

    assert counts() == (3, 1, 1, 1, 0)
    assert counts(user_id="tom") == (1, 1, 1, None, None)  # a tombstone keeps no user
    assert counts(user_id="ana") == (1, 0, 0, None, None)
    assert counts(types="episodic") == (1, 0, 0, 0, 0)
    assert counts(text="上海") == (1, 0, 0, None, None)
    assert counts(text="CAT") == (1, 1, 1, None, None)  # SQLite reads its trigram index first
