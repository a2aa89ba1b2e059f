"""The one exception tree of recallery.

Every error a caller can see is a :class:`RecalleryError`. Adapters map these to their own
shapes (HTTP envelope, MCP error, CLI exit code) in one place each.
"""

from __future__ import annotations


class RecalleryError(Exception):
    """Base of every recallery error."""

    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class RecalleryWarning(UserWarning):
    """Something was accepted that will not work as its caller expects (a memory whose chat
    model names an unconfigured provider): the SDK raises it through :mod:`warnings`."""


class InvalidInput(RecalleryError, ValueError):
    """A field of a request is missing or out of range. ``field`` names it."""

    code = "invalid_input"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class NotFound(RecalleryError, KeyError):
    """The thing does not exist, or the caller may not know that it does."""

    code = "not_found"

    def __str__(self) -> str:
        return self.message


class Forbidden(RecalleryError, PermissionError):
    """The caller is known but may not do this. ``reason`` says why."""

    code = "forbidden"


class Unauthorized(RecalleryError):
    """No valid credentials."""

    code = "unauthorized"


class Throttled(RecalleryError):
    """Too many failed authentications from this client address; try again after
    ``retry_after`` seconds."""

    code = "throttled"

    def __init__(self, message: str, retry_after: int = 60) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Conflict(RecalleryError):
    """The request contradicts the current state (for example a locked field)."""

    code = "conflict"


class KeyRevoked(Conflict):
    """An API key chosen elsewhere (say ``RECALLERY_ADMIN_API_KEY``) was revoked; a revoked
    key is never enabled again."""


class CapacityExceeded(RecalleryError):
    """A write would exceed the memory's budget and the policy cannot make room."""

    code = "capacity_exceeded"


class ModelError(RecalleryError, RuntimeError):
    """A model cannot be loaded or called (missing package, bad hash, provider failure)."""

    code = "model_error"


class ChatError(ModelError):
    """A chat model call failed. ``transient`` errors (timeouts, connection failures, 408, 429,
    5xx) are worth retrying; the others (bad key, unknown model, a rejected request) are not."""

    code = "chat_error"

    def __init__(self, message: str, *, transient: bool, status: int | None = None) -> None:
        super().__init__(message)
        self.transient = transient
        self.status = status


class MissingExtra(RecalleryError, ImportError):
    """An optional part is used without the extra that installs it: ``extra`` names the extra,
    ``name`` the missing module (as on ImportError)."""

    code = "missing_extra"

    def __init__(self, message: str, *, extra: str, module: str) -> None:
        super().__init__(message)
        self.extra = extra
        self.name = module


class StoreError(RecalleryError, RuntimeError):
    """The storage backend failed in a way the caller cannot fix by changing the request."""

    code = "store_error"


__all__ = [
    "CapacityExceeded",
    "ChatError",
    "Conflict",
    "Forbidden",
    "InvalidInput",
    "KeyRevoked",
    "MissingExtra",
    "ModelError",
    "NotFound",
    "RecalleryError",
    "StoreError",
    "Unauthorized",
]
