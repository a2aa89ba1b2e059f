"""The request log at the HTTP edge: every REST and web request recorded after its answer
(:class:`LogRequests`), and the routes that read the log back.

Each request opens a :class:`~recallery.requests.requestlog.Call`; the guard's authenticated caller
(REST) or the web session's viewer names its key and user, the matched route its template
and the memory and entry ids in its address, and a search or context the ids it returned.
The answer goes first: the call is queued (:meth:`Engine.log_request`) and written off the
request path. Probes, ``/metrics`` and static files are not logged; ``/mcp`` is logged per
tool call by the MCP server instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends

from recallery import validation as v
from recallery import wire
from recallery.api.deps import Actor, EngineDep
from recallery.api.health import PROBES
from recallery.api.measure import Measured, watch
from recallery.api.metrics import PATH as METRICS
from recallery.engine import Engine
from recallery.errors import InvalidInput
from recallery.models import Page, Principal
from recallery.requests import requestlog
from recallery.requests.requestlog import Call
from recallery.web.edge import declared, params
from recallery.web.edge.guard import PRINCIPAL

#: Paths never logged: probes, metrics, static files; MCP is logged per tool call.
SKIPPED = (*PROBES, METRICS, "/mcp", "/favicon.ico")
SKIPPED_UNDER = ("/static/",)

router = APIRouter(tags=["request log"])


@router.get("/admin/requests", summary="The request log, newest first (admin: all; else own)")
def request_log(
    engine: EngineDep,
    actor: Actor,
    filters: Annotated[dict[str, Any], Depends(declared.request_parameters)],
    page: params.Page = None,
    page_size: params.Size = None,
) -> Any:
    number, size = v.page(params.page(page)), params.size(page_size, params.FALLBACK_SIZE)
    q = requestlog.parse_query(filters, limit=size, offset=(number - 1) * size)
    found, total = engine.request_log(actor, q)
    return wire.envelope(wire.requests_page_dict(Page(tuple(found), total)))


@router.get(
    "/messages/{memory_id}:{message_id}/reads",
    summary="An entry's access history from the request log",
)
def reads(
    engine: EngineDep, actor: Actor, memory_id: params.MemoryId, message_id: params.MessageId
) -> Any:
    found = engine.entry_reads(actor, params.path_memory_id(memory_id), message_id)
    return wire.envelope(wire.entry_reads_dict(found))


class LogRequests:
    """A :class:`~recallery.api.measure.Watcher`: every HTTP request but :data:`SKIPPED`
    into the request log, its :class:`Call` current while it runs."""

    def __init__(self, engine: Engine, prefix: str) -> None:
        self.engine = engine
        self.prefix = prefix

    def watch(self, request: Measured) -> AbstractContextManager[None] | None:
        path = request.path
        if path in SKIPPED or path.startswith(SKIPPED_UNDER):
            return None
        return self._logged(request)

    @contextmanager
    def _logged(self, request: Measured) -> Iterator[None]:
        api = request.path == self.prefix or request.path.startswith(self.prefix + "/")
        call = Call(channel="rest" if api else "web")
        with requestlog.begin(call):
            try:
                yield
            finally:
                _fill(call, request)
                self.engine.log_request(call, request.status, request.seconds * 1000)


def _fill(call: Call, request: Measured) -> None:
    """What the request says of a call once answered: caller, route, ids in the address."""
    scope = request.scope
    principal = scope.get(PRINCIPAL)
    if isinstance(principal, Principal) and not call.user_id:
        call.key_id, call.user_id, call.tenant_id = (
            principal.key_id,
            principal.user_id,
            principal.user_id,
        )
    call.route = request.route
    found = scope.get("path_params") or {}
    memory, message = found.get("memory_id"), found.get("message_id")
    if isinstance(memory, str) and memory:
        call.memory_ids.add(memory)
    try:
        if message is not None and memory and not call.route.endswith("/reads"):
            call.named.append(v.message_id(message))
    except InvalidInput:
        pass  # an id that cannot exist names nothing


def install_request_log(app: Any, engine: Engine, prefix: str) -> None:
    """Log every request to ``app`` unless the operator turned the log off (or the app is
    built for its OpenAPI schema alone, with no engine)."""
    if engine is not None and engine.request_recorder.enabled:
        watch(app, LogRequests(engine, prefix), prefix)


__all__ = ["LogRequests", "install_request_log", "router"]
