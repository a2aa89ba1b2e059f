"""The public API is small and deliberate: pin it."""

from __future__ import annotations

import recallery

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
}


def test_exported_members_are_pinned() -> None:
    assert set(recallery.__all__) == EXPECTED
    assert len(recallery.__all__) == len(EXPECTED)
    for name in recallery.__all__:
        assert hasattr(recallery, name), name


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
        assert issubclass(getattr(recallery, name), recallery.RecalleryError)
    assert issubclass(recallery.NotFound, KeyError)
    assert issubclass(recallery.InvalidInput, ValueError)
    assert str(recallery.NotFound("Memory 'x' not found.")) == "Memory 'x' not found."
