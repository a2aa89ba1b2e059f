"""The review queue's, the audit log's and the request log's filters, each declared once (a
dataclass in :mod:`recallery.requests`): every declared field is a query parameter of its
route in the OpenAPI document, a keyword of the SDK and of the bound engine, and named on its
route's row in docs/api.md; and the filters select over REST and the SDK alike, leaving the
other people's entries, in another script, out."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import Field
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.support.api import API, Account, error, ok

from recallery import Client, Engine, InvalidInput, ReviewFilter
from recallery.acting import Acting
from recallery.models import EntryType
from recallery.requests import AuditFilter, EntryInput, audit_filter_fields, review_filter_fields
from recallery.requests.requestlog import (
    FILTERS,
    RequestQuery,
    parse_query,
    query_filters,
    request_filter_fields,
)

Sdk = Callable[[str | None], Client]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def _doc_row(route: str) -> str:
    """The row of docs/api.md's tables that documents ``route`` (e.g. ``GET /audit``)."""
    rows = [line for line in DOCS.read_text().splitlines() if line.startswith(f"| `{route}`")]
    assert len(rows) == 1, route
    return rows[0]


def _declared_everywhere(
    app: FastAPI,
    specs: tuple[Field[Any], ...],
    route: tuple[str, str],
    sdk: Callable[..., Any],
    paging: set[str],
) -> None:
    method, path = route
    operation = app.openapi()["paths"][f"/api/v1{path}"][method.lower()]
    names = {p["name"] for p in operation["parameters"]}
    path_names = {p["name"] for p in operation["parameters"] if p["in"] == "path"}
    assert names - path_names - paging == {spec.metadata["wire"] for spec in specs}
    keywords = inspect.signature(sdk).parameters
    row = _doc_row(f"{method} {path}")
    for spec in specs:
        assert spec.metadata["arg"] in keywords, spec.name
        assert spec.metadata["about"], spec.name
        assert f"`{spec.metadata['wire']}`" in row, spec.name


# --- the review queue


def test_every_review_filter_field_reaches_rest_the_sdk_and_the_docs(app: FastAPI) -> None:
    route = ("GET", "/memories/{memory_id}/review")
    specs = review_filter_fields()
    _declared_everywhere(app, specs, route, Client.review_queue, {"page", "page_size"})
    bound = inspect.signature(Acting.review_queue).parameters
    assert {spec.metadata["arg"] for spec in specs} <= set(bound)


#: Three people in one memory, in three scripts: (a fact, an event) each.
PEOPLE = {
    "ana": ("Ana lives in Lisbon", "Ana visited Porto in May"),
    "маша": ("Маша живёт в Москве", "Маша ездила в Казань"),
    "小明": ("小明住在北京", "小明去年去了上海"),
}


@pytest.fixture
def waiting(sdk: Sdk, alice: Account) -> tuple[str, str]:
    """A memory with each person's fact and event waiting for review, and another memory in
    which маша has a fact waiting too."""
    me = sdk(alice.key)
    model = "BAAI/bge-small-en-v1.5@Builtin"
    m = me.create_memory("shared", ["raw", "semantic", "episodic"], model, "m@Z").id
    other = me.create_memory("other", ["raw", "semantic", "episodic"], model, "m@Z").id
    for person, (fact, event) in PEOPLE.items():
        entries = [EntryInput(fact), EntryInput(event, message_type="episodic")]
        me.add_entries(m, entries, user_id=person)
    me.add_entries(other, [EntryInput("Маша любит чай")], user_id="маша")
    return m, other


def _contents(page: dict[str, Any]) -> set[str]:
    assert page["total_count"] == len(page["items"])
    return {item["entry"]["content"] for item in page["items"]}


def test_the_review_filters_over_rest(as_alice: TestClient, waiting: tuple[str, str]) -> None:
    m, _ = waiting
    url = f"{API}/memories/{m}/review"
    assert len(_contents(ok(as_alice.get(url)))) == 6
    assert _contents(ok(as_alice.get(url, params={"user_id": "маша"}))) == set(PEOPLE["маша"])
    events = ok(as_alice.get(url, params={"message_type": "episodic"}))
    assert _contents(events) == {event for _, event in PEOPLE.values()}
    both = ok(as_alice.get(url, params={"user_id": "小明", "message_type": "semantic,procedural"}))
    assert _contents(both) == {"小明住在北京"}
    assert "message_type" in error(as_alice.get(url, params={"message_type": "raw"}), 400, 101)


