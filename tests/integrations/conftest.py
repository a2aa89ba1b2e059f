"""The framework adapters in process: the app over the shared engine fixture (the embedded
store, deterministic embedder, frozen clock), reached by the SDK's sync client (through a
blocking portal) and its async client (``httpx.ASGITransport``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import anyio.from_thread
import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from tests.support.api import PortalTransport
from tests.support.integrations import BOB_SECRET, DIARY_SECRET, World, make_memory

from recallery import AsyncClient, Client, Engine
from recallery.api import create_app
from recallery.store.base import Store
from recallery.store.sqlite import SQLiteStore
from recallery.testing.ports import HOST, free_port

BASE = "http://testserver"


@pytest.fixture
def store(sqlite_store: SQLiteStore) -> Store:
    """The adapters sit on the SDK: their tests run on the embedded store (the engine's and
    the REST API's run on both)."""
    return sqlite_store


@pytest.fixture
def app(engine: Engine) -> FastAPI:
    return create_app(engine)


@pytest.fixture
def world(engine: Engine, app: FastAPI) -> Iterator[World]:
    alice = engine.principal(engine.create_user("alice").id)
    bob = engine.principal(engine.create_user("bob").id)
    notes = make_memory(engine, alice, "notes", ["raw"])
    diary = make_memory(engine, alice, "diary", ["raw"])
    bobs = make_memory(engine, bob, "bobs", ["raw"])
    engine.add_turn(alice, [diary.id], user_input=DIARY_SECRET, agent_response="Noted.")
    engine.add_turn(bob, [bobs.id], user_input=BOB_SECRET, agent_response="Noted.")
    with anyio.from_thread.start_blocking_portal() as portal:
        opened: list[Client] = []

        def sync(key: str) -> Client:
            opened.append(Client(BASE, key, transport=PortalTransport(app, portal)))
            return opened[-1]

        def asyncs(key: str) -> AsyncClient:
            return AsyncClient(BASE, key, transport=httpx.ASGITransport(app=app))

        yield World(engine, alice, notes, diary, bobs, bob, sync, asyncs)
        for c in opened:
            c.close()


@pytest.fixture
def url(app: FastAPI) -> Iterator[str]:
    """The app served over HTTP on a free local port, in a thread (real sockets: a pooled
    connection belongs to the event loop that opened it)."""
    server = uvicorn.Server(uvicorn.Config(app, host=HOST, port=free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "the server did not start"
        time.sleep(0.01)
    yield f"http://{HOST}:{server.config.port}"
    server.should_exit = True
    thread.join(timeout=10)
