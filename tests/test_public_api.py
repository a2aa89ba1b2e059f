"""The public API is small and deliberate: pin it."""

from __future__ import annotations

import memstrata

EXPECTED = {
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
}


def test_exported_members_are_pinned() -> None:
    assert set(memstrata.__all__) == EXPECTED
    assert len(memstrata.__all__) == len(EXPECTED)
    for name in memstrata.__all__:
        assert hasattr(memstrata, name), name


def test_errors_form_one_tree() -> None:
    for name in (
        "CapacityExceeded",
        "Conflict",
        "Forbidden",
        "InvalidInput",
        "ModelError",
        "NotFound",
        "StoreError",
        "Unauthorized",
    ):
        assert issubclass(getattr(memstrata, name), memstrata.MemstrataError)
    assert issubclass(memstrata.NotFound, KeyError)
    assert issubclass(memstrata.InvalidInput, ValueError)
    assert str(memstrata.NotFound("Memory 'x' not found.")) == "Memory 'x' not found."
