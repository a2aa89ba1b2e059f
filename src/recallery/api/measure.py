"""One ASGI wrapper that measures each HTTP request once, for everyone at the edge who
records what a request did: the request counters of ``/metrics`` (:mod:`recallery.api.metrics`),
the request log (:mod:`recallery.api.requestlog`) and traces (:mod:`recallery.api.tracing`).

:class:`MeasureRequests` times a request, catches its status as the answer starts (500 when
the app fails before it does) and, once the router has run, its route *template*
(:func:`route_template`: never the path a caller sent, so no id becomes a name or a label).
Each :class:`Watcher` says whether it watches a request (:meth:`Watcher.watch` returns a
context, or None) and is handed the same :class:`Measured` request: its context is entered
before the app runs (a trace's span, the request log's current call) and left once the
request has been answered, when ``status``, ``route`` and ``seconds`` are final. A request no
watcher watches goes straight through.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Route label of a request no route matched (a 404 for an unknown path).
UNMATCHED = "unmatched"


@dataclass
class Measured:
    """One HTTP request, as measured: ``status``, ``route`` and ``seconds`` are final once
    it has been answered."""

    scope: Scope
    method: str
    path: str
    status: int = 500
    route: str = UNMATCHED
    seconds: float = 0.0


class Watcher(Protocol):
    """Something at the edge that records what a request did."""

    def watch(self, request: Measured) -> AbstractContextManager[object] | None:
        """None to leave ``request`` alone; else a context entered before the app runs and
        left once ``request`` has been answered (also when the app failed)."""


class MeasureRequests:
    """ASGI middleware: each HTTP request measured once, for every watcher in ``watchers``
    (a list :func:`watch` may still add to)."""

    def __init__(self, app: ASGIApp, watchers: list[Watcher], prefix: str) -> None:
        self.app, self.watchers, self.prefix = app, watchers, prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Measured(scope, str(scope["method"]), str(scope.get("path", "")))
        watching = [c for w in self.watchers if (c := w.watch(request)) is not None]
        if not watching:
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                request.status = int(message["status"])
            await send(message)

        with ExitStack() as contexts:
            for context in watching:
                contexts.enter_context(context)
            started = time.perf_counter()
            try:
                await self.app(scope, receive, sending)
            finally:
                request.seconds = time.perf_counter() - started
                request.route = route_template(scope, self.prefix)


def watch(app: Any, watcher: Watcher, prefix: str) -> None:
    """Have ``watcher`` see each of ``app``'s HTTP requests; the first watcher installs the
    one :class:`MeasureRequests` (``prefix``: the one the API's routers are included under),
    where the app's middleware stands then."""
    watchers: list[Watcher] | None = getattr(app.state, "watchers", None)
    if watchers is None:
        watchers = app.state.watchers = []
        app.add_middleware(MeasureRequests, watchers=watchers, prefix=prefix)
    watchers.append(watcher)


def route_template(scope: Scope, prefix: str) -> str:
    """The matched route's template (:data:`UNMATCHED` when none); a route of a router
    included under the API ``prefix`` knows its path without it (FastAPI keeps the router's
    own route in the scope)."""
    template = getattr(scope.get("route"), "path", None)
    if not isinstance(template, str):
        return UNMATCHED
    if scope["path"].startswith(prefix + "/") and not template.startswith(prefix):
        return prefix + template
    return template


__all__ = ["UNMATCHED", "MeasureRequests", "Measured", "Watcher", "route_template", "watch"]
