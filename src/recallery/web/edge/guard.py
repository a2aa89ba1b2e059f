"""What happens before a route runs: the caller's key is checked, then the body is read, never
past its limit. A request without a valid key is refused before a byte of its body is read,
and no body larger than the limit is ever held in memory.

The guard knows the REST routes from the routers themselves: a route needs a key when it
depends on the authenticated caller, and import routes get the larger import limit. Every other
address (the web UI's forms, ``/mcp``, the docs) gets the same body limit before its route
reads a byte, and multipart bodies only where a form takes a file (an endpoint marked with
:func:`takes_files`, which gets the import limit): a declared ``Content-Length`` over the limit
is answered 413 at once.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.responses import HTMLResponse, Response
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from recallery.engine import Engine
from recallery.errors import InvalidInput, RecalleryError, Throttled, Unauthorized
from recallery.models import Principal
from recallery.settings import Settings
from recallery.web.edge.responses import error_response, routing_error
from recallery.web.edge.throttle import Throttle

#: Where the guard leaves the authenticated caller for the route (see ``api.deps``).
PRINCIPAL = "recallery.principal"
#: Where the guard leaves the app's :class:`Throttle` (the web login form counts by it too).
THROTTLE = "recallery.web.edge.throttle"

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Rule:
    """One route as the guard sees it."""

    methods: frozenset[str]
    template: str
    path: re.Pattern[str]
    needs_key: bool
    large_body: bool


def rules(
    routers: Iterable[APIRouter],
    prefix: str,
    caller: Callable[..., Any],
    large: Iterable[Callable[..., Any]],
) -> list[Rule]:
    """The rules of the routers' routes mounted at ``prefix``: a route needs a key when it
    depends on ``caller``; the ``large`` endpoints take the import limit."""
    imports = set(large)
    found = []
    for router in routers:
        for route in router.routes:
            if isinstance(route, APIRoute):
                regex, _, _ = compile_path(prefix + route.path)
                methods = frozenset(route.methods or ())
                needs = _depends_on(route.dependant, caller)
                is_import = route.endpoint in imports
                found.append(Rule(methods, prefix + route.path, regex, needs, is_import))
    return found


#: The attribute :func:`takes_files` sets on an endpoint.
_FILES = "recallery_takes_files"


def takes_files(endpoint: F) -> F:
    """Mark a web form's endpoint as taking a file upload: multipart, up to the import limit."""
    setattr(endpoint, _FILES, True)
    return endpoint


def _depends_on(dependant: Dependant, call: Callable[..., Any]) -> bool:
    return any(d.call is call or _depends_on(d, call) for d in dependant.dependencies)


class Guard:
    """ASGI middleware: key first, then the body within its limit, then the route."""

    def __init__(self, app: ASGIApp, rules: list[Rule]) -> None:
        self.app = app
        self.rules = rules
        self._uploads: list[tuple[frozenset[str], re.Pattern[str]]] | None = None
        self.throttle = Throttle()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope[THROTTLE] = self.throttle
        headers = Headers(scope=scope)
        path = _route_path(scope)
        matching = _most_specific([r for r in self.rules if r.path.match(path)])
        rule = next((r for r in matching if scope["method"] in r.methods), None)
        if rule is None and matching:  # Allow names every method of the path
            allow = ", ".join(sorted(set().union(*(r.methods for r in matching))))
            refused = routing_error(405, "Method Not Allowed", {"Allow": allow})
            await _refuse(refused, headers, scope, receive, send)
            return
        web = scope["app"]
        settings: Settings = web.state.settings
        if rule is None:  # not a REST route: the web UI, /mcp, the docs, or no route at all
            await self._elsewhere(scope, receive, send, headers, path, settings)
            return
        limit = settings.max_import_bytes if rule.large_body else settings.max_body_bytes
        try:
            if rule.needs_key:
                scope[PRINCIPAL] = await self._authenticate(web.state.engine, headers, scope)
        except RecalleryError as exc:
            await _refuse(refusal(exc), headers, scope, receive, send)
            return
        received = await _read_body(headers, receive, limit)
        if received is None:
            too_large = InvalidInput(
                "body", f"The request body is larger than the limit of {limit} bytes."
            )
            await _refuse(error_response(too_large, 413), headers, scope, receive, send)
            return
        await self.app(scope, _replay(received, receive), send)

    async def _authenticate(self, engine: Engine, headers: Headers, scope: Scope) -> Principal:
        """The caller of an ``Authorization: Bearer <key>`` header; a missing or malformed
        one is refused without a lookup (:func:`authenticate` for the rest)."""
        return await authenticate(scope, engine, bearer_key(headers.get("authorization", "")))

    async def _elsewhere(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: Headers,
        path: str,
        settings: Settings,
    ) -> None:
        """Any other address: its body within the limit before its route reads it, and no
        multipart body unless its form takes a file."""
        files = self._takes_files(scope, path)
        limit = settings.max_import_bytes if files else settings.max_body_bytes
        media = headers.get("content-type", "").partition(";")[0].strip().lower()
        if media.startswith("multipart/") and not files:
            refused = _plain(path, 415, "body", "This address takes no file uploads (multipart).")
            await _refuse(refused, headers, scope, receive, send)
            return
        received = await _read_body(headers, receive, limit)
        if received is None:
            text = f"The request body is larger than the limit of {limit} bytes."
            await _refuse(_plain(path, 413, "body", text), headers, scope, receive, send)
            return
        await self.app(scope, _replay(received, receive), send)

    def _takes_files(self, scope: Scope, path: str) -> bool:
        if self._uploads is None:
            self._uploads = [
                (frozenset(r.methods or ()), compile_path(full)[0])
                for full, r in _api_routes(getattr(scope["app"], "routes", ()), "")
                if getattr(r.endpoint, _FILES, False)
            ]
        return any(scope["method"] in m and p.match(path) for m, p in self._uploads)


