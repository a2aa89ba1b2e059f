"""Throttling that protects without locking out: wrong keys from one address are answered 429
once it has failed too often, on every way a key is presented (REST, ``/mcp``, ``/metrics``;
the login form in ``tests/web/test_web_limits.py``), while a valid key from that same address
is always let in; and the address counted is the peer's, unless ``serve`` names the proxy."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import click
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.support.api import API, Account, ok

from recallery import Engine
from recallery.api import create_app
from recallery.cli.serve import server_config, trusted_proxies
from recallery.mcp.http import local_security, mount
from recallery.web.edge.throttle import LIMIT

LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def client(engine: Engine) -> Iterator[TestClient]:
    """REST, /mcp and /metrics of one app, all from one address."""
    app = create_app(engine)
    mount(app, engine, local_security())
    with TestClient(app, base_url="http://127.0.0.1:9380") as c:
        yield c


def _mcp(client: TestClient, key: str) -> Any:
    return client.post("/mcp", json=LIST_TOOLS, headers={**ACCEPT, **_bearer(key)})


def test_a_valid_key_is_let_in_after_25_wrong_ones_from_its_address(
    client: TestClient, alice: Account
) -> None:
    answers = [
        client.get(f"{API}/memories", headers=_bearer(f"rc-guess-{n}")).status_code
        for n in range(25)
    ]
    assert answers == [401] * LIMIT + [429] * (25 - LIMIT)
    ok(client.get(f"{API}/memories", headers=_bearer(alice.key)))  # REST: let in
    listed = _mcp(client, alice.key)  # /mcp: let in
    assert listed.status_code == 200 and "recall" in listed.text
    refused = client.get(f"{API}/memories", headers=_bearer("rc-guess-again"))
    assert refused.status_code == 429  # the success cleared nothing: guessing stays slowed
    body = refused.json()
    assert (body["code"], body["data"]["error"]) == (429, "throttled")
    assert int(refused.headers["retry-after"]) > 0


def test_wrong_keys_on_mcp_are_throttled_and_count_with_rest(
    client: TestClient, alice: Account
) -> None:
    for n in range(LIMIT):
        wrong = _mcp(client, f"rc-guess-{n}")
        assert wrong.status_code == 401 and "Authorization: Bearer rc-" in wrong.json()["message"]
    slowed = _mcp(client, "rc-guess-more")
    assert slowed.status_code == 429 and int(slowed.headers["retry-after"]) > 0
    assert slowed.json()["data"]["error"] == "throttled"
    # one count per address, whichever way the key came
    assert client.get(f"{API}/memories", headers=_bearer("rc-x")).status_code == 429
    assert _mcp(client, alice.key).status_code == 200


def test_wrong_keys_on_metrics_are_throttled(client: TestClient, admin: Account) -> None:
    for n in range(LIMIT):
        assert client.get("/metrics", headers=_bearer(f"rc-guess-{n}")).status_code == 401
    slowed = client.get("/metrics", headers=_bearer("rc-guess-more"))
    assert slowed.status_code == 429 and int(slowed.headers["retry-after"]) > 0
    assert client.get("/metrics", headers=_bearer(admin.key)).status_code == 200


def _served(app: FastAPI, proxies: list[str]) -> Any:
    """``app`` wrapped as ``serve`` runs it (uvicorn's own proxy-header handling, if any)."""
    config = server_config(app, app.state.settings, "warning", False, proxies)
    config.load()
    return config.loaded_app


def _rotating(app: Any, count: int) -> list[int]:
    """Wrong keys from loopback, each claiming another address in X-Forwarded-For."""
    with TestClient(app, client=("127.0.0.1", 40000)) as c:
        return [
            c.get(
                f"{API}/memories",
                headers={**_bearer("rc-guess"), "X-Forwarded-For": f"198.51.100.{n}"},
            ).status_code
            for n in range(count)
        ]


def test_forwarded_addresses_are_not_trusted_by_default(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "*")  # uvicorn's own setting is not consulted
    answers = _rotating(_served(create_app(engine), trusted_proxies(None)), LIMIT + 3)
    assert answers == [401] * LIMIT + [429] * 3  # one address: loopback's


def test_forwarded_addresses_are_honoured_from_a_named_proxy(engine: Engine) -> None:
    app = _served(create_app(engine), trusted_proxies("127.0.0.1, 10.0.0.0/8"))
    assert _rotating(app, LIMIT + 3) == [401] * (LIMIT + 3)  # each client its own count
    with TestClient(app, client=("127.0.0.1", 40000)) as c:
        one = {**_bearer("rc-guess"), "X-Forwarded-For": "203.0.113.7"}
        answers = [c.get(f"{API}/memories", headers=one).status_code for _ in range(LIMIT + 1)]
    assert answers[-1] == 429  # the forwarded address is the one counted


@pytest.mark.parametrize("value", ["proxy.example", "10.0.0.1/8", "127.0.0.1,nonsense"])
def test_a_proxy_that_is_no_address_is_refused_naming_the_option(value: str) -> None:
    with pytest.raises(click.BadParameter) as refused:
        trusted_proxies(value)
    assert "--forwarded-allow-ips" in refused.value.format_message() + str(refused.value.param_hint)


def test_any_proxy_is_written_star() -> None:
    assert trusted_proxies("10.0.0.1, *") == ["*"]
    assert trusted_proxies("") == []
