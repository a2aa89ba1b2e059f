"""Metering of chat model calls: calls, tokens and latency, summed over a job's attempts (or
one statement's judgements) and kept in its job's result, so what a memory's model calls cost
is visible per job and per memory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import ceil
from time import perf_counter
from typing import Any

from recallery.errors import ChatError
from recallery.providers.base import ChatModel, ChatReply, ChatRequest


@dataclass
class Usage:
    """A running total of one job's model calls (mutable; one per running job or statement)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: int = 0

    @classmethod
    def from_result(cls, result: Mapping[str, Any]) -> Usage:
        """The usage recorded by earlier attempts of a job (its ``result["llm"]``)."""
        llm = result.get("llm") or {}
        return cls(
            calls=int(llm.get("calls", 0)),
            prompt_tokens=int(llm.get("prompt_tokens", 0)),
            completion_tokens=int(llm.get("completion_tokens", 0)),
            latency_ms=int(llm.get("latency_ms", 0)),
        )

    def merge(self, other: Usage) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.latency_ms += other.latency_ms

    def add(self, reply: ChatReply) -> None:
        self.calls += reply.calls
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.latency_ms += round(reply.latency_s * 1000)

    def call(self, chat: ChatModel, request: ChatRequest) -> ChatReply:
        """Call the model; its cost is counted whether or not the reply is any good (a call
        that fails counts, with the time it took and the tokens it did not report)."""
        started = perf_counter()
        try:
            reply = chat.complete(request)
        except ChatError:
            self.calls += 1
            self.latency_ms += ceil((perf_counter() - started) * 1000)
            raise
        self.add(reply)
        return reply

    def result(self) -> dict[str, Any]:
        return {
            "llm": {
                "calls": self.calls,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "latency_ms": self.latency_ms,
            }
        }


__all__ = ["Usage"]
