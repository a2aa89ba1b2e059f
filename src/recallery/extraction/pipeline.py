"""The extraction job: one raw turn in, typed entries out, consolidated and audited.

Steps (with RAGFlow's progress values): build the prompt (0.15) → call the chat model with the
reply's JSON schema (0.35) → validate (0.5) → embed the candidates in one batch (0.65, 0.85) →
reconcile them with what the memory holds (:func:`~recallery.extraction.consolidate.consolidate`,
asking the model where it takes judgement) → apply
everything in the transaction that finishes the job (0.95, 1.0). No model call happens inside
a write transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from recallery.clock import Clock
from recallery.errors import InvalidInput
from recallery.extraction import prompts, prompts_reconcile
from recallery.extraction.apply import Planned, apply
from recallery.extraction.consolidate import Repeats, consolidate
from recallery.extraction.extractor import Candidate, Parsed, parse_reply
from recallery.extraction.reconcile import DEFAULT_THRESHOLDS, Decision, Thresholds, resolve
from recallery.jobs import Commit, JobContext, JobResult
from recallery.models import Entry, Memory, Outcome, Scope
from recallery.providers.base import ChatModel, ChatReply
from recallery.providers.registry import ModelRegistry
from recallery.store.base import Store

#: Characters of a rejected reply kept in the job result, for diagnosis.
REPLY_EXCERPT = 500


@dataclass(frozen=True)
class _Turn:
    memory: Memory
    raw: Entry


class Extraction:
    """The handler of ``extraction`` jobs: reads the turn from ``store``, calls the memory's
    chat model and embedder from ``models``, and commits through the job's own writer."""

    def __init__(
        self,
        store: Store,
        models: ModelRegistry,
        clock: Clock,
        max_items_per_type: int,
        thresholds: Thresholds = DEFAULT_THRESHOLDS,
    ) -> None:
        self.store = store
        self.models = models
        self.clock = clock
        self.max_items = max_items_per_type
        self.thresholds = thresholds

    def __call__(self, ctx: JobContext) -> JobResult | Commit:
        turn = self._load(ctx)
        if isinstance(turn, JobResult):
            return turn
        chat = self._chat(turn.memory)
        if isinstance(chat, JobResult):
            return chat
        parsed, text = self._extract(ctx, turn, chat)
        if parsed.outcome is not None:
            return _rejected(parsed, text)
        candidates = parsed.candidates
        n = len(candidates)
        ctx.progress(0.5, f"Extracted {n} fact{'' if n == 1 else 's'} from the turn.")
        embedder = self.models.embedder(turn.memory.model_id)
        ctx.progress(0.65, "Embedding model prepared.")
        vectors = embedder.embed([c.content for c in candidates])
        ctx.progress(0.85, "Extracted content embedded.")
        planned = self._consolidate(ctx, turn.memory, turn.raw.user_id, chat, candidates, vectors)
        base = {"prompt_version": prompts.PROMPT_VERSION, "model": turn.memory.llm_id}
        if any(p.judged for p in planned):
            base["reconcile_version"] = prompts_reconcile.PROMPT_VERSION
        raw_id = turn.raw.message_id
        memory_id, thresholds, clock = turn.memory.id, self.thresholds, self.clock
        return lambda w: apply(w, clock.now(), ctx, memory_id, raw_id, planned, base, thresholds)

    def _load(self, ctx: JobContext) -> _Turn | JobResult:
        job = ctx.job
        with self.store.read() as r:
            memory = r.memory(job.memory_id)
            raw = (
                None if job.message_id is None else r.entry(Scope.of(job.memory_id), job.message_id)
            )
        if memory is None or raw is None:
            return JobResult(Outcome.FAILED, "The memory or the turn no longer exists.")
        if raw.forget_at is not None:
            return JobResult(Outcome.SKIPPED, "Skipped: the turn was forgotten before extraction.")
        if not memory.extracted_types:
            return JobResult(Outcome.EMPTY, f"Memory '{memory.id}' don't need to extract.")
        return _Turn(memory, raw)

    def _chat(self, memory: Memory) -> ChatModel | JobResult:
        """The memory's chat model, or the reason there is none (outcome ``skipped``)."""
        try:
            chat = self.models.chat_model(memory.llm_id)
        except InvalidInput as exc:
            return JobResult(Outcome.SKIPPED, f"Skipped: no chat model: {exc}")
        return chat or _skipped_no_model(memory)

    def _extract(self, ctx: JobContext, turn: _Turn, chat: ChatModel) -> tuple[Parsed, str]:
        """The model's reply to the extraction prompt, validated; and its text."""
        request = prompts.build_request(turn.memory, turn.raw, self.clock.now(), self.max_items)
        ctx.progress(
            0.15, f"Prompts and LLM prepared ({prompts.PROMPT_VERSION}, {turn.memory.llm_id})."
        )
        reply = ctx.call(chat, request)
        ctx.progress(0.35, _received(reply))
        parsed = parse_reply(
            reply.text,
            turn.memory.extracted_types,
            max_items=self.max_items,
            conversation_time=turn.raw.valid_at,
        )
        for note in parsed.notes:
            ctx.log(note)
        return parsed, reply.text

    def _consolidate(
        self,
        ctx: JobContext,
        memory: Memory,
        user_id: str,
        chat: ChatModel,
        candidates: Sequence[Candidate],
        vectors: NDArray[np.float32],
    ) -> list[Planned]:
        def judge(_: int, candidate: Candidate, decision: Decision) -> Decision:
            reply = ctx.call(chat, prompts_reconcile.build_request(candidate, decision.options))
            return resolve(reply.text, decision.options)

        return consolidate(
            self.store,
            memory.id,
            user_id,
            candidates,
            vectors,
            judge=judge,
            note=ctx.log,
            label=lambda i, c: f"{c.type.value} item {i + 1}",
            repeats=Repeats.DROP,
            thresholds=self.thresholds,
        )


def _skipped_no_model(memory: Memory) -> JobResult:
    provider = memory.llm_id.rpartition("@")[2]
    env = "RECALLERY_PROVIDER_" + provider.upper().replace("-", "_") + "_BASE_URL"
    return JobResult(
        Outcome.SKIPPED,
        f"Skipped: no chat model: provider '{provider}' of '{memory.llm_id}' has no endpoint "
        f"configured (set {env}).",
    )


def _received(reply: ChatReply) -> str:
    cut = reply.finish_reason not in ("", "stop")
    return (
        f"LLM result received: {reply.prompt_tokens}+{reply.completion_tokens} tokens, "
        f"{reply.latency_s:.2f}s, {reply.calls} call(s)"
        + (f", finish reason {reply.finish_reason}." if cut else ".")
    )


def _rejected(parsed: Parsed, text: str) -> JobResult:
    """The job result of a reply that yields nothing: empty, unparseable or invalid. The
    reply's beginning is kept (it derives from this turn only, and goes with its job)."""
    assert parsed.outcome is not None
    if parsed.outcome is Outcome.EMPTY:
        return JobResult(Outcome.EMPTY, "No memory extracted from raw message.")
    problems = list(parsed.problems)
    return JobResult(
        parsed.outcome,
        f"Extraction {parsed.outcome.value}: " + "; ".join(problems[:10]),
        {
            "problems": problems,
            "reply_excerpt": text[:REPLY_EXCERPT],
            "prompt_version": prompts.PROMPT_VERSION,
        },
    )


__all__ = ["Extraction"]
