"""What a memory's model calls cost (extraction, and statements the model judged): calls,
tokens and latency, per job and summed per memory."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from recallery.models import Job
from recallery.providers.usage import Usage


@dataclass(frozen=True)
class ExtractionCosts:
    """Model cost of a memory's extraction jobs and judged statements (``statement`` jobs);
    jobs of turns since erased or evicted are gone with their turns and no longer counted."""

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
