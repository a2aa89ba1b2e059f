"""What a memory's model calls cost (extraction, and statements the model judged): calls,
tokens and latency, per job and summed per memory."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from recallery.models import Job, JobState
from recallery.requests.usage import Usage


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
    """Each turn's newest job per outcome (a job a retry replaced is history, not counted);
    unfinished ones count as ``pending``."""
    states: Mapping[str, int] = field(default_factory=dict)
    """Each turn's newest job per state (every state named, zero included)."""
    latest: Mapping[int, int] = field(default_factory=dict)
    """The newest job of each turn, by turn id: an older one was replaced by a retry."""
    replaced: int = 0
    """Jobs a retry replaced (their model calls still count above)."""


def summarise(memory_id: str, jobs: Iterable[Job]) -> ExtractionCosts:
    """Model use summed over every job (each attempt cost what it cost); outcomes and states
    of each turn's newest job only."""
    total = Usage()
    count = 0
    newest: dict[object, Job] = {}
    for job in jobs:
        count += 1
        total.merge(Usage.from_result(job.result))
        key = job.id if job.message_id is None else (job.kind, job.message_id)
        if key not in newest or newest[key].id < job.id:
            newest[key] = job
    current = list(newest.values())
    outcomes = Counter(j.outcome or "pending" for j in current)
    states = Counter(j.state.value for j in current)
    return ExtractionCosts(
        memory_id=memory_id,
        jobs=count,
        calls=total.calls,
        prompt_tokens=total.prompt_tokens,
        completion_tokens=total.completion_tokens,
        latency_ms=total.latency_ms,
        outcomes=dict(sorted(outcomes.items())),
        states={s.value: states[s.value] for s in JobState},
        latest={j.message_id: j.id for j in current if j.message_id is not None},
        replaced=count - len(current),
    )
