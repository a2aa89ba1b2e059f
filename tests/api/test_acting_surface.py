"""One acting surface: the engine bound to a caller (:class:`recallery.acting.Acting`) and the
SDK have the same operations, with the same parameters, and do the same thing; the SDK takes
the request objects the engine takes (a search, a Messages filter, a request-log query)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
from tests.support.api import Account

from recallery import Client, Engine, InvalidInput, MessageFilter, SearchRequest
from recallery.acting import SERVER_ONLY, Acting
from recallery.client.shells import OPERATIONS
from recallery.requests import EntryInput

Surface = Acting | Client

#: Where the engine's own form of an operation still differs from the SDK's, and why; the
#: bound engine reads the SDK's form into it. Anything else that drifts fails the test.
ENGINE_FORMS = {
    "create_memory": "keyword-only configuration",
    "add_turn": "user_id '' is no user; the SDK's None is the caller, as REST reads it",
    "search": "takes the SearchRequest only",
    "context": "takes the SearchRequest only",
    "list_messages": "takes the MessageFilter only",
    "audit_log": "pages by limit and offset",
    "create_user": "named add_user for a caller (create_user is the operator's, unaudited)",
    "request_log": "takes the RequestQuery only, answers (found, total)",
    "requests": "request_log's old name (deprecated)",
}


def _parameters(function: Any, skip: int) -> list[tuple[str, Any, Any]]:
    """Name, kind and default of each parameter after the first ``skip``: positional ones
    in order, keyword-only ones by name (their order means nothing to a caller)."""
    found = list(inspect.signature(function).parameters.values())[skip:]
    described = [(p.name, p.kind, p.default) for p in found]
    keyword = inspect.Parameter.KEYWORD_ONLY
    return [d for d in described if d[1] != keyword] + sorted(
        d for d in described if d[1] == keyword
    )


@pytest.mark.parametrize("name", [n for n in OPERATIONS if n not in SERVER_ONLY])
def test_the_bound_engine_has_the_sdks_signatures(name: str) -> None:
    assert _parameters(getattr(Acting, name), 1) == _parameters(getattr(Client, name), 1)


def test_the_engine_and_the_sdk_drift_only_where_declared() -> None:
    drifts = {
        name
        for name in OPERATIONS
        if hasattr(Engine, name)
        and _parameters(getattr(Engine, name), 2) != _parameters(getattr(Client, name), 1)
    }
    assert drifts == set(ENGINE_FORMS)
    assert set(SERVER_ONLY) | {"me"} == {n for n in OPERATIONS if not hasattr(Engine, n)}


@pytest.fixture(params=["engine", "sdk"])
def acting(
    request: pytest.FixtureRequest,
    engine: Engine,
    sdk: Callable[[str | None], Client],
) -> Callable[[Account], Surface]:
    """The caller's surface: the engine bound in process, or the SDK over REST."""

    def make(account: Account) -> Surface:
        if request.param == "engine":
            return Acting(engine, account.principal, key=account.key)
        return sdk(account.key)

    return make


def _memory(me: Surface) -> str:
    m = me.create_memory(
        "shared", ["raw", "semantic", "episodic"], "BAAI/bge-small-en-v1.5@Builtin", "m@Z"
    )
    return m.id


#: Three people in one memory, in three scripts.
PEOPLE = {
    "ana": ("Ana lives in Lisbon", "Ana visited Porto in May"),
    "маша": ("Маша живёт в Москве", "Маша ездила в Казань"),
    "小明": ("小明住在北京", "小明去年去了上海"),
}


def _state_facts(me: Surface, memory_id: str) -> None:
    for person, (fact, event) in PEOPLE.items():
        me.add_entries(
            memory_id,
            [EntryInput(fact), EntryInput(event, message_type="episodic")],
            user_id=person,
        )


def test_review_queue_filters_by_user_and_type(
    acting: Callable[[Account], Surface], alice: Account
) -> None:
    me = acting(alice)
    memory_id = _memory(me)
    _state_facts(me, memory_id)
    everyone = me.review_queue(memory_id)
    assert everyone.total == 6
    masha = me.review_queue(memory_id, user_id="маша")
    assert {i.entry.content for i in masha.items} == set(PEOPLE["маша"])
    events = me.review_queue(memory_id, types=["episodic"])
    assert {i.entry.content for i in events.items} == {e for _, e in PEOPLE.values()}
    only = me.review_queue(memory_id, user_id="小明", types=["semantic"])
    assert [i.entry.content for i in only.items] == ["小明住在北京"]
    with pytest.raises(InvalidInput) as refused:
        me.review_queue(memory_id, types=["raw"])
    assert refused.value.field == "message_type"


def test_a_search_request_or_its_fields_find_the_same(
    acting: Callable[[Account], Surface], alice: Account
) -> None:
    me = acting(alice)
    memory_id = _memory(me)
    _state_facts(me, memory_id)
    request = SearchRequest("Москве", (memory_id,), similarity_threshold=0.0, user_id="маша")
    by_request = [h.entry.content for h in me.search(request)]
    by_fields = [
        h.entry.content
        for h in me.search("Москве", [memory_id], similarity_threshold=0.0, user_id="маша")
    ]
    assert by_request == by_fields
    assert by_request and all("Маш" in c for c in by_request)
    block = me.context(request, max_tokens=500)
    assert "Ana" not in block.text and "小明" not in block.text
    for refused_field, call in (
        ("top_n", lambda: me.search(request, top_n=9)),
        ("memory_ids", lambda: me.context(request, [memory_id])),
    ):
        with pytest.raises(InvalidInput) as refused:
            call()
        assert refused.value.field == refused_field


def test_a_messages_filter_or_its_keywords_list_the_same(
    acting: Callable[[Account], Surface], alice: Account
) -> None:
    me = acting(alice)
    memory_id = _memory(me)
    for person in PEOPLE:
        me.add_turn(
            [memory_id], user_input=f"{person}: привет", agent_response="ok", user_id=person
        )
    by_filter = me.list_messages(memory_id, MessageFilter(user_id="ana"))
    by_keyword = me.list_messages(memory_id, user_id="ana")
    assert [t.user_id for t in by_filter.items] == ["ana"]
    assert [t.message_id for t in by_filter.items] == [t.message_id for t in by_keyword.items]
    with pytest.raises(InvalidInput) as refused:
        me.list_messages(memory_id, MessageFilter(user_id="ana"), session_id="s")
    assert refused.value.field == "session_id"


def test_a_turn_without_a_user_is_the_callers_on_both(
    acting: Callable[[Account], Surface], alice: Account
) -> None:
    me = acting(alice)
    memory_id = _memory(me)
    (raw,) = me.add_turn([memory_id], user_input="hello", agent_response="hi")
    assert raw.user_id == alice.id


def test_the_audit_log_pages_alike(acting: Callable[[Account], Surface], alice: Account) -> None:
    me = acting(alice)
    memory_id = _memory(me)
    _state_facts(me, memory_id)
    first = me.audit_log(memory_id=memory_id, page_size=2)
    second = me.audit_log(memory_id=memory_id, page=2, page_size=2)
    assert len(first.items) == len(second.items) == 2
    assert first.total == second.total >= 4
    assert not {e.id for e in first.items} & {e.id for e in second.items}
