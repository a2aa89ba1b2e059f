"""The write of consolidated candidates: entries, supersessions, evidence, eviction and audit
events, all in one transaction. :func:`write` does it for candidates from anywhere (the
:class:`Provenance` says where); :func:`apply` is the extraction job's, in the transaction that
finishes the job. Entries an agent states directly (:mod:`recallery.services.statements`) go
through :func:`write` too.

Decisions were made outside the transaction (model calls never hold it), so each is checked
again here: an add whose fact another writer has written since becomes a duplicate, one a
reviewer has rejected since is suppressed, and a target that was retired, rejected or removed
in the meantime turns a duplicate or supersession into an add.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from recallery.audit import summary
from recallery.extraction.extractor import Candidate
from recallery.extraction.neighbours import near
from recallery.extraction.reconcile import Action, Decision, Thresholds, closing_time, plan
from recallery.jobs import JobContext, JobResult
from recallery.models import AuditAction, Entry, Memory, NewEntry, Origin, Outcome, Scope, Trust
from recallery.policies.capacity import entry_size
from recallery.policies.eviction import make_room
from recallery.store.writer import Writer

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


@dataclass(frozen=True)
class Provenance:
    """Where candidates come from: who writes them, with which origin, from which raw turn
    (None: stated directly, with no turn), and the ids and status the new entries take."""

    actor: str
    origin: Origin
    source: Entry | None
    user_id: str = ""
    agent_id: str = ""
    session_id: str = ""
    status: bool = True
    added: str = ""
    """The reason of each new entry's audit event."""

    @classmethod
    def extraction(cls, raw: Entry, job_id: int) -> Provenance:
        return cls(
            actor=ACTOR,
            origin=Origin.EXTRACTION,
            source=raw,
            user_id=raw.user_id,
            agent_id=raw.agent_id,
            session_id=raw.session_id,
            status=raw.status,
            added=f"extracted from turn {raw.message_id} by job {job_id}",
        )

    @property
    def source_id(self) -> int | None:
        return None if self.source is None else self.source.message_id

    def where(self) -> str:
        """How audit reasons name the origin: the turn, or who stated it."""
        return f"turn {self.source_id}" if self.source else f"a statement by {self.actor}"


@dataclass
class Tally:
    added: list[int]
    deduped: list[int]
    superseded: list[int]
    suppressed: int = 0
    written: dict[int, int] = field(default_factory=dict)
    """The new entry's id of each planned item that added one, by its position."""

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
    """The extraction job's write, in the transaction that finishes the job."""
    memory = w.lock_memory(memory_id)
    raw = w.entry(Scope.of(memory_id), raw_id)
    if memory is None or raw is None:
        return JobResult(Outcome.FAILED, "The memory or the turn no longer exists.")
    provenance = Provenance.extraction(raw, ctx.job.id)
    tally, _ = write(w, now, memory, planned, provenance, thresholds, lambda m: ctx.log(m, w))
    ctx.progress(0.95, "Messages saved to storage.", w)
    counts = tally.counts()
    summary = ", ".join(f"{n} {k}" for k, n in counts.items())
    ids = {"added": tally.added, "deduped": tally.deduped, "superseded": tally.superseded}
    return JobResult(
        Outcome.DONE,
        f"Message saved successfully ({summary}).",
        {**base, "counts": counts, "entry_ids": ids},
    )


def write(
    w: Writer,
    now: datetime,
    memory: Memory,
    planned: Sequence[Planned],
    provenance: Provenance,
    thresholds: Thresholds,
    log: Callable[[str], None],
) -> tuple[Tally, list[Planned]]:
    """Write ``planned`` into the locked ``memory``, each decision checked again first (a
    changed decision is logged); the tally and the decisions as they were carried out."""
    scope = Scope.of(memory.id)
    settled = [_settle(w, memory.id, provenance.user_id, p, thresholds) for p in planned]
    targets = w.get_entries(scope, [p.decision.target for p in settled if p.decision.target])
    final = _recheck(settled, targets)
    for before, after in zip(planned, final, strict=True):
        if after.decision != before.decision:
            log(after.log_line())
    tally = Tally([], [], [], sum(p.decision.action is Action.SUPPRESS for p in final))
    _insert(w, memory, provenance, final, targets, now, tally)
    for p in final:
        if p.decision.action is Action.DUPLICATE and p.decision.target is not None:
            _dedupe(w, targets[p.decision.target], provenance, now, tally)
    return tally, final


