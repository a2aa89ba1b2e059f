"""MCP over streamable HTTP at ``/mcp`` beside the REST API (``recallery serve``).

Every request carries ``Authorization: Bearer <api key>`` (401 without a valid one); the key's
principal is the caller of every message of that request. Wrong keys count against their
address as they do on REST (:func:`recallery.web.edge.guard.authenticate`): 429 once it has failed
too often, while a valid key is always let in. The transport is stateless with
JSON answers, so any server process of a deployment answers any request. On a loopback
address the SDK's DNS-rebinding protection checks ``Host`` and ``Origin``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from recallery import wire
from recallery.engine import Engine
from recallery.errors import Throttled, Unauthorized
from recallery.models import Principal
from recallery.web.edge.guard import authenticate, bearer_key, refusal

from .backend import EngineBackend
from .server import REQUEST_PRINCIPAL, build_server

PATH = "/mcp"
_PRINCIPAL = REQUEST_PRINCIPAL
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def local_security(port: int | None = None) -> TransportSecuritySettings:
    """Host and Origin allowed for a server on a loopback address (any port, or ``port``)."""
    p = "*" if port is None else str(port)
    hosts = [f"127.0.0.1:{p}", f"localhost:{p}", f"[::1]:{p}"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{h}" for h in hosts],
    )


def security_for(host: str, port: int | None = None) -> TransportSecuritySettings | None:
    """DNS-rebinding protection for a loopback ``host``; none for a public one (a reverse
    proxy in front decides there)."""
    return local_security(port) if host in LOOPBACK else None


def mount(
    app: FastAPI,
    engine: Engine,
    security: TransportSecuritySettings | None = None,
    *,
    hosts: Sequence[str] = (),
) -> None:
    """Serve MCP at ``/mcp`` in ``app``, for the holders of ``engine``'s API keys.
    ``security``: Host and Origin checks (:func:`security_for`); ``hosts`` are added to
    its allowed hosts."""
    if security is not None and hosts:
        security = security.model_copy(update={"allowed_hosts": [*security.allowed_hosts, *hosts]})

    def resolve(request: Any) -> EngineBackend:
        principal = None if request is None else request.scope.get(_PRINCIPAL)
        if not isinstance(principal, Principal):
            raise Unauthorized("Missing API key.")
        return EngineBackend(engine, principal)

    server = build_server(resolve, log=engine.log_request)
    server.streamable_http_app(stateless_http=True, json_response=True, transport_security=security)
    manager = server.session_manager
    endpoint = _Authenticated(StreamableHTTPASGIApp(manager), engine)
    # first, so that an MCP message is not matched against every REST route before its own.
    # No GET: a stateless server has no messages of its own to stream, and MCP's answer for
    # that is 405 (a GET stream would stay open, idle, for as long as the client waits).
    app.router.routes.insert(0, Route(PATH, endpoint=endpoint, methods=["POST", "DELETE"]))
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(a: Any) -> AsyncIterator[Any]:
        async with manager.run(), inner(a) as state:
            yield state

    app.router.lifespan_context = lifespan


class _Authenticated:
    """The Bearer key of each request, authenticated by the engine, for the MCP app."""

    def __init__(self, app: ASGIApp, engine: Engine) -> None:
        self.app = app
        self.engine = engine

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        try:
            principal = await authenticate(scope, self.engine, bearer_key(header))
        except Unauthorized as exc:
            await _unauthorized(send, str(exc))
            return
        except Throttled as exc:
            await refusal(exc)(scope, receive, send)
            return
        await self.app({**scope, _PRINCIPAL: principal}, receive, send)


#: What a 401 says: no ``WWW-Authenticate`` header, which (without OAuth protected-resource
#: metadata) makes MCP clients offer an OAuth flow this server does not have.
KEY_EXPECTED = (
    "This MCP endpoint takes a recallery API key, not OAuth: send the header "
    "'Authorization: Bearer rc-...'."
)


async def _unauthorized(send: Send, message: str) -> None:
    body = json.dumps(wire.failure(wire.UNAUTHORIZED, f"{message} {KEY_EXPECTED}")).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode("ascii")),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


__all__ = ["LOOPBACK", "PATH", "local_security", "mount", "security_for"]
