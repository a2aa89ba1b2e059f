"""Fakes and fixtures shipped with memstrata for tests (yours and ours)."""

from __future__ import annotations

from memstrata.testing.chat import ScriptedChatModel
from memstrata.testing.fake_llm import FakeLLM, Reply
from memstrata.testing.fakes import DeterministicEmbedder, FrozenClock

__all__ = ["DeterministicEmbedder", "FakeLLM", "FrozenClock", "Reply", "ScriptedChatModel"]
