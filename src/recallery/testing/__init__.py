"""Fakes and fixtures shipped with recallery for tests (yours and ours)."""

from __future__ import annotations

from recallery.testing.chat import ScriptedChatModel
from recallery.testing.fake_llm import FakeLLM, Reply
from recallery.testing.fakes import DeterministicEmbedder, FrozenClock

__all__ = ["DeterministicEmbedder", "FakeLLM", "FrozenClock", "Reply", "ScriptedChatModel"]
