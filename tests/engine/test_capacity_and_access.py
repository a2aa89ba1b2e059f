"""Capacity (FIFO/LRU eviction, exact under concurrent writers) and access on every path."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from recallery import (
    CapacityExceeded,
    Engine,
    Forbidden,
    Memory,
    NotFound,
    Principal,
    SearchRequest,
    TurnInput,
)
from recallery.access import Action, decide, readable
from recallery.models import Permission
from recallery.policies.capacity import entry_size, plan_eviction
from recallery.store.queries import EvictionCandidate
from recallery.testing import FrozenClock

DIM = 64  # the deterministic embedder's dimension


def small_memory(engine: Engine, actor: Principal, budget: int, policy: str = "FIFO") -> Memory:
    return engine.create_memory(
        actor,
        name=f"small-{policy}-{budget}",
        memory_type=["raw"],
        embd_id="x@Builtin",
        llm_id="y@Z",
        memory_size=budget,
        forgetting_policy=policy,
    )


def write(engine: Engine, actor: Principal, memory: Memory, text: str, **kw: object) -> int:
    (e,) = engine.add_messages(actor, [memory.id], [TurnInput(text, **kw)])  # type: ignore[arg-type]
    return e.message_id


def stored(engine: Engine, actor: Principal, memory: Memory) -> list[int]:
    page = engine.list_messages(actor, memory.id, page_size=100)
    return sorted(e.message_id for e in page.items)


def used(engine: Engine, memory: Memory) -> int:
    with engine.store.read() as r:
        m = r.memory(memory.id)
        assert m is not None
        return m.used_bytes


# --- pure policy ---------------------------------------------------------------------------


def test_plan_takes_the_shortest_prefix_and_skips_protected() -> None:
    c = [
        EvictionCandidate(1, 10, True),
        EvictionCandidate(2, 10, False),
        EvictionCandidate(3, 10, False),
    ]
    assert plan_eviction(budget=100, used=95, incoming=10, candidates=c).evict == (1,)
    assert plan_eviction(budget=100, used=95, incoming=20, candidates=c).evict == (1, 2)
    plan = plan_eviction(budget=100, used=95, incoming=10, candidates=c, protected=frozenset({1}))
    assert plan.evict == (2,)
    assert plan_eviction(budget=100, used=50, incoming=10, candidates=c).evict == ()
    with pytest.raises(CapacityExceeded, match="cannot decide"):
        plan_eviction(budget=100, used=100, incoming=50, candidates=c)
    with pytest.raises(CapacityExceeded, match="budget"):
        plan_eviction(budget=100, used=0, incoming=101, candidates=c)


def test_entry_size_counts_utf8_bytes_and_the_vector() -> None:
    assert entry_size("é", 384) == 2 + 4 * 384


# --- FIFO and LRU through the engine -------------------------------------------------------


def test_fifo_evicts_forgotten_first_then_oldest_by_record_time(
    engine: Engine, alice: Principal, clock: FrozenClock
) -> None:
    text = "x" * 100
    size = entry_size(f"User Input: {text}", DIM)
    m = small_memory(engine, alice, budget=size * 4)
    ids = []
    for i in range(4):
        # backdated conversation times in reverse: valid time must not decide eviction
        ids.append(
            write(
                engine,
                alice,
                m,
                "User Input: " + text,
                conversation_time=clock.now() - timedelta(days=10 - i * 3),
            )
        )
        clock.advance(minutes=1)
    engine.forget(alice, m.id, ids[2])
    new1 = write(engine, alice, m, "User Input: " + text)
    assert stored(engine, alice, m) == sorted([ids[0], ids[1], ids[3], new1])
    new2 = write(engine, alice, m, "User Input: " + text)
    assert stored(engine, alice, m) == sorted([ids[1], ids[3], new1, new2])
    assert used(engine, m) <= size * 4
    events = engine.audit_log(alice, memory_id=m.id, action="entry.evict").items
    assert sorted(e.message_id or 0 for e in events) == [ids[0], ids[2]]
    assert {e.actor for e in events} == {"policy:FIFO"}


def test_lru_evicts_the_least_recently_retrieved(
    engine: Engine, alice: Principal, clock: FrozenClock
) -> None:
    texts = ["alpha apples", "bravo bananas", "charlie cherries"]
    size = max(entry_size(t, DIM) for t in texts)
    m = small_memory(engine, alice, budget=size * 3, policy="LRU")
    ids = []
    for t in texts:
        ids.append(write(engine, alice, m, t))
        clock.advance(minutes=1)
    engine.search(alice, SearchRequest("alpha apples", (m.id,), top_n=1))
    engine.usage.flush()
    write(engine, alice, m, "delta dates")
    remaining = stored(engine, alice, m)
    assert ids[0] in remaining and ids[1] not in remaining and ids[2] in remaining


def test_a_write_larger_than_the_budget_is_refused(engine: Engine, alice: Principal) -> None:
    m = small_memory(engine, alice, budget=500)
    keep = write(engine, alice, m, "small")
    with pytest.raises(CapacityExceeded):
        write(engine, alice, m, "y" * 1000)
    assert stored(engine, alice, m) == [keep]


def test_concurrent_writers_never_exceed_the_budget(engine: Engine, alice: Principal) -> None:
    size = entry_size("w" * 50, DIM)
    budget = size * 10
    m = small_memory(engine, alice, budget=budget)
    errors: list[BaseException] = []
    peak: list[int] = []

    def writer(n: int) -> None:
        try:
            for i in range(15):
                write(engine, alice, m, f"{n:02d}{i:02d}" + "w" * 46)
                peak.append(used(engine, m))
        except BaseException as exc:  # collected and re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert max(peak) <= budget and used(engine, m) <= budget
    entries = engine.list_messages(alice, m.id, page_size=100).items
    assert len(entries) == 10
    assert sum(e.size_bytes for e in entries) == used(engine, m)


# --- access ------------------------------------------------------------------------------


def mem(tenant: str, permission: Permission = Permission.ME) -> Memory:
    return Memory(
        id="a" * 32,
        tenant_id=tenant,
        name="m",
        memory_types=(),
        embd_id="e@B",
        llm_id="l@P",
        permissions=permission,
    )


def test_decide_gives_reasons() -> None:
    owner = Principal("o", frozenset({"o"}))
    member = Principal("u", frozenset({"u", "o"}))
    stranger = Principal("s", frozenset({"s"}))
    scoped = Principal("o", frozenset({"o"}), scope=frozenset({"b" * 32}))
    assert decide(owner, Action.ERASE, mem("o")).reason == "owner"
    assert not decide(member, Action.READ, mem("o"))
    assert decide(member, Action.WRITE, mem("o", Permission.TEAM)).reason == "team member"
    assert "only the owner" in decide(member, Action.ERASE, mem("o", Permission.TEAM)).reason
    assert "not a member" in decide(stranger, Action.READ, mem("o", Permission.TEAM)).reason
    assert "scoped" in decide(scoped, Action.READ, mem("o")).reason
    private = mem("o")
    assert readable(stranger, [private.id], {private.id: private})[0].memory_ids == frozenset()


def test_a_caller_without_access_gets_nothing_even_naming_the_id(
    engine: Engine, alice: Principal, bob: Principal, memory: Memory
) -> None:
    (e,) = engine.add_turn(
        alice, [memory.id], user_input="alice's secret plan", agent_response="ok"
    )
    request = SearchRequest("secret plan", (memory.id,), similarity_threshold=0.0)
    assert engine.search(alice, request)
    assert engine.search(bob, request) == []
    assert engine.recent(bob, [memory.id]) == []
    for call in (
        lambda: engine.get_memory(bob, memory.id),
        lambda: engine.get_entry(bob, memory.id, e.message_id),
        lambda: engine.list_messages(bob, memory.id),
        lambda: engine.history(bob, memory.id, e.message_id),
        lambda: engine.forget(bob, memory.id, e.message_id),
        lambda: engine.erase(bob, memory.id, e.message_id),
        lambda: engine.update_memory(bob, memory.id, {"name": "mine"}),
        lambda: engine.delete_memory(bob, memory.id),
        lambda: engine.audit_log(bob, memory_id=memory.id),
    ):
        with pytest.raises(NotFound):
            call()
    assert engine.list_memories(bob).total == 0
    assert engine.audit_log(bob).total == 0
    assert engine.get_entry(alice, memory.id, e.message_id)[0].forget_at is None


def test_team_permission_shares_with_members_only(
    engine: Engine, alice: Principal, bob: Principal
) -> None:
    carol = engine.principal(engine.create_user("carol").id)
    shared = engine.create_memory(
        alice,
        name="team",
        memory_type=["raw"],
        embd_id="x@Builtin",
        llm_id="y@Z",
        permissions="team",
    )
    engine.add_turn(alice, [shared.id], user_input="team standup is at nine", agent_response="ok")
    engine.join_team(alice, alice.user_id, bob.user_id)
    bob = engine.principal(bob.user_id)
    request = SearchRequest("standup", (shared.id,), similarity_threshold=0.0)
    assert len(engine.search(bob, request)) == 1
    assert engine.search(carol, request) == []
    engine.add_turn(bob, [shared.id], user_input="bob adds a note", agent_response="ok")
    with pytest.raises(Forbidden):
        engine.update_memory(bob, shared.id, {"permissions": "me"})
    with pytest.raises(Forbidden):
        engine.delete_memory(bob, shared.id)
    with pytest.raises(Forbidden):
        engine.join_team(bob, alice.user_id, carol.user_id)


def test_a_scoped_key_sees_only_its_memories(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    other = engine.create_memory(
        alice, name="other", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    for m in (memory, other):
        engine.add_turn(alice, [m.id], user_input="shared words here", agent_response="ok")
    _, key = engine.create_api_key(alice, alice.user_id, scope=[memory.id])
    agent = engine.authenticate(key)
    hits = engine.search(
        agent, SearchRequest("shared words", (memory.id, other.id), similarity_threshold=0.0)
    )
    assert {h.entry.memory_id for h in hits} == {memory.id}
    assert [m.id for m in engine.list_memories(agent).items] == [memory.id]
    with pytest.raises(NotFound):
        engine.add_turn(agent, [other.id], user_input="x", agent_response="y")


def test_memories_with_different_embedders_cannot_be_searched_together(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    from recallery import InvalidInput
    from recallery.settings import ProviderConfig

    engine.models.providers["remote"] = ProviderConfig("http://127.0.0.1:1")
    other = engine.create_memory(
        alice, name="remote", memory_type=["raw"], embd_id="text-embed@Remote", llm_id="y@Z"
    )
    with pytest.raises(InvalidInput, match="different embedding models"):
        engine.search(alice, SearchRequest("q", (memory.id, other.id)))
