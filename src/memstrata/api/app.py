"""The app factory and the one mapping from exceptions to RAGFlow's envelope."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

import memstrata
from memstrata import web, wire
from memstrata.api import admin, agents, curation, memories, messages
from memstrata.engine import Engine
from memstrata.errors import InvalidInput, MemstrataError
from memstrata.settings import Settings

log = logging.getLogger("memstrata.api")

DESCRIPTION = """\
RAGFlow's memory REST API (so `ragflow-sdk` works unchanged) and memstrata's extensions:
correction, review, restore, erasure, history, evidence, audit, jobs, context, export and import.

Every response is an envelope `{"code": int, "message": ..., "data": ...}`; `code` 0 is
success. Errors also set the HTTP status: 400 (code 101), 401, 403, 404, 409 (code 409, or 102
when a memory is full), 500 and 502 (a model failed).
"""


def create_app(engine: Engine, settings: Settings | None = None) -> FastAPI:
    """The REST API over ``engine``. Nothing starts here: serving and workers are the CLI's."""
    app = FastAPI(
        title="memstrata",
        version=memstrata.__version__,
        description=DESCRIPTION,
        docs_url="/docs",
        openapi_url="/openapi.json",
    )
    app.state.engine = engine
    app.state.settings = settings or engine.settings
    for router in (memories.router, messages.router, admin.router, curation.router, agents.router):
        app.include_router(router, prefix="/api/v1")
    web.install(app)
    app.add_exception_handler(MemstrataError, _memstrata_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _unexpected_error)
    return app


def _memstrata_error(request: Request, exc: MemstrataError) -> JSONResponse:
    status, body = wire.error_envelope(exc)
    if status >= 500:
        log.error("%s %s failed: %r", request.method, request.url.path, exc, exc_info=exc)
    return JSONResponse(body, status_code=status)


def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    """FastAPI's own checks (a body that is not a JSON object, say) name their field too."""
    first = exc.errors()[0] if exc.errors() else {"loc": ("body",), "msg": "invalid request"}
    field = ".".join(str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path"))
    field = field or "body"
    return _memstrata_error(request, InvalidInput(field, f"{field}: {first.get('msg')}"))


def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
    """Routing errors (unknown path, wrong method) in the same envelope."""
    body = wire.failure(exc.status_code, str(exc.detail))
    return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)


def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    """A bug: RAGFlow's EXCEPTION_ERROR, with the exception's repr, and a logged traceback."""
    log.error("%s %s raised", request.method, request.url.path, exc_info=exc)
    return JSONResponse(wire.failure(wire.EXCEPTION_ERROR, repr(exc)), status_code=500)
