"""recallery: a memory service for AI agents."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recallery.engine import Engine
from recallery.errors import (
    CapacityExceeded,
    Conflict,
    Forbidden,
    InvalidInput,
    ModelError,
    NotFound,
    RecalleryError,
    RecalleryWarning,
    StoreError,
    Unauthorized,
)
from recallery.models import (
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
from recallery.requests import (
    FactFilter,
    MessageFilter,
    MessagePage,
    ReviewFilter,
    SearchRequest,
    TurnInput,
)
from recallery.settings import Settings

if TYPE_CHECKING:
    from recallery.client import AsyncClient, Client

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``recallery.Client`` and ``AsyncClient`` import httpx (the ``server`` extra) only when
    first used."""
    if name in ("Client", "AsyncClient"):
        from recallery.extras import require

        require("httpx", extra="server", what=f"recallery.{name}")
        from recallery import client

        return getattr(client, name)
    raise AttributeError(f"module 'recallery' has no attribute {name!r}")


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
    "FactFilter",
    "Forbidden",
    "ForgettingPolicy",
    "Fusion",
    "Hit",
    "InvalidInput",
    "Job",
    "JobState",
    "Memory",
    "MessageFilter",
    "MessagePage",
    "ModelError",
    "NotFound",
    "Origin",
    "Permission",
    "Principal",
    "RecalleryError",
    "RecalleryWarning",
    "ReviewFilter",
    "SearchRequest",
    "Settings",
    "StoreError",
    "Trust",
    "TurnInput",
    "Unauthorized",
    "User",
    "__version__",
]