def test_the_sdk_takes_a_review_filter_or_its_keywords(
    sdk: Sdk, alice: Account, waiting: tuple[str, str]
) -> None:
    me = sdk(alice.key)
    m, _ = waiting
    chosen = me.review_queue(m, ReviewFilter(user_id="маша", types=frozenset({EntryType.SEMANTIC})))
    assert [i.entry.content for i in chosen.items] == ["Маша живёт в Москве"]  # not "чай"
    assert me.review_queue(m, user_id="маша", types="semantic") == chosen
    with pytest.raises(InvalidInput) as refused:
        me.review_queue(m, ReviewFilter(user_id="ana"), user_id="маша")
    assert refused.value.field == "user_id"


# --- the audit log


def test_every_audit_filter_field_reaches_rest_the_sdk_and_the_docs(app: FastAPI) -> None:
    specs = audit_filter_fields()
    _declared_everywhere(app, specs, ("GET", "/audit"), Client.audit_log, {"page", "page_size"})
    bound = inspect.signature(Acting.audit_log).parameters
    assert {spec.metadata["arg"] for spec in specs} <= set(bound)
    operation = app.openapi()["paths"]["/api/v1/audit"]["get"]
    assert all(p.get("description") for p in operation["parameters"])


def test_the_audit_filters_over_rest_the_sdk_and_the_bound_engine(
    as_alice: TestClient,
    sdk: Sdk,
    engine: Engine,
    alice: Account,
    waiting: tuple[str, str],
) -> None:
    m, other = waiting
    me = sdk(alice.key)
    masha = me.review_queue(m, user_id="маша").items[0].entry.message_id
    me.forget(m, masha)
    me.forget(other, me.review_queue(other).items[0].entry.message_id)
    events = ok(as_alice.get(f"{API}/audit", params={"memory_id": m, "action": "entry.forget"}))
    assert [e["message_id"] for e in events["events"]] == [masha]  # not the other memory's
    chosen = AuditFilter(memory_id=m, action="entry.forget")
    for surface in (me, Acting(engine, alice.principal, key=alice.key)):
        assert [e.message_id for e in surface.audit_log(chosen).items] == [masha]
        assert surface.audit_log(memory_id=m, action="entry.forget") == surface.audit_log(chosen)
        with pytest.raises(InvalidInput) as refused:
            surface.audit_log(chosen, action="entry.restore")
        assert refused.value.field == "action"


# --- the request log


def test_every_request_log_filter_reaches_rest_the_sdk_and_the_docs(app: FastAPI) -> None:
    specs = request_filter_fields()
    route = ("GET", "/admin/requests")
    _declared_everywhere(app, specs, route, Client.requests, {"page", "page_size"})
    bound = inspect.signature(Acting.requests).parameters
    assert {spec.metadata["arg"] for spec in specs} <= set(bound)
    assert {spec.metadata["wire"]: spec.metadata["about"] for spec in specs} == FILTERS
    paging = {"limit", "offset", "within", "own_key"}  # set by the listing, never a filter
    assert {spec.name for spec in specs} | paging == set(RequestQuery.__dataclass_fields__)


def test_each_request_log_filter_reads_back_what_it_wrote() -> None:
    q = RequestQuery(
        key_id="k-1",
        user_id="u-борис",
        route="/api/v1/messages/search",
        status=404,
        slow_ms=12.5,
        memory_id="m" * 32,
        entry_id=7,
    )
    sent = {wire: str(value) for wire, value in query_filters(q).items()}
    assert parse_query(sent) == q
    assert parse_query({"status": " ", "user": ""}) == RequestQuery()
    for wire in ("status", "slow", "entry"):
        with pytest.raises(InvalidInput) as refused:
            parse_query({wire: "soon"})
        assert refused.value.field == wire
