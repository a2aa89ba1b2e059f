"""What testing a memory's chat model and re-running its extraction answer (the engine's
``test_chat_model``, ``retry_extraction`` and ``retry_failed_extraction``): results adapters
read, so they live with the other typed results, and their JSON (:mod:`recallery.wire.jobs`)
needs nothing from extraction (issue 56)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChatCheck:
    """What one tiny request through a memory's chat model answered."""

    llm_id: str
    ok: bool
    answer: str = ""
    """The model's reply (cut to 200 characters) when ``ok``."""
    error: str = ""
    """Why it failed when not ``ok``: the provider's error, or that none is configured."""
    latency_ms: float = 0.0


@dataclass(frozen=True)
class Retried:
    """Extraction jobs queued again: one per turn, with the turns they extract."""

    memory_id: str
    job_ids: tuple[int, ...]
    message_ids: tuple[int, ...]


__all__ = ["ChatCheck", "Retried"]
