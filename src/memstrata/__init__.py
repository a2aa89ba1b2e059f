"""memstrata: a memory service for AI agents."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.engine import Engine
from memstrata.errors import (
    CapacityExceeded,
    Conflict,
    Forbidden,
    InvalidInput,
    MemstrataError,
    ModelError,
    NotFound,
    StoreError,
    Unauthorized,
)
from memstrata.models import (
    AuditEvent,
    Entry,
    EntryType,
    EraseReceipt,
    ForgettingPolicy,
    Fusion,
    Hit,
    Job,
    JobState,
    Memory,
    Origin,
    Permission,
    Principal,
    Trust,
    User,
)
from memstrata.requests import MessagePage, SearchRequest, TurnInput
from memstrata.settings import Settings

if TYPE_CHECKING:
    from memstrata.client import AsyncClient, Client

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``memstrata.Client`` and ``AsyncClient`` import httpx (the ``server`` extra) only when
    first used."""
    if name in ("Client", "AsyncClient"):
        from memstrata.extras import require

        require("httpx", extra="server", what=f"memstrata.{name}")
        from memstrata import client

        return getattr(client, name)
    raise AttributeError(f"module 'memstrata' has no attribute {name!r}")


__all__ = [
    "AsyncClient",
    "AuditEvent",
    "CapacityExceeded",
    "Client",
    "Conflict",
    "Engine",
    "Entry",
    "EntryType",
    "EraseReceipt",
    "Forbidden",
    "ForgettingPolicy",
    "Fusion",
    "Hit",
    "InvalidInput",
    "Job",
    "JobState",
    "Memory",
    "MemstrataError",
    "MessagePage",
    "ModelError",
    "NotFound",
    "Origin",
    "Permission",
    "Principal",
    "SearchRequest",
    "Settings",
    "StoreError",
    "Trust",
    "TurnInput",
    "Unauthorized",
    "User",
    "__version__",
]
