"""What extraction costs: model calls, tokens and latency, per job and summed per memory."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memstrata.models import Job
from memstrata.providers.base import ChatReply


@dataclass
class Usage:
    """A running total of one job's model calls (mutable; one per running job)."""

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

    def result(self) -> dict[str, Any]:
        return {
            "llm": {
                "calls": self.calls,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "latency_ms": self.latency_ms,
            }
        }


@dataclass(frozen=True)
class ExtractionCosts:
    """Model cost of a memory's extraction jobs (jobs of turns since erased or evicted are
    gone with their turns and no longer counted)."""

    memory_id: str
    jobs: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int
    outcomes: Mapping[str, int] = field(default_factory=dict)
    """Finished jobs per outcome; unfinished ones count as ``pending``."""


def summarise(memory_id: str, jobs: Iterable[Job]) -> ExtractionCosts:
    total = Usage()
    outcomes: Counter[str] = Counter()
    count = 0
    for job in jobs:
        count += 1
        total.merge(Usage.from_result(job.result))
        outcomes[job.outcome or "pending"] += 1
    return ExtractionCosts(
        memory_id=memory_id,
        jobs=count,
        calls=total.calls,
        prompt_tokens=total.prompt_tokens,
        completion_tokens=total.completion_tokens,
        latency_ms=total.latency_ms,
        outcomes=dict(sorted(outcomes.items())),
    )
