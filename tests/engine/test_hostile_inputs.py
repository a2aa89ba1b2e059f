"""What a red-team run found at the engine, pinned: each case seeds what must survive and
checks the refusal names its field (the REST layer maps InvalidInput to a 400, code 101)."""

from __future__ import annotations

import pytest

from recallery import (
    Engine,
    Forbidden,
    InvalidInput,
    Memory,
    Permission,
    Principal,
    SearchRequest,
)
from recallery.errors import KeyRevoked
from recallery.models import AuditAction
from recallery.providers.registry import ModelRegistry


def write(engine: Engine, actor: Principal, memory: Memory, text: str) -> int:
    (entry,) = engine.add_turn(actor, [memory.id], user_input=text, agent_response="ok")
    return entry.message_id


@pytest.mark.parametrize(
    "when", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "10000-01-01T00:00:00"]
)
def test_times_out_of_range_are_refused_by_name(
    engine: Engine, alice: Principal, memory: Memory, when: str
) -> None:
    kept = write(engine, alice, memory, "tea at noon")
    with pytest.raises(InvalidInput) as err:
        engine.add_turn(
            alice, [memory.id], user_input="x", agent_response="y", conversation_time=when
        )
    assert err.value.field == "conversation_time"
    for field in ("valid_on", "as_of"):
        request = SearchRequest("tea", (memory.id,), **{field: when})  # type: ignore[arg-type]
        with pytest.raises(InvalidInput) as err:
            engine.search(alice, request)
        assert err.value.field == field
    with pytest.raises(InvalidInput) as err:
        engine.audit_log(alice, since=when)
    assert err.value.field == "since"
    with pytest.raises(InvalidInput) as err:
        engine.correct(alice, memory.id, kept, "tea at one", valid_at=when)
    assert err.value.field == "valid_at"
    assert engine.get_entry(alice, memory.id, kept)[0].content.startswith("User Input: tea")


@pytest.mark.parametrize("bad", ["9223372036854775808", "9" * 5000, "²", "١٢", "-1", "1.0"])
def test_message_ids_are_ascii_digits_in_64_bits(
    engine: Engine, alice: Principal, memory: Memory, bad: str
) -> None:
    write(engine, alice, memory, "one")
    with pytest.raises(InvalidInput) as err:
        engine.get_entry(alice, memory.id, bad)
    assert err.value.field == "message_id"


