"""/metrics: counters that move with the calls made, labelled by route template and never
by anything a request carried; the store's counts; an administrator's key, or a setting."""

from __future__ import annotations

import re
from collections.abc import Callable

from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, metric_value, ok, ok_text

from recallery import Engine
from recallery.api import create_app
from recallery.settings import Settings

SEARCH = 'route="/api/v1/messages/search"'


def test_counters_move_and_no_label_carries_request_text(
    http: Callable[[str | None], TestClient], admin: Account, as_alice: TestClient
) -> None:
    scrape = http(admin.key)
    before = ok_text(scrape)
    memory = create_memory(as_alice, name="secret-garden")
    add_turn(as_alice, memory["id"], "zanzibar marmalade")
    for _ in range(3):
        params = {"query": "zanzibar marmalade", "memory_id": memory["id"]}
        ok(as_alice.get(f"{API}/messages/search", params=params))
    as_alice.get(f"{API}/memories/{memory['id']}/nowhere")  # an unknown path: 404
    after = ok_text(scrape)
    total = "recallery_http_requests_total"
    assert (
        metric_value(after, total, SEARCH, 'status="200"') - metric_value(before, total, SEARCH)
        == 3
    )
    hist = "recallery_http_request_duration_seconds_count"
    assert metric_value(after, hist, SEARCH, 'method="GET"') == 3
    assert metric_value(after, total, 'route="unmatched"', 'status="404"') == 1
    assert metric_value(after, "recallery_entries", 'state="current"', 'type="raw"') == 1
    assert metric_value(after, "recallery_memories") == 1
    assert metric_value(before, "recallery_stored_bytes") == 0
    stored = ok(as_alice.get(f"{API}/memories/{memory['id']}/config"))["used_bytes"]
    assert stored > 0 and metric_value(after, "recallery_stored_bytes") == stored
    labels = " ".join(re.findall(r"\{[^}]*\}", after))
    for text in ("zanzibar", "marmalade", "secret-garden", memory["id"], "nowhere"):
        assert text not in labels


def test_only_an_administrator_reads_metrics(
    http: Callable[[str | None], TestClient], as_alice: TestClient
) -> None:
    bare = http(None).get("/metrics")
    assert bare.status_code == 401 and bare.headers["www-authenticate"] == "Bearer"
    # its own words, never RAGFlow's repr of an exception
    assert bare.json()["message"] == "Missing API key: /metrics needs an administrator's key."
    assert as_alice.get("/metrics").status_code == 403


def test_only_an_administrator_s_unscoped_key_with_every_capability_reads_metrics(
    engine: Engine, http: Callable[[str | None], TestClient], admin: Account
) -> None:
    notes = create_memory(http(admin.key), name="admin notes")
    _, scoped = engine.create_api_key(admin.principal, admin.id, scope=[notes["id"]])
    _, reader = engine.create_api_key(admin.principal, admin.id, capabilities=["read"])
    _, no_manage = engine.create_api_key(admin.principal, admin.id, capabilities=["read", "write"])
    for key in (scoped, reader, no_manage):
        refused = http(key).get("/metrics")
        assert refused.status_code == 403 and "unscoped" in refused.json()["message"]
    assert http(admin.key).get("/metrics").status_code == 200


def test_metrics_can_be_opened_or_turned_off(engine: Engine, admin: Account) -> None:
    with TestClient(create_app(engine, Settings(metrics="open"))) as anyone:
        assert anyone.get("/metrics").status_code == 200
    off = create_app(engine, Settings(metrics="off"))
    with TestClient(off, headers={"Authorization": f"Bearer {admin.key}"}) as client:
        assert client.get("/metrics").status_code == 404


def test_the_setting_names_itself_when_wrong() -> None:
    import pytest

    from recallery.errors import InvalidInput

    with pytest.raises(InvalidInput) as caught:
        Settings.from_env({"RECALLERY_METRICS": "public"})
    assert caught.value.field == "metrics"
