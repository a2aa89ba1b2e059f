"""Error answers: the JSON response every error is sent as, and the one description of error
responses the OpenAPI schema gives every route."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from recallery import wire
from recallery.errors import RecalleryError
from recallery.web.edge.params import REQUIRED_QUERY


class EnvelopeResponse(JSONResponse):
    """JSON that survives text a client sent: a message that echoes a lone surrogate is
    written with JSON's ``\\u`` escapes instead of failing to encode."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            text = json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
            return text.encode("ascii")


def error_response(
    exc: RecalleryError, status: int | None = None, headers: Mapping[str, str] | None = None
) -> EnvelopeResponse:
    """The envelope for ``exc`` (its HTTP status from the one mapping, unless ``status``)."""
    mapped, body = wire.error_envelope(exc)
    return EnvelopeResponse(body, status_code=status or mapped, headers=headers)


def routing_error(
    status: int, detail: str, headers: Mapping[str, str] | None = None
) -> EnvelopeResponse:
    """An unknown path or a wrong method, in the envelope (code = the status)."""
    return EnvelopeResponse(wire.failure(status, detail), status_code=status, headers=headers)


class ErrorDetail(BaseModel):
    error: str = Field(description="Which error: `invalid_input`, `unauthorized`, `forbidden`, ...")
    field: str | None = Field(None, description="For `invalid_input`: the field at fault.")


class ErrorEnvelope(BaseModel):
    """An error: RAGFlow's envelope with a non-zero code."""

    code: int = Field(description="101 argument, 102 memory full, 100 a bug, else the status.")
    message: str
    data: ErrorDetail | None = Field(description="Null for routing errors and bugs.")


def _error(description: str) -> dict[str, Any]:
    return {"model": ErrorEnvelope, "description": description}


#: The error answers of the API, as every route documents them.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _error("Bad input (code 101); `data.field` names the field."),
    401: _error("No valid API key (code 401)."),
    403: _error("The caller may not do this (code 403)."),
    404: _error("Not found, or not visible to the caller (code 404)."),
    409: _error("Contradicts the current state (code 409), or the memory is full (code 102)."),
    413: _error("The body is larger than the server's limit (code 101, `data.field` `body`)."),
    415: _error("A multipart body where no form takes a file (code 101, `data.field` `body`)."),
    429: _error(
        "Too many failed authentications from this address (code 429); `Retry-After` says "
        "when to try again."
    ),
    500: _error("The store failed (code 500), or a bug (code 100)."),
    502: _error("An embedding or chat model failed (code 500)."),
}


def documented(openapi: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    """The schema as the API behaves: without FastAPI's 422 answers (failed checks answer
    400 here), and with the query parameters a route lists under :data:`REQUIRED_QUERY`
    marked required."""

    def schema() -> dict[str, Any]:
        found = openapi()
        for operations in found.get("paths", {}).values():
            for operation in operations.values():
                operation.get("responses", {}).pop("422", None)
                _require_body(operation)
                required = operation.pop(REQUIRED_QUERY, ())
                for parameter in operation.get("parameters", ()):
                    if parameter["name"] in required:
                        parameter["required"] = True
        components = found.get("components", {}).get("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            components.pop(name, None)
        return found

    return schema


def _require_body(operation: dict[str, Any]) -> None:
    """A body the route marks required is not null either (the route reads it as optional to
    answer RAGFlow's message for missing fields)."""
    body = operation.get("requestBody", {})
    if not body.get("required"):
        return
    for content in body.get("content", {}).values():
        schema = content.get("schema", {})
        kept = [s for s in schema.get("anyOf", ()) if s != {"type": "null"}]
        if len(kept) == 1 and "anyOf" in schema:
            del schema["anyOf"]
            schema.update(kept[0])
