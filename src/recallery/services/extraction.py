"""A memory's chat model, tried and re-run: test it with one tiny request, and queue a turn's
extraction again (one turn, or every turn whose extraction failed).

Testing the model needs ``manage`` (``configure``): it spends a model call on the memory's
configuration. Re-running extraction needs ``write``, as adding the turn did: it queues the
same job that adding the turn queued, and the entries it writes are audited as that job's.
The retry itself is audited as ``job.retry`` on the turn.
"""

from __future__ import annotations

from datetime import datetime

from recallery import validation as v
from recallery.access import Action, authorised
from recallery.clock import Clock
from recallery.errors import ChatError, Conflict, InvalidInput, NotFound
from recallery.models import (
    AuditAction,
    EntryType,
    Job,
    JobKind,
    JobState,
    Memory,
    Outcome,
    Principal,
    Scope,
)
from recallery.providers.base import ChatMessage, ChatRequest
from recallery.providers.registry import ModelRegistry
from recallery.requests.runs import ChatCheck, Retried
from recallery.store.base import Store
from recallery.store.writer import Writer

#: Outcomes "Retry failed" queues again: the call failed, or the reply was unusable. A
#: ``skipped`` job (no chat model, or a forgotten turn) is retried one turn at a time.
RETRYABLE = frozenset({Outcome.FAILED, Outcome.UNPARSEABLE, Outcome.INVALID})
#: The test request: one short message, a one-word answer.
PROBE = ChatRequest(
    (ChatMessage("user", "Reply with the single word OK."),), temperature=0.0, schema=None
)


class ExtractionService:
    """Test a memory's chat model; re-run its extraction jobs."""

    def __init__(self, store: Store, models: ModelRegistry, clock: Clock) -> None:
        self.store = store
        self.models = models
        self.clock = clock

    def test_chat_model(self, actor: Principal, memory_id: object) -> ChatCheck:
        """Send one tiny request through the memory's chat model; never raises for the
        model's failure (it is the answer)."""
        mid = v.memory_id(memory_id)
        with self.store.read() as r:
            memory = authorised(actor, Action.CONFIGURE, r.memory(mid), mid)
        chat = self.models.chat_model(memory.llm_id)
        if chat is None:
            warning = self.models.chat_warning(memory.llm_id) or "no chat model configured"
            return ChatCheck(memory.llm_id, False, error=warning)
        try:
            reply = chat.complete(PROBE)
        except ChatError as exc:
            return ChatCheck(memory.llm_id, False, error=str(exc))
        answer = reply.text.strip()[:200]
        return ChatCheck(memory.llm_id, True, answer=answer, latency_ms=reply.latency_s * 1000)

    def retry_extraction(self, actor: Principal, memory_id: object, message_id: object) -> Job:
        """Queue the extraction of one raw turn again (its last job must have finished)."""
        mid, eid = v.memory_id(memory_id), v.message_id(message_id)
        now = self.clock.now()
        with self.store.write() as w:
            memory = _extracting(authorised(actor, Action.WRITE, w.lock_memory(mid), mid))
            turn = w.entry(Scope(frozenset({mid})), eid)
            if turn is None:
                raise NotFound(f"Entry {eid} not found in memory '{mid}'.")
            if turn.message_type is not EntryType.RAW:
                raise InvalidInput("message_id", f"Entry {eid} is a fact, not a turn.")
            last = w.jobs_for_messages([eid]).get(eid)
            if last is not None and last.state in (JobState.QUEUED, JobState.RUNNING):
                raise Conflict(f"The extraction of turn {eid} is already {last.state.value}.")
            (job_id,) = _requeue(w, actor, memory, (eid,), now)
            found = w.job(job_id)
        assert found is not None
        return found

    def retry_failed_extraction(self, actor: Principal, memory_id: object) -> Retried:
        """Queue again every turn whose last extraction job ended failed, unparseable or
        invalid (``RETRYABLE``); a turn retried already and waiting is not queued twice."""
        mid = v.memory_id(memory_id)
        now = self.clock.now()
        with self.store.write() as w:
            memory = _extracting(authorised(actor, Action.WRITE, w.lock_memory(mid), mid))
            last: dict[int, Job] = {}
            for job in w.jobs(frozenset({mid})):
                if job.kind == JobKind.EXTRACTION and job.message_id is not None:
                    last[job.message_id] = job  # ordered by id: the newest wins
            turns = tuple(m for m, j in sorted(last.items()) if j.outcome in RETRYABLE)
            job_ids = _requeue(w, actor, memory, turns, now)
        return Retried(mid, job_ids, turns)


def _extracting(memory: Memory) -> Memory:
    if not memory.extracted_types:
        raise InvalidInput("memory_type", "This memory keeps raw turns only: nothing to extract.")
    return memory


def _requeue(
    w: Writer, actor: Principal, memory: Memory, turns: tuple[int, ...], now: datetime
) -> tuple[int, ...]:
    ids = []
    for eid in turns:
        ids.append(
            w.enqueue_job(
                kind=JobKind.EXTRACTION,
                tenant_id=memory.tenant_id,
                memory_id=memory.id,
                message_id=eid,
                at=now,
            )
        )
        w.audit(
            at=now,
            actor=actor.user_id,
            action=AuditAction.JOB_RETRY,
            memory_id=memory.id,
            message_id=eid,
            after={"job_id": ids[-1]},
        )
    return tuple(ids)
