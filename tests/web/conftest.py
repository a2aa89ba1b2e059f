"""The web UI in process: the app over the shared engine fixture, a browser-like client that
logs in through the login form, and accounts to log in as."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.support.web import Login, login_token

from recallery import Engine, Memory, Principal
from recallery.api import create_app
from recallery.store.base import Store
from recallery.store.sqlite import SQLiteStore


@pytest.fixture
def store(sqlite_store: SQLiteStore) -> Store:
    """The web is an adapter: its tests run on the embedded store (the engine's on both)."""
    return sqlite_store


@pytest.fixture
def app(engine: Engine) -> FastAPI:
    return create_app(engine)


@pytest.fixture
def alice_key(engine: Engine, alice: Principal) -> str:
    _, key = engine.create_api_key(alice, alice.user_id, name="alice")
    return key


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    """A browser that has not logged in (redirects are not followed)."""
    with TestClient(app, follow_redirects=False) as c:
        yield c


@pytest.fixture
def login(app: FastAPI) -> Iterator[Login]:
    """A new browser, logged in with ``key`` through the login form."""
    opened: list[TestClient] = []

    def make(key: str) -> TestClient:
        c = TestClient(app, follow_redirects=False)
        opened.append(c)
        answer = c.post("/login", data={"csrf": login_token(c), "key": key, "next": "/"})
        assert answer.status_code == 303, answer.text
        return c

    yield make
    for c in opened:
        c.close()


@pytest.fixture
def notes(engine: Engine, alice: Principal) -> Memory:
    return engine.create_memory(
        alice, name="notes", memory_type=["raw", "semantic"], embd_id="x@Builtin", llm_id="y@Z"
    )
