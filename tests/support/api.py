"""Helpers for the API tests: accounts, an in-process transport for the SDK (the framework
adapters' tests use it too), envelopes, and samples read from ``/metrics``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import anyio.from_thread
import httpx
import numpy as np
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.support.extraction import CONFIG

from recallery import Engine, Principal, User
from recallery.jobs import Worker
from recallery.models import EntryType, NewEntry
from recallery.testing import FrozenClock

EMBD = "BAAI/bge-small-en-v1.5@Builtin"
LLM = "glm-4-flash@ZHIPU-AI"
API = "/api/v1"


@dataclass(frozen=True)
class Account:
    user: User
    key: str
    principal: Principal

    @property
    def id(self) -> str:
        return self.user.id


class PortalTransport(httpx.BaseTransport):
    """Sends the sync SDK's requests to the ASGI app on one event loop (as TestClient does)."""

    def __init__(self, app: FastAPI, portal: anyio.from_thread.BlockingPortal) -> None:
        self.asgi = httpx.ASGITransport(app=app)
        self.portal = portal

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.portal.call(self._send, request)

    async def _send(self, request: httpx.Request) -> httpx.Response:
        request.read()
        response = await self.asgi.handle_async_request(request)
        content = await response.aread()
        return httpx.Response(
            response.status_code, headers=response.headers, content=content, request=request
        )


def create_memory(api: TestClient, name: str = "notes", **fields: Any) -> dict[str, Any]:
    body = {"name": name, "memory_type": ["raw"], "embd_id": EMBD, "llm_id": LLM, **fields}
    response = api.post(f"{API}/memories", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


def add_turn(
    api: TestClient, memory_ids: list[str], text: str, **fields: Any
) -> list[dict[str, Any]]:
    body = {
        "memory_id": memory_ids,
        "agent_id": "agent-1",
        "session_id": "session-1",
        "user_input": text,
        "agent_response": "ok",
        **fields,
    }
    response = api.post(f"{API}/messages", json=body)
    assert response.status_code == 200, response.text
    written: list[dict[str, Any]] = response.json()["data"]
    return written


def ok(response: httpx.Response) -> Any:
    """The data of a successful envelope (the test fails with the body otherwise)."""
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["code"] == 0, body
    return body["data"]


def error(response: httpx.Response, status: int, code: int) -> str:
    """The message of an error envelope with this HTTP status and body code."""
    body = response.json()
    assert (response.status_code, body["code"]) == (status, code), body
    message: str = body["message"]
    return message


def seed_extract(engine: Engine, raw: dict[str, object], content: str) -> int:
    """An extracted entry under a raw turn, as extraction would write it."""
    entry = NewEntry(
        memory_id=str(raw["memory_id"]),
        tenant_id=str(raw["tenant_id"]),
        message_type=EntryType.SEMANTIC,
        content=content,
        valid_at=datetime.fromisoformat(str(raw["recorded_at"])),
        size_bytes=100,
        agent_id=str(raw["agent_id"]),
        session_id=str(raw["session_id"]),
        source_id=int(str(raw["message_id"])),
    )
    vector = np.zeros((1, 64), dtype=np.float32)
    vector[0, 0] = 1.0
    with engine.store.write() as w:
        (new_id,) = w.insert_entries([entry], vector, engine.clock.now())
    return new_id


def ok_text(client: TestClient) -> str:
    """The text of ``/metrics`` (the test fails unless it is served as plain text)."""
    response = client.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return response.text


def metric_value(text: str, name: str, *labels: str) -> float:
    """The sample of ``name`` whose labels include each of ``labels`` (0 when none)."""
    for line in text.splitlines():
        if line.startswith((name + "{", name + " ")) and all(label in line for label in labels):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def support_memory(client: TestClient) -> str:
    """A support memory of every type, extracted by the fake chat model (``fake-model@fake``),
    made through REST; its id."""
    body = {
        "name": "support",
        "memory_type": ["raw", "semantic", "episodic", "procedural"],
        "embd_id": "minilm@Builtin",
        "llm_id": "fake-model@fake",
    }
    return str(ok(client.post(f"{API}/memories", json=body))["id"])


def replay(
    engine: Engine,
    client: TestClient,
    memory_id: str,
    clock: FrozenClock,
    turns: Iterable[Sequence[str]],
) -> None:
    """Each (user, what they said, ...) posted through REST as a support agent writes it,
    extracted before the next, a day apart (what follows the two in a turn is left out: a
    scenario's expected fact, say)."""
    worker = Worker(engine, config=CONFIG, owner="rest-worker")
    for user, said, *_ in turns:
        turn = {
            "memory_id": [memory_id],
            "agent_id": "support-bot",
            "session_id": f"{user}-chat",
            "user_id": user,
            "user_input": said,
            "agent_response": "Noted.",
        }
        ok(client.post(f"{API}/messages", json=turn))
        worker.run_once()
        clock.advance(days=1)
