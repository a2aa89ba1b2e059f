"""What agents state directly: typed entries (origin ``manual``) reconciled like extraction's
output, and the extraction job of a turn (its task status).

A stated entry goes through the same consolidation as an extracted one
(:func:`recallery.extraction.reconcile.plan`, then :func:`recallery.extraction.apply.write`):
a repeat adds no row (the entry's evidence grows: the source turn when one is named, else an
audit event saying who stated it again), a contradiction supersedes the old entry (retired,
its ``invalid_at`` closed), and a fact matching a rejected entry is dropped. Where telling a
contradiction from a second fact takes the model's judgement and the memory has no chat model
configured, the entry is added and the result says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields

import numpy as np
from numpy.typing import NDArray

from recallery import validation as v
from recallery.access import Action, authorised, decide
from recallery.clock import Clock
from recallery.errors import ChatError, InvalidInput, NotFound
from recallery.extraction import prompts_reconcile
from recallery.extraction.apply import Planned, Provenance, write
from recallery.extraction.consolidate import Repeats, consolidate
from recallery.extraction.extractor import Candidate
from recallery.extraction.reconcile import DEFAULT_THRESHOLDS, Decision, Thresholds, resolve
from recallery.extraction.reconcile import Action as Step
from recallery.jobs import JobResult, record_finished
from recallery.models import (
    Entry,
    EntryType,
    Job,
    JobKind,
    Memory,
    Origin,
    Outcome,
    Principal,
    Scope,
)
from recallery.ownership import named
from recallery.policies.capacity import need_bytes
from recallery.providers.base import ChatModel
from recallery.providers.registry import ModelRegistry
from recallery.providers.usage import Meter, Usage
from recallery.requests import AddedEntries, EntryInput, EntryOutcome
from recallery.services.entries import existing
from recallery.store.base import Store
from recallery.store.writer import Writer

#: Entries one call may state.
MAX_ENTRIES = 100
#: The one action a key without ``read`` is told (see :func:`_blind`).
STORED = "stored"
_INPUT_FIELDS = frozenset(f.name for f in fields(EntryInput))


class StatementService:
    """Entries stated by agents, and the task status of a turn."""

    def __init__(
        self,
        store: Store,
        models: ModelRegistry,
        clock: Clock,
        thresholds: Thresholds = DEFAULT_THRESHOLDS,
    ) -> None:
        self.store = store
        self.models = models
        self.clock = clock
        self.thresholds = thresholds

    def add_entries(
        self,
        actor: Principal,
        memory_id: object,
        entries: object,
        *,
        user_id: object = "",
        agent_id: object = "",
        session_id: object = "",
        source_id: object = None,
    ) -> AddedEntries:
        """Write typed entries (``EntryInput`` or mappings with its fields) into a memory,
        reconciled with what it holds; ``source_id``: a raw turn of the memory they come from
        (their provenance, and what a repeat adds to the evidence)."""
        mid = v.memory_id(memory_id)
        ids = {
            "user_id": v.optional_id_text(user_id, "user_id"),
            "agent_id": v.optional_id_text(agent_id, "agent_id"),
            "session_id": v.optional_id_text(session_id, "session_id"),
        }
        source = None if source_id is None else v.message_id(source_id, "source_id")
        with self.store.read() as r:
            memory = authorised(actor, Action.WRITE, r.memory(mid), mid)
            raw = None if source is None else _source_turn(r.entry(Scope.of(mid), source), mid)
        candidates = self._candidates(memory, entries)
        embedder = self.models.embedder(memory.model_id)
        need_bytes([c.content for c in candidates], embedder.dimension, memory.memory_size)
        vectors = embedder.embed([c.content for c in candidates])
        usage = Meter()
        provenance = _provenance(actor, raw, ids)
        planned, notes = self._plan(memory, provenance.user_id, candidates, vectors, usage)
        with self.store.write() as w:
            locked = authorised(actor, Action.WRITE, w.lock_memory(mid), mid)
            if raw is not None:
                _source_turn(w.entry(Scope.of(mid), raw.message_id), mid)
            tally, final = write(
                w, self.clock.now(), locked, planned, provenance, self.thresholds, notes.append
            )
            judged = sum(p.judged for p in final)
            self._record(w, locked, usage, JobResult(Outcome.DONE, _stated(final, judged)))
        outcomes = [_outcome(i, p.decision, tally.written.get(i)) for i, p in enumerate(final)]
        if not decide(actor, Action.READ, locked):
            return AddedEntries(mid, tuple(_blind(o) for o in outcomes), ())
        return AddedEntries(mid, tuple(outcomes), tuple(notes), usage)

    def task_status(self, actor: Principal, memory_id: object, message_id: object) -> Job | None:
        """The extraction job of a raw turn (None: the memory extracts nothing)."""
        mid, eid = v.memory_id(memory_id), v.message_id(message_id)
        with self.store.read() as r:
            memory = authorised(actor, Action.READ, r.memory(mid), mid)
            existing(r.entry(Scope.of(memory.id), eid), memory.id, eid)
            return r.jobs_for_messages([eid]).get(eid)

    def _candidates(self, memory: Memory, entries: object) -> list[Candidate]:
        if not isinstance(entries, Sequence) or isinstance(entries, (str, bytes)):
            raise InvalidInput("entries", "entries must be a list of entries.")
        if not entries or len(entries) > MAX_ENTRIES:
            raise InvalidInput("entries", f"entries must hold 1 to {MAX_ENTRIES} entries.")
        now = self.clock.now()
        found = []
        for i, item in enumerate(entries):
            given = _entry_input(item, i)
            kind = _entry_type(given.message_type, memory, i)
            valid = v.optional_timestamp(given.valid_at, f"entries[{i}].valid_at") or now
            invalid = v.optional_timestamp(given.invalid_at, f"entries[{i}].invalid_at")
            if invalid is not None and invalid <= valid:
                raise InvalidInput(f"entries[{i}].invalid_at", "invalid_at must follow valid_at.")
            text = v.text(given.content, f"entries[{i}].content", empty=False).strip()
            found.append(Candidate(kind, text, valid, invalid))
        return found

    def _plan(
        self,
        memory: Memory,
        user_id: str,
        candidates: Sequence[Candidate],
        vectors: NDArray[np.float32],
        usage: Meter,
    ) -> tuple[list[Planned], list[str]]:
        """Each candidate's decision, asking the chat model (metered into ``usage``) where it
        takes judgement; an item repeating an earlier one of the call is its duplicate. A
        failed model call is recorded with its cost before it is raised."""
        chat, notes = self._chat(memory), list[str]()

        def judge(index: int, candidate: Candidate, decision: Decision) -> Decision:
            if chat is None:
                note = f"{decision.reason}, which takes judgement; no chat model is configured "
                notes.append(f"entry {index}: {note}for the memory, so it was added")
                return Decision(Step.ADD, reason=f"{decision.reason}; added without judgement")
            reply = usage.call(chat, prompts_reconcile.build_request(candidate, decision.options))
            return resolve(reply.text, decision.options)

        try:
            planned = consolidate(
                self.store,
                memory.id,
                user_id,
                candidates,
                vectors,
                judge=judge,
                note=lambda _: None,
                label=lambda i, _: f"entry {i}",
                repeats=Repeats.DUPLICATE,
                thresholds=self.thresholds,
            )
        except ChatError as exc:
            with self.store.write() as w:
                self._record(
                    w, memory, usage, JobResult(Outcome.FAILED, f"Judgement failed: {exc}")
                )
            raise
        return planned, notes

    def _record(self, w: Writer, memory: Memory, usage: Usage, done: JobResult) -> None:
        """The statement's model cost, as a finished ``statement`` job of the memory (none
        when the model was not asked)."""
        if usage.calls:
            final = JobResult(done.outcome, done.message, {**done.result, **usage.result()})
            at = self.clock.now()
            record_finished(
                w,
                kind=JobKind.STATEMENT,
                tenant_id=memory.tenant_id,
                memory_id=memory.id,
                at=at,
                done=final,
            )

    def _chat(self, memory: Memory) -> ChatModel | None:
        try:
            return self.models.chat_model(memory.llm_id)
        except InvalidInput:
            return None


def _entry_input(item: object, i: int) -> EntryInput:
    if isinstance(item, EntryInput):
        return item
    if not isinstance(item, Mapping):
        raise InvalidInput(f"entries[{i}]", "each entry must be an object with its content.")
    unknown = sorted(str(k) for k in item if k not in _INPUT_FIELDS)
    if unknown:
        raise InvalidInput(f"entries[{i}].{unknown[0]}", f"unknown entry field {unknown[0]!r}.")
    if "content" not in item:
        raise InvalidInput(f"entries[{i}].content", "each entry needs its content.")
    return EntryInput(**{str(k): val for k, val in item.items()})


def _entry_type(value: object, memory: Memory, i: int) -> EntryType:
    field = f"entries[{i}].message_type"
    try:
        kind = EntryType(str(value))
    except ValueError:
        raise InvalidInput(field, f"unknown entry type {str(value)[:20]!r}.") from None
    if kind not in memory.extracted_types:
        enabled = ", ".join(t.value for t in memory.extracted_types) or "none"
        raise InvalidInput(field, f"the memory does not keep {kind.value} entries ({enabled}).")
    return kind


def _source_turn(entry: Entry | None, memory_id: str) -> Entry:
    if entry is None or entry.message_type is not EntryType.RAW:
        raise NotFound(f"Source turn not found in memory '{memory_id}'.")
    return entry


def _provenance(actor: Principal, raw: Entry | None, ids: Mapping[str, str]) -> Provenance:
    """Stated by ``actor``; ids not given come from the source turn. Entries derived from a
    turn belong to the turn's person: another ``user_id`` is refused, naming both."""

    def pick(name: str) -> str:
        return ids[name] or (getattr(raw, name) if raw is not None else "")

    if raw is not None and ids["user_id"] and ids["user_id"] != raw.user_id:
        raise InvalidInput(
            "user_id",
            f"entries from turn {raw.message_id} belong to its {named(raw.user_id)}, "
            f"not to {named(ids['user_id'])}.",
        )

    return Provenance(
        actor=actor.user_id,
        origin=Origin.MANUAL,
        source=raw,
        user_id=pick("user_id"),
        agent_id=pick("agent_id"),
        session_id=pick("session_id"),
        status=True if raw is None else raw.status,
        added=f"stated by {actor.user_id}",
    )


def _stated(final: Sequence[Planned], judged: int) -> str:
    return (
        f"Statement of {len(final)} entr{'y' if len(final) == 1 else 'ies'}: "
        f"{judged} judged by the chat model ({prompts_reconcile.PROMPT_VERSION})."
    )


def _blind(outcome: EntryOutcome) -> EntryOutcome:
    """An outcome as a key without ``read`` gets it: ``stored``, whatever reconciliation found.
    Told ``duplicate`` (or ``supersede``, ``suppress``, an entry's id), a key that may write but
    not read could guess stored facts one statement at a time."""
    return EntryOutcome(outcome.index, STORED, None, None, "stored")


def _outcome(index: int, d: Decision, new_id: int | None) -> EntryOutcome:
    holder = new_id if new_id is not None else (d.target if d.action is Step.DUPLICATE else None)
    target = None if d.action is Step.ADD else d.target
    return EntryOutcome(index, d.action.value, holder, target, d.reason)


__all__ = ["MAX_ENTRIES", "StatementService"]
