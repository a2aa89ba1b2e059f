"""What a memory's chat model calls cost: calls, tokens and latency, summed over a job's attempts
(or one statement's judgements) and kept in its job's result, so the cost is visible per job and
per memory.

Plain totals that results (:class:`~recallery.requests.messages.AddedEntries`) and their JSON
(:mod:`recallery.wire.statements`) carry; counting a call as it is made is the providers' part
(:class:`recallery.providers.usage.Meter`), issue 56.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self


@dataclass
class Usage:
    """A running total of one job's model calls (mutable; one per running job or statement)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: int = 0

    @classmethod
    def from_result(cls, result: Mapping[str, Any]) -> Self:
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
