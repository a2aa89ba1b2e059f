"""The app factory and the one mapping from exceptions to RAGFlow's envelope."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import recallery
from recallery import web, wire
from recallery.api import (
    admin,
    agents,
    curation,
    memories,
    messages,
    requestlog,
    subjects,
)
from recallery.api.deps import caller
from recallery.api.health import Readiness, install_probes
from recallery.api.metrics import install_metrics
from recallery.api.requestlog import install_request_log
from recallery.api.tracing import install_tracing
from recallery.engine import Engine
from recallery.errors import InvalidInput, RecalleryError
from recallery.settings import Settings
from recallery.web.edge.guard import Guard, rules
from recallery.web.edge.responses import (
    ERROR_RESPONSES,
    EnvelopeResponse,
    documented,
    error_response,
    routing_error,
)

log = logging.getLogger("recallery.api")

PREFIX = "/api/v1"
DESCRIPTION = """\
RAGFlow's memory REST API (so `ragflow-sdk` works unchanged) and recallery's extensions:
correction, review, restore, erasure, history, evidence, audit, jobs, context, export and import.

Every response is an envelope `{"code": int, "message": ..., "data": ...}`; `code` 0 is
success. Errors also set the HTTP status: 400 (code 101), 401, 403, 404, 409 (code 409, or 102
when a memory is full), 413 (code 101: the body is over the limit), 415 (a multipart body
where no form takes a file), 429 (too many failed authentications from one address), 500 and
502 (a model failed).
"""


def create_app(engine: Engine, settings: Settings | None = None) -> FastAPI:
    """The REST API over ``engine``. Nothing starts here: serving and workers are the CLI's."""
    app = FastAPI(
        title="recallery",
        version=recallery.__version__,
        description=DESCRIPTION,
        docs_url=None,  # the web UI serves /docs from vendored assets (no CDN)
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.engine = engine
    app.state.settings = settings or engine.settings
    routers = (
        memories.router,
        messages.router,
        admin.router,
        curation.router,
        agents.router,
        subjects.router,
        requestlog.router,
    )
    for router in routers:
        app.include_router(router, prefix=PREFIX, responses=ERROR_RESPONSES)
    web.install(app)
    install_probes(app, Readiness())
    app.openapi = documented(app.openapi)  # type: ignore[method-assign]
    app.add_exception_handler(RecalleryError, _recallery_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _http_error)  # type: ignore[arg-type]
    app.add_middleware(Guard, rules=rules(routers, PREFIX, caller, memories.IMPORTS))
    # One wrapper (api/measure.py), outside Guard so its refusals count, measures each
    # request once for the request counters, the request log (who read what) and a trace.
    install_metrics(app, engine, app.state.settings.metrics, PREFIX)
    install_request_log(app, engine, PREFIX)
    if app.state.settings.otel:
        install_tracing(app, engine, PREFIX)  # a span per request, current while it runs
    app.add_middleware(_ContainBugs)
    return app


def _recallery_error(request: Request, exc: RecalleryError) -> EnvelopeResponse:
    response = error_response(exc)
    if response.status_code >= 500:
        log.error("%s %s failed: %r", request.method, request.url.path, exc, exc_info=exc)
    return response


def _validation_error(request: Request, exc: RequestValidationError) -> EnvelopeResponse:
    """FastAPI's own checks (a body that is not a JSON object, say) name their field too; a
    body that is not JSON at all is the body's fault."""
    errors = exc.errors()
    first: dict[str, Any] = dict(errors[0]) if errors else {"loc": ("body",), "msg": "invalid"}
    if first.get("type") == "json_invalid":
        reason = first.get("ctx", {}).get("error", first.get("msg"))
        return _recallery_error(request, InvalidInput("body", f"body is not valid JSON: {reason}"))
    field = ".".join(str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path"))
    field = field or "body"
    return _recallery_error(request, InvalidInput(field, f"{field}: {first.get('msg')}"))


def _http_error(request: Request, exc: HTTPException) -> Response:
    """Routing errors (unknown path, wrong method) in the same envelope; FastAPI's 400, a body
    it could not parse (not UTF-8, say), is an argument error of the body. An unknown address
    outside the API is a person's: a page with the web UI's navigation."""
    if exc.status_code == 400:
        return _recallery_error(request, InvalidInput("body", f"body: {exc.detail}"))
    if exc.status_code == 404 and not request.url.path.startswith((PREFIX, "/mcp")):
        return web.not_found(request)
    return routing_error(exc.status_code, str(exc.detail), exc.headers)


def _unexpected_error(request: Request, exc: Exception) -> EnvelopeResponse:
    """A bug: RAGFlow's EXCEPTION_ERROR, with the exception's repr, and a logged traceback."""
    log.error("%s %s raised", request.method, request.url.path, exc_info=exc)
    return EnvelopeResponse(wire.failure(wire.EXCEPTION_ERROR, repr(exc)), status_code=500)


class _ContainBugs:
    """Answers a bug with :func:`_unexpected_error` and ends the request there. (Starlette's
    outermost handler would answer, then raise again, and the server would drop the client's
    keep-alive connection.)"""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            if started:
                raise
            await _unexpected_error(Request(scope), exc)(scope, receive, send)