def test_the_largest_message_id_is_well_formed_but_absent(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    from recallery import NotFound
    from recallery.validation import MAX_MESSAGE_ID

    with pytest.raises(NotFound):
        engine.get_entry(alice, memory.id, str(MAX_MESSAGE_ID))
    with pytest.raises(InvalidInput):
        engine.get_entry(alice, memory.id, str(MAX_MESSAGE_ID + 1))


@pytest.mark.parametrize("text", ["\ud800", "a\x00b"])
def test_text_that_no_store_can_hold_is_refused(
    engine: Engine, alice: Principal, memory: Memory, text: str
) -> None:
    with pytest.raises(InvalidInput) as err:
        engine.add_turn(alice, [memory.id], user_input=text, agent_response="ok")
    assert err.value.field == "user_input"
    assert engine.list_messages(alice, memory.id).total == 0


def test_pages_past_any_store_are_refused(engine: Engine, alice: Principal, memory: Memory) -> None:
    for call in (
        lambda: engine.list_memories(alice, page=10**18),
        lambda: engine.list_messages(alice, memory.id, page=10**18),
        lambda: engine.jobs(alice, memory.id, page=10**18),
    ):
        with pytest.raises(InvalidInput) as err:
            call()
        assert err.value.field == "page"
    with pytest.raises(InvalidInput) as err:
        engine.audit_log(alice, offset=10**19)
    assert err.value.field == "offset"


def test_temperature_must_be_a_number(engine: Engine, alice: Principal, memory: Memory) -> None:
    with pytest.raises(InvalidInput) as err:
        engine.update_memory(alice, memory.id, {"temperature": "0.5"})
    assert err.value.field == "temperature"
    assert engine.update_memory(alice, memory.id, {"temperature": 0.5}).temperature == 0.5


@pytest.fixture
def shared(engine: Engine, alice: Principal, bob: Principal, memory: Memory) -> Principal:
    """``memory`` shared with alice's team, which bob joins; returns bob as a member."""
    engine.update_memory(alice, memory.id, {"permissions": Permission.TEAM.value})
    engine.join_team(alice, alice.user_id, bob.user_id)
    return engine.principal(bob.user_id)


def test_a_member_cannot_shrink_the_budget_or_change_the_policy(
    engine: Engine, alice: Principal, memory: Memory, shared: Principal
) -> None:
    ids = [write(engine, alice, memory, f"fact {i}") for i in range(3)]
    for change in ({"memory_size": 1700}, {"forgetting_policy": "LRU"}):
        with pytest.raises(Forbidden):
            engine.update_memory(shared, memory.id, change, evict=True)
    assert engine.update_memory(shared, memory.id, {"description": "ours"}).description == "ours"
    write(engine, shared, memory, "member's turn")
    listed = {e.message_id for e in engine.list_messages(alice, memory.id).items}
    assert set(ids) <= listed
    assert engine.get_memory(alice, memory.id).memory_size == memory.memory_size


def test_shrinking_below_what_is_held_needs_the_owner_to_ask_for_eviction(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    ids = [write(engine, alice, memory, f"fact number {i}") for i in range(4)]
    held = engine.get_memory(alice, memory.id)
    small = held.used_bytes // 2
    with pytest.raises(InvalidInput) as err:
        engine.update_memory(alice, memory.id, {"memory_size": small})
    assert err.value.field == "memory_size"
    assert engine.get_memory(alice, memory.id).used_bytes == held.used_bytes

    shrunk = engine.update_memory(alice, memory.id, {"memory_size": small}, evict=True)
    assert shrunk.memory_size == small and shrunk.used_bytes <= small
    left = [e.message_id for e in engine.list_messages(alice, memory.id).items]
    assert 0 < len(left) < len(ids) and ids[0] not in left  # FIFO: the oldest went first
    evicted = engine.audit_log(alice, memory_id=memory.id, action=AuditAction.ENTRY_EVICT)
    assert {e.message_id for e in evicted.items} == set(ids) - set(left)


def test_a_scoped_key_cannot_create_memories(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    scoped = engine.principal(alice.user_id, frozenset({memory.id}))
    with pytest.raises(Forbidden):
        engine.create_memory(
            scoped,
            name="another",
            memory_type=["raw"],
            embd_id="BAAI/bge-small-en-v1.5@Builtin",
            llm_id="glm-4-flash@ZHIPU-AI",
        )
    assert [m.id for m in engine.list_memories(alice).items] == [memory.id]


def test_a_revoked_key_is_never_enabled_again(engine: Engine) -> None:
    admin, _ = engine.ensure_admin("configured-admin-key")
    actor = engine.principal(admin.id)
    (key,) = engine.list_api_keys(actor, admin.id)
    engine.revoke_api_key(actor, admin.id, key.id)
    with pytest.raises(KeyRevoked):
        engine.ensure_admin("configured-admin-key")
    from recallery import Unauthorized

    with pytest.raises(Unauthorized):
        engine.authenticate("configured-admin-key")
    again, fresh = engine.ensure_admin(None)
    assert again.id == admin.id and fresh is not None
    assert engine.authenticate(fresh).user_id == admin.id


def test_a_write_to_several_memories_is_all_or_nothing(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    from recallery import CapacityExceeded

    full = engine.create_memory(
        alice,
        name="tiny",
        memory_type=["raw"],
        embd_id="BAAI/bge-small-en-v1.5@Builtin",
        llm_id="glm-4-flash@ZHIPU-AI",
        memory_size=2000,
    )
    with pytest.raises(CapacityExceeded):
        engine.add_turn(
            alice, [memory.id, full.id], user_input="x" * 3000, agent_response="a long turn"
        )
    assert engine.list_messages(alice, memory.id).total == 0
    assert engine.list_messages(alice, full.id).total == 0
    engine.update_memory(alice, full.id, {"memory_size": 100_000})
    engine.add_turn(alice, [memory.id, full.id], user_input="x" * 3000, agent_response="again")
    assert engine.list_messages(alice, memory.id).total == 1
    assert engine.list_messages(alice, full.id).total == 1


def test_a_hopeless_write_is_refused_before_anything_is_embedded(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    from recallery import CapacityExceeded, TurnInput

    class Counting:
        def __init__(self, inner: object) -> None:
            self.inner, self.calls = inner, 0

        def __getattr__(self, name: str) -> object:
            return getattr(self.inner, name)

        def embed(self, texts: list[str]) -> object:
            self.calls += 1
            return self.inner.embed(texts)  # type: ignore[attr-defined]

    counting = Counting(engine.models.embedder(memory.embd_id))
    counted = Engine(
        engine.store, models=ModelRegistry(builtin=lambda: counting), clock=engine.clock
    )  # type: ignore[arg-type,return-value]
    turns = [TurnInput("y" * 100_000) for _ in range(60)]  # 6 MB against a 5 MiB budget
    with pytest.raises(CapacityExceeded):
        counted.add_messages(alice, [memory.id], turns)
    assert counting.calls == 0
    assert engine.list_messages(alice, memory.id).total == 0
    counted.add_messages(alice, [memory.id], turns[:1])
    assert counting.calls == 1


def test_a_refused_import_into_a_new_memory_leaves_no_memory_behind(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    from recallery import CapacityExceeded

    for i in range(3):
        write(engine, alice, memory, f"turn {i} " + "z" * 400)
    records = engine.export_memory(alice, memory.id)
    header = dict(records[0])
    header["memory"] = {**header["memory"], "memory_size": 1500}
    with pytest.raises(CapacityExceeded):
        engine.import_memory(alice, None, [header, *records[1:]])
    assert [m.id for m in engine.list_memories(alice).items] == [memory.id]

    scoped = engine.principal(alice.user_id, frozenset({memory.id}))
    with pytest.raises(Forbidden):
        engine.import_memory(scoped, None, records)
    assert engine.list_memories(alice).total == 1

    report = engine.import_memory(alice, None, records)
    assert report.imported == 3 and engine.list_memories(alice).total == 2
    assert engine.list_messages(alice, report.memory_id).total == 3


@pytest.mark.parametrize("field", ["name", "llm_id", "embd_id"])
@pytest.mark.parametrize("bad", ["\ud800", "x\x00y"])
def test_memory_settings_no_store_can_hold_are_refused(
    engine: Engine, alice: Principal, field: str, bad: str
) -> None:
    fields: dict[str, object] = {
        "name": "notes",
        "memory_type": ["raw"],
        "embd_id": "BAAI/bge-small-en-v1.5@Builtin",
        "llm_id": "glm-4-flash@ZHIPU-AI",
        field: bad + ("@Builtin" if field == "embd_id" else ""),
    }
    with pytest.raises(InvalidInput) as err:
        engine.create_memory(alice, **fields)  # type: ignore[arg-type]
    assert err.value.field == field
    assert engine.list_memories(alice).total == 0


def test_a_listing_never_widens_a_keys_scope(
    engine: Engine, alice: Principal, memory: Memory
) -> None:
    other = engine.create_memory(
        alice,
        name="other",
        memory_type=["raw"],
        embd_id="BAAI/bge-small-en-v1.5@Builtin",
        llm_id="glm-4-flash@ZHIPU-AI",
    )
    for scope, asked, shown in [
        (frozenset({memory.id}), [other.id], set()),
        (frozenset({memory.id}), [memory.id, other.id], {memory.id}),
        (frozenset({memory.id}), None, {memory.id}),
        (frozenset(), [memory.id], set()),
        (frozenset(), None, set()),
    ]:
        scoped = engine.principal(alice.user_id, scope)
        page = engine.list_memories(scoped, ids=asked)
        assert {m.id for m in page.items} == shown, (scope, asked)