def _settle(w: Writer, memory_id: str, user_id: str, p: Planned, thresholds: Thresholds) -> Planned:
    """An add or supersession, unless a clear duplicate or a rejected look-alike appeared
    since it was decided (another job wrote the same fact, a reviewer rejected it)."""
    if p.decision.action not in (Action.ADD, Action.SUPERSEDE):
        return p
    current, rejected = near(w, memory_id, user_id, p.candidate, p.vector)
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
    provenance: Provenance,
    planned: Sequence[Planned],
    targets: Mapping[int, Entry],
    now: datetime,
    tally: Tally,
) -> None:
    adding = [
        (i, p) for i, p in enumerate(planned) if p.decision.action in (Action.ADD, Action.SUPERSEDE)
    ]
    if not adding:
        return
    vectors = np.stack([p.vector for _, p in adding]).astype(np.float32)
    new = [_new_entry(memory, provenance, p, vectors.shape[1]) for _, p in adding]
    source = () if provenance.source_id is None else (provenance.source_id,)
    protected = frozenset({*source, *targets})
    make_room(w, memory, sum(e.size_bytes for e in new), now, protected)
    ids = w.insert_entries(new, vectors, now)
    for (i, p), new_id, entry in zip(adding, ids, new, strict=True):
        w.audit(
            at=now,
            actor=provenance.actor,
            action=AuditAction.ENTRY_ADD,
            memory_id=memory.id,
            message_id=new_id,
            reason=provenance.added,
            after={
                "origin": provenance.origin.value,
                "message_type": entry.message_type.value,
                "source_id": provenance.source_id,
                "supersedes": entry.supersedes,
            },
        )
        tally.added.append(new_id)
        tally.written[i] = new_id
        if p.decision.action is Action.SUPERSEDE and p.decision.target is not None:
            _supersede(w, targets[p.decision.target], new_id, p.candidate, provenance, now)
            tally.superseded.append(p.decision.target)


def _new_entry(memory: Memory, provenance: Provenance, p: Planned, dimension: int) -> NewEntry:
    c = p.candidate
    return NewEntry(
        memory_id=memory.id,
        tenant_id=memory.tenant_id,
        message_type=c.type,
        content=c.content,
        valid_at=c.valid_at,
        invalid_at=c.invalid_at,
        size_bytes=entry_size(c.content, dimension),
        user_id=provenance.user_id,
        agent_id=provenance.agent_id,
        session_id=provenance.session_id,
        source_id=provenance.source_id,
        supersedes=p.decision.target if p.decision.action is Action.SUPERSEDE else None,
        origin=provenance.origin,
        status=provenance.status,
    )


def _supersede(
    w: Writer, old: Entry, new_id: int, new: Candidate, provenance: Provenance, now: datetime
) -> None:
    closes = closing_time(old.valid_at, old.invalid_at, new.valid_at)
    w.update_entries(
        [old.message_id], {"retired_at": now, "superseded_by": new_id, "invalid_at": closes}
    )
    w.audit(
        at=now,
        actor=provenance.actor,
        action=AuditAction.ENTRY_SUPERSEDE,
        memory_id=old.memory_id,
        message_id=old.message_id,
        reason=f"contradicted by entry {new_id} from {provenance.where()}",
        before={"invalid_at": summary(old.invalid_at), "retired_at": None},
        after={"invalid_at": summary(closes), "retired_at": summary(now), "superseded_by": new_id},
    )


def _dedupe(w: Writer, target: Entry, provenance: Provenance, now: datetime, tally: Tally) -> None:
    """A repeat: its turn joins the entry's evidence (once); a statement with no turn is
    recorded as repeated by whom."""
    tally.deduped.append(target.message_id)
    raw_id = provenance.source_id
    if raw_id is not None and (
        target.source_id == raw_id or not w.add_evidence(target.message_id, raw_id, now)
    ):
        return
    w.audit(
        at=now,
        actor=provenance.actor,
        action=AuditAction.ENTRY_DEDUPE,
        memory_id=target.memory_id,
        message_id=target.message_id,
        reason=f"repeated in {provenance.where()}",
        after={"evidence": raw_id},
    )
