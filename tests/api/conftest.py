"""The REST API in process: the app over the shared engine fixture (SQLite in tmp_path,
deterministic embedder, frozen clock), raw HTTP through TestClient, the SDK through an
in-process transport, and MCP sessions over either."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import anyio.from_thread
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.support.api import Account, PortalTransport
from tests.support.mcp_sessions import Opener, over_http, over_sdk

from recallery import Client, Engine
from recallery.api import create_app
from recallery.mcp.http import local_security, mount


@pytest.fixture
def app(engine: Engine) -> FastAPI:
    return create_app(engine)


@pytest.fixture
def admin(engine: Engine) -> Account:
    user, key = engine.ensure_admin()
    assert key is not None
    return Account(user, key, engine.principal(user.id))


@pytest.fixture
def account(engine: Engine, admin: Account) -> Callable[..., Account]:
    """A new user with an API key (optionally scoped to memory ids)."""

    def make(name: str, scope: list[str] | None = None) -> Account:
        user = engine.add_user(admin.principal, name)
        _, key = engine.create_api_key(admin.principal, user.id, scope=scope)
        return Account(user, key, engine.principal(user.id))

    return make


@pytest.fixture
def http(app: FastAPI) -> Iterator[Callable[[str | None], TestClient]]:
    """Raw HTTP as the holder of a key (None: no Authorization header)."""
    clients: list[TestClient] = []

    def make(key: str | None) -> TestClient:
        headers = {} if key is None else {"Authorization": f"Bearer {key}"}
        client = TestClient(app, headers=headers)
        clients.append(client)
        return client

    yield make
    for c in clients:
        c.close()


@pytest.fixture
def alice(account: Callable[..., Account]) -> Account:
    return account("alice")


@pytest.fixture
def bob(account: Callable[..., Account]) -> Account:
    return account("bob")


@pytest.fixture
def as_alice(http: Callable[[str | None], TestClient], alice: Account) -> TestClient:
    return http(alice.key)


@pytest.fixture
def sdk(app: FastAPI) -> Iterator[Callable[[str | None], Client]]:
    """The sync SDK as the holder of a key, over the in-process app."""
    with anyio.from_thread.start_blocking_portal() as portal:
        clients: list[Client] = []

        def make(key: str | None) -> Client:
            client = Client("http://testserver", key, transport=PortalTransport(app, portal))
            clients.append(client)
            return client

        yield make
        for c in clients:
            c.close()


@pytest.fixture
def mcp_app(engine: Engine) -> FastAPI:
    """The app with ``/mcp`` mounted (local security: no DNS-rebinding host check)."""
    app = create_app(engine)
    mount(app, engine, local_security())
    return app


@pytest.fixture(params=["http", "sdk"])
def opener(
    request: pytest.FixtureRequest, mcp_app: FastAPI, sdk: Callable[[str | None], Client]
) -> Opener:
    """MCP sessions over streamable HTTP, then over the SDK backend."""
    if request.param == "http":
        return lambda key: over_http(mcp_app, key)
    return lambda key: over_sdk(sdk, key)