def _api_routes(routes: Iterable[Any], prefix: str) -> Iterable[tuple[str, APIRoute]]:
    """Every route with its full path, inside included routers too."""
    for r in routes:
        if isinstance(r, APIRoute):
            yield prefix + r.path, r
        elif (inner := getattr(r, "original_router", None)) is not None:
            context = getattr(r, "include_context", None)
            yield from _api_routes(inner.routes, prefix + getattr(context, "prefix", ""))


def _plain(path: str, status: int, field: str, text: str) -> Response:
    """A refusal outside the REST API: the envelope for ``/mcp``, a short page elsewhere."""
    if path.startswith("/mcp"):
        return error_response(InvalidInput(field, text), status)
    page = f"<!doctype html><title>{status}</title><h1>Request refused</h1><p>{text}</p>"
    return HTMLResponse(page, status_code=status)


def _most_specific(matching: list[Rule]) -> list[Rule]:
    """The rules of the path template with the fewest parameters: ``/memories/import`` is
    that path, never the memory ``import`` of ``/memories/{memory_id}``."""
    if not matching:
        return matching
    template = min((r.template for r in matching), key=lambda t: t.count("{"))
    return [r for r in matching if r.template == template]


def bearer_key(header: str) -> str:
    """The key of an ``Authorization: Bearer <key>`` header; Unauthorized without one."""
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise Unauthorized("Missing API key.")
    return key.strip()


async def authenticate(scope: Scope, engine: Engine, key: str) -> Principal:
    """The holder of ``key``, however it was presented (a Bearer header, the login form).
    The key is looked up first: a valid one is never refused for its address's failed
    attempts. An unknown one counts as a failure of the address (:mod:`.throttle`), and once
    the address has failed too often it is answered :class:`Throttled` (429)."""
    try:
        return await run_in_threadpool(engine.authenticate, key)
    except Unauthorized:
        throttle = scope.get(THROTTLE)
        if isinstance(throttle, Throttle):
            throttle.failed(client_address(scope))
        raise


def client_address(scope: Scope) -> str:
    """The address a request came from, as the server saw it (what throttling counts by)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def refusal(exc: RecalleryError) -> Response:
    """The envelope for ``exc``, with ``Retry-After`` when it is :class:`Throttled`."""
    headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, Throttled) else None
    return error_response(exc, headers=headers)


async def _read_body(headers: Headers, receive: Receive, limit: int) -> deque[Message] | None:
    """The body's messages, or None once it is known to pass ``limit`` bytes: by its
    Content-Length before reading, or by counting the chunks as they come."""
    declared = headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        return None
    messages: deque[Message] = deque()
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages
        size += len(message.get("body", b""))
        if size > limit:
            return None
        if not message.get("more_body", False):
            return messages


async def _refuse(
    response: Response, headers: Headers, scope: Scope, receive: Receive, send: Send
) -> None:
    """Answer without running the route; a body left unread closes the connection."""
    if headers.get("content-length", "0") != "0" or "transfer-encoding" in headers:
        response.headers["Connection"] = "close"
    await response(scope, receive, send)


def _replay(messages: deque[Message], receive: Receive) -> Receive:
    async def replayed() -> Message:
        return messages.popleft() if messages else await receive()

    return replayed


def _route_path(scope: Scope) -> str:
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path
