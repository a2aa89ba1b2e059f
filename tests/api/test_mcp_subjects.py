"""The MCP tools of the data-subject request path (``forget_subject``, ``erase_subject``, as the
engine and the SDK name them), over streamable HTTP and over the SDK backend: a dry run first,
then the change, checked against the store; a key that may not change a memory leaves it
untouched. The old names ``forget_user`` and ``erase_user`` still work, described as
deprecated, under the same capabilities."""

from __future__ import annotations

from collections.abc import Callable

from tests.support.api import EMBD, LLM, Account
from tests.support.mcp_sessions import Opener, run

from recallery import Engine, Memory
from recallery.mcp.tools import TOOLS
from recallery.models import Scope
from recallery.store.filters import EntryFilter


def _seed(engine: Engine, owner: Account) -> tuple[list[Memory], set[int]]:
    """Two memories with a turn of Tom and one of Ann each; the memories and Ann's turns."""
    memories, ann = [], set()
    for name in ("one", "two"):
        m = engine.create_memory(
            owner.principal, name=name, memory_type=["raw"], embd_id=EMBD, llm_id=LLM
        )
        memories.append(m)
        for user in ("tom", "ann"):
            (raw,) = engine.add_turn(
                owner.principal, [m.id], user_input=f"{user} was here", agent_response="ok",
                user_id=user,
            )  # fmt: skip
            if user == "ann":
                ann.add(raw.message_id)
    return memories, ann


def _users(engine: Engine, m: Memory, *, forgotten: bool = False) -> list[str]:
    f = EntryFilter(current_only=False, forgotten_only=forgotten)
    with engine.store.read() as r:
        return sorted(e.user_id for e in r.entries(Scope.of(m.id), f, limit=100)[0])


def test_erase_subject_counts_then_erases(
    engine: Engine, account: Callable[..., Account], opener: Opener
) -> None:
    alice = account("alice")
    (one, two), _ = _seed(engine, alice)

    async def check() -> None:
        async with opener(alice.key) as s:
            dry = await s.ok("erase_subject", user_id="tom")
            assert (dry["dry_run"], dry["count"]) == (True, 2)
            assert {m["name"] for m in dry["memories"]} == {"one", "two"}
            assert _users(engine, one) == ["ann", "tom"]
            done = await s.ok("erase_subject", user_id="tom", apply=True, reason="asked")
            assert done["memories"] == dry["memories"] and not done["dry_run"]

    run(check)
    assert _users(engine, one) == _users(engine, two) == ["ann"]


def test_a_key_scoped_to_one_memory_forgets_only_there(
    engine: Engine, account: Callable[..., Account], opener: Opener
) -> None:
    alice = account("alice")
    (one, two), _ = _seed(engine, alice)
    _, key = engine.create_api_key(
        alice.principal, alice.id, scope=[one.id], capabilities=["read", "write"]
    )

    async def check() -> None:
        async with opener(key) as s:
            assert "erase_subject" not in await s.tools()  # erasing needs manage
            refused = await s.call("erase_subject", user_id="tom", apply=True)
            assert refused.error
            done = await s.ok("forget_subject", user_id="tom", apply=True)
            assert [m["name"] for m in done["memories"]] == ["one"]

    run(check)
    assert _users(engine, one, forgotten=True) == ["tom"]
    assert _users(engine, two, forgotten=True) == []  # outside the key's scope: untouched
    assert _users(engine, two) == ["ann", "tom"]


def test_the_old_tool_names_still_work_and_say_they_are_deprecated(
    engine: Engine, account: Callable[..., Account], opener: Opener
) -> None:
    erase = {t.fn.__name__: t.description for t in TOOLS if "erase" in t.fn.__name__}
    assert (
        erase["erase_user"] == "Deprecated: use erase_subject (this old name goes in the "
        "next release). " + erase["erase_subject"]
    )
    alice = account("alice")
    (one, two), _ = _seed(engine, alice)
    _, key = engine.create_api_key(
        alice.principal, alice.id, scope=[one.id], capabilities=["read", "write"]
    )

    async def check() -> None:
        async with opener(key) as s:
            listed = {t.name: t.description or "" for t in (await s.client.list_tools()).tools}
            assert listed["forget_user"].startswith("Deprecated: use forget_subject")
            assert listed["forget_user"].endswith(listed["forget_subject"])
            assert {"erase_user", "erase_subject"}.isdisjoint(listed)  # erasing needs manage
            assert (await s.call("erase_user", user_id="tom", apply=True)).error
            dry = await s.ok("forget_user", user_id="tom")
            assert dry == {**await s.ok("forget_subject", user_id="tom"), "token": dry["token"]}
            done = await s.ok("forget_user", user_id="tom", apply=True)
            assert [m["name"] for m in done["memories"]] == ["one"]

    run(check)
    assert _users(engine, one, forgotten=True) == ["tom"]
    assert _users(engine, two, forgotten=True) == []  # outside the key's scope: untouched
    assert _users(engine, one) == _users(engine, two) == ["ann", "tom"]  # nothing erased
