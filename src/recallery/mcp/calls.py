"""The caller of the message being handled, and running an operation for it."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import TypeVar

import anyio
from mcp.server.mcpserver.exceptions import ToolError

from recallery.errors import RecalleryError

from .backend import Backend

T = TypeVar("T")

#: Set by the server's middleware for each message, from its credential.
CALLER: contextvars.ContextVar[Backend] = contextvars.ContextVar("recallery_mcp_caller")


async def call(fn: Callable[[Backend], T]) -> T:
    """``fn`` on the caller's backend, off the event loop; recallery's errors become the
    tool's error, named by kind (``NotFound: ...``)."""
    backend = CALLER.get()
    try:
        return await anyio.to_thread.run_sync(fn, backend)
    except RecalleryError as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from exc


__all__ = ["CALLER", "call"]
