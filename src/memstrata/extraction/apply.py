"""The write of an extraction: entries, supersessions, evidence, eviction and audit events, all in
the transaction that finishes the job.

Decisions were made outside the transaction, so each is checked again here: a target that was
retired, rejected or removed in the meantime turns a duplicate or supersession into an add.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from memstrata.extraction.extractor import Candidate
from memstrata.extraction.reconcile import Action, Decision, closing_time
from memstrata.jobs import JobContext, JobResult
from memstrata.models import Entry, Memory, NewEntry, Origin, Outcome, Scope, Trust
from memstrata.policies.capacity import entry_size
from memstrata.store.base import Writer

if TYPE_CHECKING:
    from memstrata.engine import Engine

ACTOR = "extraction"


@dataclass(frozen=True)
class Planned:
    """A candidate, its vector, and what consolidation decided for it."""

    candidate: Candidate
    vector: NDArray[np.float32]
    decision: Decision
    judged: bool = False


@dataclass
class _Tally:
    added: list[int]
    deduped: list[int]
    superseded: list[int]
    suppressed: int = 0

    def counts(self) -> dict[str, int]:
        return {
            "added": len(self.added),
            "deduped": len(self.deduped),
            "superseded": len(self.superseded),
            "suppressed": self.suppressed,
        }


def apply(
    w: Writer,
    engine: Engine,
    ctx: JobContext,
    memory_id: str,
    raw_id: int,
    planned: Sequence[Planned],
    base: Mapping[str, Any],
) -> JobResult:
    now = engine.clock.now()
    scope = Scope(frozenset({memory_id}))
    memory = w.lock_memory(memory_id)
    raw = w.entry(scope, raw_id)
    if memory is None or raw is None:
        return JobResult(Outcome.FAILED, "The memory or the turn no longer exists.")
    targets = w.get_entries(scope, [p.decision.target for p in planned if p.decision.target])
    final = _recheck(planned, targets)
    tally = _Tally([], [], [], sum(p.decision.action is Action.SUPPRESS for p in final))
    _insert(w, engine, memory, raw, final, targets, now, tally, ctx.job.id)
    for p in final:
        if p.decision.action is Action.DUPLICATE and p.decision.target is not None:
            _dedupe(w, targets[p.decision.target], raw_id, now, tally)
    ctx.queue.progress(ctx.job.id, ctx.owner, 0.95, "Messages saved to storage.", w)
    counts = tally.counts()
    summary = ", ".join(f"{n} {k}" for k, n in counts.items())
    ids = {"added": tally.added, "deduped": tally.deduped, "superseded": tally.superseded}
    return JobResult(
        Outcome.DONE,
        f"Message saved successfully ({summary}).",
        {**base, "counts": counts, "entry_ids": ids},
    )


def _recheck(planned: Sequence[Planned], targets: Mapping[int, Entry]) -> list[Planned]:
    """Decisions whose target is still a current, unrejected entry; the rest become adds.
    An entry is superseded at most once per job."""
    out: list[Planned] = []
    claimed: set[int] = set()
    for p in planned:
        d = p.decision
        if d.action in (Action.DUPLICATE, Action.SUPERSEDE):
            t = targets.get(d.target) if d.target is not None else None
            gone = t is None or t.retired_at is not None or t.trust is Trust.REJECTED
            if gone or (d.action is Action.SUPERSEDE and d.target in claimed):
                d = Decision(Action.ADD, reason=f"entry {d.target} changed meanwhile; added")
            elif d.action is Action.SUPERSEDE and d.target is not None:
                claimed.add(d.target)
        out.append(Planned(p.candidate, p.vector, d, p.judged))
    return out


def _insert(
    w: Writer,
    engine: Engine,
    memory: Memory,
    raw: Entry,
    planned: Sequence[Planned],
    targets: Mapping[int, Entry],
    now: datetime,
    tally: _Tally,
    job_id: int,
) -> None:
    adding = [p for p in planned if p.decision.action in (Action.ADD, Action.SUPERSEDE)]
    if not adding:
        return
    vectors = np.stack([p.vector for p in adding]).astype(np.float32)
    new = [_new_entry(memory, raw, p, vectors.shape[1]) for p in adding]
    protected = frozenset({raw.message_id, *targets})
    engine.make_room(w, memory, sum(e.size_bytes for e in new), now, protected)
    ids = w.insert_entries(new, vectors, now)
    for p, new_id, entry in zip(adding, ids, new, strict=True):
        w.audit(
            at=now,
            actor=ACTOR,
            action="entry.add",
            memory_id=memory.id,
            message_id=new_id,
            reason=f"extracted from turn {raw.message_id} by job {job_id}",
            after={
                "origin": Origin.EXTRACTION.value,
                "message_type": entry.message_type.value,
                "source_id": raw.message_id,
                "supersedes": entry.supersedes,
            },
        )
        tally.added.append(new_id)
        if p.decision.action is Action.SUPERSEDE and p.decision.target is not None:
            _supersede(w, targets[p.decision.target], new_id, p.candidate, raw.message_id, now)
            tally.superseded.append(p.decision.target)


def _new_entry(memory: Memory, raw: Entry, p: Planned, dimension: int) -> NewEntry:
    c = p.candidate
    return NewEntry(
        memory_id=memory.id,
        tenant_id=memory.tenant_id,
        message_type=c.type,
        content=c.content,
        valid_at=c.valid_at,
        invalid_at=c.invalid_at,
        size_bytes=entry_size(c.content, dimension),
        user_id=raw.user_id,
        agent_id=raw.agent_id,
        session_id=raw.session_id,
        source_id=raw.message_id,
        supersedes=p.decision.target if p.decision.action is Action.SUPERSEDE else None,
        origin=Origin.EXTRACTION,
        status=raw.status,
    )


def _supersede(
    w: Writer, old: Entry, new_id: int, new: Candidate, raw_id: int, now: datetime
) -> None:
    closes = closing_time(old.valid_at, old.invalid_at, new.valid_at)
    w.update_entries(
        [old.message_id], {"retired_at": now, "superseded_by": new_id, "invalid_at": closes}
    )
    w.audit(
        at=now,
        actor=ACTOR,
        action="entry.supersede",
        memory_id=old.memory_id,
        message_id=old.message_id,
        reason=f"contradicted by entry {new_id} from turn {raw_id}",
        before={"invalid_at": _iso(old.invalid_at), "retired_at": None},
        after={"invalid_at": _iso(closes), "retired_at": _iso(now), "superseded_by": new_id},
    )


def _dedupe(w: Writer, target: Entry, raw_id: int, now: datetime, tally: _Tally) -> None:
    tally.deduped.append(target.message_id)
    if target.source_id == raw_id or not w.add_evidence(target.message_id, raw_id, now):
        return
    w.audit(
        at=now,
        actor=ACTOR,
        action="entry.dedupe",
        memory_id=target.memory_id,
        message_id=target.message_id,
        reason=f"repeated in turn {raw_id}",
        after={"evidence": raw_id},
    )


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()
