"""The envelope every answer travels in, RAGFlow's body codes, and the one mapping between
recallery's exceptions and them, both ways."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recallery.errors import (
    CapacityExceeded,
    Conflict,
    Forbidden,
    InvalidInput,
    ModelError,
    NotFound,
    RecalleryError,
    StoreError,
    Throttled,
    Unauthorized,
)

Json = dict[str, Any]

#: RAGFlow's success message for add-message.
ADD_MESSAGE_OK = "All add to task."
#: The message RAGFlow answers every authentication failure with.
UNAUTHORIZED_MESSAGE = "<Unauthorized '401: Unauthorized'>"

SUCCESS = 0
EXCEPTION_ERROR = 100
ARGUMENT_ERROR = 101
DATA_ERROR = 102
UNAUTHORIZED = 401
FORBIDDEN = 403
NOT_FOUND = 404
CONFLICT = 409
TOO_MANY = 429
SERVER_ERROR = 500


@dataclass(frozen=True)
class ErrorCode:
    """How one exception class travels: HTTP status and RAGFlow body code."""

    error: type[RecalleryError]
    status: int
    code: int


#: The one mapping between recallery exceptions and the envelope, most specific first.
ERROR_CODES = (
    ErrorCode(InvalidInput, 400, ARGUMENT_ERROR),
    ErrorCode(Unauthorized, 401, UNAUTHORIZED),
    ErrorCode(Forbidden, 403, FORBIDDEN),
    ErrorCode(NotFound, 404, NOT_FOUND),
    ErrorCode(Conflict, 409, CONFLICT),
    ErrorCode(Throttled, 429, TOO_MANY),
    ErrorCode(CapacityExceeded, 409, DATA_ERROR),
    ErrorCode(ModelError, 502, SERVER_ERROR),
    ErrorCode(StoreError, 500, SERVER_ERROR),
    ErrorCode(RecalleryError, 500, SERVER_ERROR),
)


def error_code(exc: RecalleryError) -> ErrorCode:
    return next(c for c in ERROR_CODES if isinstance(exc, c.error))


def error_envelope(exc: RecalleryError) -> tuple[int, Json]:
    """(HTTP status, body) for a recallery exception."""
    found = error_code(exc)
    message = UNAUTHORIZED_MESSAGE if isinstance(exc, Unauthorized) else exc.message
    detail: Json = {"error": exc.code}
    if isinstance(exc, InvalidInput):
        detail["field"] = exc.field
    return found.status, failure(found.code, message, detail)


def envelope(data: object = None, message: object = True) -> Json:
    """A success: code 0, ``message`` true (or RAGFlow's text), and the data."""
    return {"code": SUCCESS, "message": message, "data": data}


def failure(code: int, message: object, data: object = None) -> Json:
    return {"code": code, "message": message, "data": data}


def error_from_envelope(body: Mapping[str, Any], status: int) -> RecalleryError:
    """The exception an error envelope stands for (the SDK raises it)."""
    detail = body.get("data") if isinstance(body.get("data"), dict) else {}
    assert isinstance(detail, dict)
    message = str(body.get("message", ""))
    kind = detail.get("error")
    by_kind = {c.error.code: c.error for c in ERROR_CODES}
    by_code = {c.code: c.error for c in reversed(ERROR_CODES)}
    cls = by_kind.get(kind) if isinstance(kind, str) else None
    cls = cls or by_code.get(body.get("code"), RecalleryError)  # type: ignore[arg-type]
    if status == 401:
        cls = Unauthorized
    if issubclass(cls, InvalidInput):
        return InvalidInput(str(detail.get("field", "")), message)
    return cls(message)
