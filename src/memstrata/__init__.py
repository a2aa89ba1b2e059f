"""memstrata: a memory service for AI agents."""

from __future__ import annotations

from memstrata.engine import Engine, MessagePage, SearchRequest, TurnInput
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
from memstrata.settings import Settings

__version__ = "0.1.0"

__all__ = [
    "AuditEvent",
    "CapacityExceeded",
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
