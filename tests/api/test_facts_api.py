"""The Facts listing over REST and the SDK, its filters declared once in ``FactFilter``: three
people's facts in one memory (one in Russian, one in Chinese) and a fact in another memory,
each filter leaving the others' facts out; every declared field is a query parameter in the
OpenAPI document, a keyword of the SDK and named in docs/api.md."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, error, ok

from recallery import Client, Engine, FactFilter, InvalidInput, NotFound, client
from recallery.models import EntryType, NewEntry
from recallery.requests import fact_filter_fields

Sdk = Callable[[str | None], Client]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def fact(engine: Engine, raw: dict[str, Any], content: str, kind: str = "semantic") -> int:
    """A fact extracted from ``raw``, as extraction writes it (its speaker's)."""
    entry = NewEntry(
        memory_id=str(raw["memory_id"]),
        tenant_id=str(raw["tenant_id"]),
        message_type=EntryType(kind),
        content=content,
        valid_at=datetime.fromisoformat(str(raw["recorded_at"])),
        size_bytes=100,
        user_id=str(raw["user_id"]),
        agent_id=str(raw["agent_id"]),
        session_id=str(raw["session_id"]),
        source_id=int(raw["message_id"]),
    )
    vector = np.zeros((1, 64), dtype=np.float32)
    vector[0, 0] = 1.0
    with engine.store.write() as w:
        (new_id,) = w.insert_entries([entry], vector, engine.clock.now())
    return new_id


def listed(api: TestClient, memory_id: str, **params: Any) -> set[int]:
    page = ok(api.get(f"{API}/memories/{memory_id}/facts", params=params))
    assert page["total_count"] == len(page["items"])
    return {e["message_id"] for e in page["items"]}


@pytest.fixture
def seeded(as_alice: TestClient, engine: Engine) -> dict[str, Any]:
    m = create_memory(as_alice, memory_type=["raw", "semantic", "episodic"])
    other = create_memory(as_alice, name="other", memory_type=["raw", "semantic"])
    said = {
        "anna": ("I live in Lisbon and I work as a nurse", "u-anna"),
        "boris": ("Я живу в Казани", "u-борис"),
        "chen": ("我喜欢喝绿茶", "u-陈"),
    }
    raws = {
        who: add_turn(as_alice, [m["id"]], text, user_id=user)[0]
        for who, (text, user) in said.items()
    }
    (elsewhere,) = add_turn(as_alice, [other["id"]], "I live in Lisbon", user_id="u-anna")
    ids = {
        "anna_home": fact(engine, raws["anna"], "The user lives in Lisbon."),
        "anna_trip": fact(engine, raws["anna"], "The user went to Porto.", "episodic"),
        "boris": fact(engine, raws["boris"], "Пользователь живёт в Казани."),
        "chen": fact(engine, raws["chen"], "用户喜欢喝绿茶。"),
        "elsewhere": fact(engine, elsewhere, "The user lives in Lisbon."),
    }
    return {"memory": m["id"], "other": other["id"], **ids}


def test_facts_of_one_user_leave_the_others_out(as_alice: TestClient, seeded: Any) -> None:
    m = seeded["memory"]
    everyone = {seeded[k] for k in ("anna_home", "anna_trip", "boris", "chen")}
    assert listed(as_alice, m) == everyone  # no raw turn, nothing of the other memory
    assert listed(as_alice, m, user_id="u-anna") == {seeded["anna_home"], seeded["anna_trip"]}
    assert listed(as_alice, m, user_id="u-борис") == {seeded["boris"]}
    assert listed(as_alice, m, user_id="u-陈") == {seeded["chen"]}
    assert listed(as_alice, m, user_id="u-nobody") == set()
    assert listed(as_alice, seeded["other"], user_id="u-anna") == {seeded["elsewhere"]}


def test_each_declared_filter_selects_over_rest(as_alice: TestClient, seeded: Any) -> None:
    m = seeded["memory"]
    assert listed(as_alice, m, message_type="episodic") == {seeded["anna_trip"]}
    assert listed(as_alice, m, user_id="u-anna", message_type="semantic") == {seeded["anna_home"]}
    assert listed(as_alice, m, text="绿茶") == {seeded["chen"]}
    assert listed(as_alice, m, text="живёт") == {seeded["boris"]}
    url = f"{API}/messages/{m}:{seeded['boris']}"
    ok(as_alice.put(url, json={"status": False}))
    assert listed(as_alice, m, status="false") == {seeded["boris"]}
    assert seeded["boris"] not in listed(as_alice, m, status="true")
    assert listed(as_alice, m, forgotten="true") == set()
    page = ok(as_alice.get(f"{API}/memories/{m}/facts", params={"user_id": "u-anna"}))
    assert page["counts"]["current"] == 2
    assert page["counts"]["erased"] is None  # tombstones keep no user: unknown
    assert (
        ok(as_alice.get(f"{API}/memories/{m}/facts", params={"page_size": 1}))["total_count"] == 4
    )


def test_the_text_filter_ignores_case_beyond_ascii(as_alice: TestClient, seeded: Any) -> None:
    assert listed(as_alice, seeded["memory"], text="Казани") == {seeded["boris"]}


def test_bad_filters_are_refused_naming_the_field(
    as_alice: TestClient, http: Callable[[str | None], TestClient], bob: Account, seeded: Any
) -> None:
    url = f"{API}/memories/{seeded['memory']}/facts"
    assert "message_type" in error(as_alice.get(url, params={"message_type": "raw"}), 400, 101)
    assert "message_type" in error(as_alice.get(url, params={"message_type": "x"}), 400, 101)
    assert "trust" in error(as_alice.get(url, params={"trust": "sure"}), 400, 101)
    assert "status" in error(as_alice.get(url, params={"status": "maybe"}), 400, 101)
    assert http(bob.key).get(url).status_code == 404  # another account's memory: not there


def test_the_sdk_lists_facts_by_keywords_or_a_fact_filter(
    sdk: Sdk, alice: Account, seeded: Any
) -> None:
    ms = sdk(alice.key)
    m = seeded["memory"]
    by_keyword = ms.facts(m, user_id="u-борис")
    assert [e.message_id for e in by_keyword.items] == [seeded["boris"]]
    assert by_keyword.total == 1 and by_keyword.counts.current == 1
    chosen = ms.facts(m, FactFilter(user_id="u-anna", types=frozenset({EntryType.EPISODIC})))
    assert [e.message_id for e in chosen.items] == [seeded["anna_trip"]]
    assert {e.message_id for e in ms.facts(m, types=["semantic"], text="绿茶").items} == {
        seeded["chen"]
    }
    with pytest.raises(InvalidInput, match="user_id"):
        ms.facts(m, FactFilter(user_id="u-anna"), user_id="u-陈")
    with pytest.raises(NotFound):
        ms.facts("missing")


def test_every_fact_filter_field_reaches_rest_the_sdk_and_the_docs(app: FastAPI) -> None:
    operation = app.openapi()["paths"]["/api/v1/memories/{memory_id}/facts"]["get"]
    params = {p["name"] for p in operation["parameters"]}
    wires = {spec.metadata["wire"] for spec in fact_filter_fields()}
    assert params - {"memory_id", "page", "page_size"} == wires
    sdk = inspect.signature(client.facts).parameters
    text = DOCS.read_text()
    for spec in fact_filter_fields():
        assert spec.metadata["arg"] in sdk, spec.name
        assert spec.metadata["about"], spec.name
        assert f"`{spec.metadata['wire']}`" in text, spec.name
    assert "/facts" in text
