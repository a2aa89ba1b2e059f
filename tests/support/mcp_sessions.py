"""MCP sessions for the tests: the SDK's own client over streamable HTTP (the app in process,
with ``/mcp`` mounted) or in process over the ``--url`` backend (the recallery SDK); the
fixtures that open them live in tests/api/conftest.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
from fastapi import FastAPI
from mcp import Client as MCPClient
from mcp.client.streamable_http import streamable_http_client

from recallery import Client, Engine
from recallery.mcp.backend import ClientBackend
from recallery.mcp.server import build_server

BASE = "http://127.0.0.1:9380"


@dataclass
class Result:
    error: bool
    data: dict[str, Any]
    text: str


@dataclass
class Session:
    client: MCPClient

    async def call(self, tool: str, **arguments: Any) -> Result:
        r = await self.client.call_tool(tool, arguments)
        text = " ".join(getattr(c, "text", "") for c in r.content)
        return Result(bool(r.is_error), dict(r.structured_content or {}), text)

    async def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        r = await self.call(tool, **arguments)
        assert not r.error, r.text
        return r.data

    async def tools(self) -> set[str]:
        return {t.name for t in (await self.client.list_tools()).tools}


#: Opens a session as the holder of a key (over HTTP or over the SDK backend).
Opener = Callable[[str], AbstractAsyncContextManager[Session]]


@asynccontextmanager
async def over_http(app: FastAPI, key: str | None) -> AsyncIterator[Session]:
    headers = {} if key is None else {"Authorization": f"Bearer {key}"}
    async with (
        app.router.lifespan_context(app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), headers=headers) as http,
        MCPClient(streamable_http_client(f"{BASE}/mcp", http_client=http)) as client,
    ):
        yield Session(client)


@asynccontextmanager
async def over_sdk(sdk: Callable[[str | None], Client], key: str) -> AsyncIterator[Session]:
    backend = ClientBackend(sdk(key))
    async with MCPClient(build_server(lambda _request: backend)) as client:
        yield Session(client)


def ids(found: dict[str, Any]) -> list[int]:
    return [r["id"] for r in found["results"]]


def engine_ids(engine: Engine, hits: list[Any]) -> list[int]:
    return [h.entry.message_id for h in hits]


def run(test: Callable[[], AsyncIterator[None]] | Callable[[], object]) -> None:
    anyio.run(test)  # type: ignore[arg-type]
