"""The write of an extraction: entries, supersessions, evidence, eviction and audit events, all in
the transaction that finishes the job.

Decisions were made outside the transaction (model calls never hold it), so each is checked
again here: an add whose fact another job has written since becomes a duplicate, one a
reviewer has rejected since is suppressed, and a target that was retired, rejected or removed
in the meantime turns a duplicate or supersession into an add.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memstrata.audit import iso
from memstrata.extraction.extractor import Candidate
from memstrata.extraction.neighbours import near
from memstrata.extraction.reconcile import Action, Decision, Thresholds, closing_time, plan
from memstrata.jobs import JobContext, JobResult
from memstrata.models import AuditAction, Entry, Memory, NewEntry, Origin, Outcome, Scope, Trust
from memstrata.policies.capacity import entry_size
from memstrata.policies.eviction import make_room
from memstrata.store.writer import Writer

ACTOR = "extraction"


@dataclass(frozen=True)
class Planned:
    """A candidate, its vector, and what consolidation decided for it."""

    candidate: Candidate
    vector: NDArray[np.float32]
    decision: Decision
    judged: bool = False
    label: str = ""
    """How the job log names the item (``semantic item 2``)."""

    def log_line(self) -> str:
        return f"{self.label}: {self.decision.action.value} ({self.decision.reason})"


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
    now: datetime,
    ctx: JobContext,
    memory_id: str,
    raw_id: int,
    planned: Sequence[Planned],
    base: Mapping[str, Any],
    thresholds: Thresholds,
) -> JobResult:
    scope = Scope.of(memory_id)
    memory = w.lock_memory(memory_id)
    raw = w.entry(scope, raw_id)
    if memory is None or raw is None:
        return JobResult(Outcome.FAILED, "The memory or the turn no longer exists.")
    settled = [_settle(w, memory_id, p, thresholds) for p in planned]
    targets = w.get_entries(scope, [p.decision.target for p in settled if p.decision.target])
    final = _recheck(settled, targets)
    for before, after in zip(planned, final, strict=True):
        if after.decision != before.decision:
            ctx.log(after.log_line(), w)
    tally = _Tally([], [], [], sum(p.decision.action is Action.SUPPRESS for p in final))
    _insert(w, memory, raw, final, targets, now, tally, ctx.job.id)
    for p in final:
        if p.decision.action is Action.DUPLICATE and p.decision.target is not None:
            _dedupe(w, targets[p.decision.target], raw_id, now, tally)
    ctx.progress(0.95, "Messages saved to storage.", w)
    counts = tally.counts()
    summary = ", ".join(f"{n} {k}" for k, n in counts.items())
    ids = {"added": tally.added, "deduped": tally.deduped, "superseded": tally.superseded}
    return JobResult(
        Outcome.DONE,
        f"Message saved successfully ({summary}).",
        {**base, "counts": counts, "entry_ids": ids},
    )


def _settle(w: Writer, memory_id: str, p: Planned, thresholds: Thresholds) -> Planned:
    """An add or supersession, unless a clear duplicate or a rejected look-alike appeared
    since it was decided (another job wrote the same fact, a reviewer rejected it)."""
    if p.decision.action not in (Action.ADD, Action.SUPERSEDE):
        return p
    current, rejected = near(w, memory_id, p.candidate, p.vector)
    fresh = plan(p.candidate, current, rejected, thresholds)
    if fresh.action not in (Action.DUPLICATE, Action.SUPPRESS):
        return p
    return replace(p, decision=replace(fresh, reason=f"{fresh.reason}, found at write time"))


def _recheck(planned: Sequence[Planned], targets: Mapping[int, Entry]) -> list[Planned]:
    """Each decision against its target as it is now (see :func:`_checked`); an entry is
    superseded at most once per job."""
    out: list[Planned] = []
    claimed: set[int] = set()
    for p in planned:
        d = _checked(p.decision, targets, claimed)
        if d.action is Action.SUPERSEDE and d.target is not None:
            claimed.add(d.target)
        out.append(replace(p, decision=d))
    return out


def _checked(d: Decision, targets: Mapping[int, Entry], claimed: set[int]) -> Decision:
    """A duplicate of an entry rejected since is suppressed, of one removed since is added
    (one retired since keeps the evidence: re-adding it would bring an old fact back). A
    supersession of an entry that is no longer current, or already superseded here, adds."""
    if d.action not in (Action.DUPLICATE, Action.SUPERSEDE) or d.target is None:
        return d
    t = targets.get(d.target)
    if t is not None and t.trust is Trust.REJECTED and d.action is Action.DUPLICATE:
        return Decision(Action.SUPPRESS, t.message_id, f"entry {t.message_id} rejected meanwhile")
    if d.action is Action.DUPLICATE and t is not None:
        return d
    stale = t is None or t.retired_at is not None or t.trust is Trust.REJECTED
    if stale or d.target in claimed:
        return Decision(Action.ADD, reason=f"entry {d.target} changed meanwhile; added")
    return d


def _insert(
    w: Writer,
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
    make_room(w, memory, sum(e.size_bytes for e in new), now, protected)
    ids = w.insert_entries(new, vectors, now)
    for p, new_id, entry in zip(adding, ids, new, strict=True):
        w.audit(
            at=now,
            actor=ACTOR,
            action=AuditAction.ENTRY_ADD,
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
        action=AuditAction.ENTRY_SUPERSEDE,
        memory_id=old.memory_id,
        message_id=old.message_id,
        reason=f"contradicted by entry {new_id} from turn {raw_id}",
        before={"invalid_at": iso(old.invalid_at), "retired_at": None},
        after={"invalid_at": iso(closes), "retired_at": iso(now), "superseded_by": new_id},
    )


def _dedupe(w: Writer, target: Entry, raw_id: int, now: datetime, tally: _Tally) -> None:
    tally.deduped.append(target.message_id)
    if target.source_id == raw_id or not w.add_evidence(target.message_id, raw_id, now):
        return
    w.audit(
        at=now,
        actor=ACTOR,
        action=AuditAction.ENTRY_DEDUPE,
        memory_id=target.memory_id,
        message_id=target.message_id,
        reason=f"repeated in turn {raw_id}",
        after={"evidence": raw_id},
    )
