"""One name per feature in every layer (issue 56): the data-subject listing is ``subjects``
(``GET /subjects``, ``list_subjects``) and the request log ``request_log``, in the engine, the
bound engine and the SDK. The old names stay one release and say they are deprecated: the
operations ``people`` and ``requests`` warn and do the same, ``GET /people`` answers its old
page (out of the OpenAPI schema), and the moved modules warn on import. What the old and new
names list is what the caller may read: another owner's users are absent from both."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.support.api import API, EMBD, LLM, Account, ok

from recallery import Client, Engine
from recallery.acting import Acting
from recallery.requests.requestlog import RequestQuery

Sdk = Callable[[str | None], Client]
#: Three of Alice's users, in three scripts; Bob's one in his own memory.
USERS = ("ana", "маша", "小明")


def _seed(engine: Engine, alice: Account, bob: Account) -> None:
    mine = engine.create_memory(
        alice.principal, name="mine", memory_type=["raw"], embd_id=EMBD, llm_id=LLM
    )
    for user in USERS:
        engine.add_turn(
            alice.principal, [mine.id], user_input=f"{user}: привет", agent_response="ok",
            user_id=user,
        )  # fmt: skip
    his = engine.create_memory(
        bob.principal, name="his", memory_type=["raw"], embd_id=EMBD, llm_id=LLM
    )
    engine.add_turn(
        bob.principal, [his.id], user_input="secret", agent_response="ok", user_id="bobs-user"
    )


def _ids(page: Any) -> set[str]:
    return {p.id for p in page.items}


def test_get_people_answers_its_old_page_beside_get_subjects(
    as_alice: TestClient, app: FastAPI, engine: Engine, alice: Account, bob: Account
) -> None:
    _seed(engine, alice, bob)
    new = ok(as_alice.get(f"{API}/subjects", params={"page_size": "10"}))
    old = ok(as_alice.get(f"{API}/people", params={"page_size": "10"}))
    assert {p["id"] for p in new["subjects"]} == set(USERS)  # not Bob's user
    assert old == {"people": new["subjects"], "total_count": 3}
    paths = app.openapi()["paths"]
    assert f"{API}/subjects" in paths and f"{API}/people" not in paths


def test_the_sdk_s_old_names_warn_and_do_the_same(
    sdk: Sdk, engine: Engine, alice: Account, bob: Account
) -> None:
    _seed(engine, alice, bob)
    ms = sdk(alice.key)
    listed = ms.list_subjects()
    assert _ids(listed) == set(USERS)
    with pytest.deprecated_call(match="use list_subjects"):
        assert ms.people() == listed
    engine.request_recorder.flush()
    logged = ms.request_log(route=f"{API}/subjects")
    assert logged.total == 2  # people() sends what list_subjects() sends
    with pytest.deprecated_call(match="use request_log"):
        assert ms.requests(route=f"{API}/subjects").items == logged.items


def test_the_engine_s_and_the_bound_engine_s_old_names_warn_and_do_the_same(
    engine: Engine, alice: Account, bob: Account, as_alice: TestClient
) -> None:
    _seed(engine, alice, bob)
    listed = engine.list_subjects(alice.principal)
    assert _ids(listed) == set(USERS)
    with pytest.deprecated_call(match="people is deprecated: use list_subjects"):
        assert engine.people(alice.principal) == listed
    me = Acting(engine, alice.principal, key=alice.key)
    assert me.list_subjects() == listed
    with pytest.deprecated_call(match="use list_subjects"):
        assert me.people() == listed
    ok(as_alice.get(f"{API}/memories"))
    engine.request_recorder.flush()
    rows, total = engine.request_log(alice.principal, RequestQuery(route=f"{API}/memories"))
    assert total == 1
    with pytest.deprecated_call(match="requests is deprecated: use request_log"):
        assert engine.requests(alice.principal, RequestQuery(route=f"{API}/memories"))[1] == 1
    assert me.request_log(route=f"{API}/memories").items == tuple(rows)
    with pytest.deprecated_call(match="use request_log"):
        assert me.requests(route=f"{API}/memories").items == tuple(rows)


def test_bob_sees_none_of_alices_users_under_either_name(
    http: Callable[[str | None], TestClient], engine: Engine, alice: Account, bob: Account
) -> None:
    _seed(engine, alice, bob)
    as_bob = http(bob.key)
    for path, rows in (("subjects", "subjects"), ("people", "people")):
        found = ok(as_bob.get(f"{API}/{path}"))
        assert [p["id"] for p in found[rows]] == ["bobs-user"], path
    with pytest.deprecated_call():
        assert _ids(engine.people(bob.principal)) == {"bobs-user"}


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("recallery.wire.people", "people_page_dict"),
        ("recallery.services.people", "PeopleService"),
    ],
)
def test_the_moved_modules_warn_on_import(module: str, name: str) -> None:
    sys.modules.pop(module, None)
    with pytest.deprecated_call(match="moved"):
        found = importlib.import_module(module)
    assert hasattr(found, name)


def test_the_conformance_suite_s_old_name_warns() -> None:
    from recallery.testing import conformance

    with pytest.deprecated_call(match="SubjectConformance"):
        assert conformance.PeopleConformance is conformance.SubjectConformance
