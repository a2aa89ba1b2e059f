"""Fakes and fixtures shipped with memstrata for tests (yours and ours)."""

from __future__ import annotations

from memstrata.testing.fakes import DeterministicEmbedder, FrozenClock

__all__ = ["DeterministicEmbedder", "FrozenClock"]
