"""Durable jobs: claims with a lease, progress logs, retries with backoff, parking, a worker.

A job row lives in the same database as the entries. A worker claims the oldest due job with a
lease (``Writer.claim_job``), runs its handler, and finishes it in one write transaction that
first checks the lease is still its own: a worker that was presumed dead and whose job another
worker took over can never write twice. A killed worker loses nothing: its lease expires and
the job is claimed again. Transient failures (timeouts, HTTP 5xx, a busy store) are retried
with exponential backoff; after the last attempt the job is parked with outcome ``failed``.

Progress follows RAGFlow's task view: 0 → 0.15 → 0.35 → 0.5 → 0.65 → 0.85 → 0.95 → 1.0, or -1
on failure, and every step appends ``YYYY-MM-DD HH:MM:SS <text>`` to ``progress_msg``.

=============  =======  ========  ============================================================
outcome        state    progress  when
=============  =======  ========  ============================================================
done           done     1.0       entries written (counts in the result)
empty          done     1.0       a valid reply with nothing to keep
unparseable    failed   -1        the reply is not JSON
invalid        failed   -1        JSON of the wrong shape (types, fields, too many items)
failed         parked   -1        transient errors after the last attempt, or a permanent one
skipped        parked   -1        no chat model configured, or the turn was forgotten
=============  =======  ========  ============================================================
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from recallery.clock import Clock
from recallery.errors import CapacityExceeded, ChatError, ModelError, RecalleryError, StoreError
from recallery.models import Job, JobKind, JobState, Outcome
from recallery.observe import Observer
from recallery.providers.base import ChatModel, ChatReply, ChatRequest
from recallery.providers.usage import Meter
from recallery.settings import Settings
from recallery.store.base import Store
from recallery.store.writer import Writer

log = logging.getLogger(__name__)

STAMP = "%Y-%m-%d %H:%M:%S"
#: The progress log keeps this many last lines (as RAGFlow does).
LOG_LINES = 3000
SUCCESS = frozenset({Outcome.DONE, Outcome.EMPTY})
_STATE = {
    Outcome.DONE: JobState.DONE,
    Outcome.EMPTY: JobState.DONE,
    Outcome.UNPARSEABLE: JobState.FAILED,
    Outcome.INVALID: JobState.FAILED,
    Outcome.FAILED: JobState.PARKED,
    Outcome.SKIPPED: JobState.PARKED,
}


@dataclass(frozen=True)
class WorkerConfig:
    lease_s: float = 600.0
    """How long a claim holds without news; every progress step renews it."""
    max_attempts: int = 3
    backoff_s: float = 10.0
    """Delay before the second attempt; doubled for each later one."""
    backoff_max_s: float = 900.0
    poll_s: float = 1.0
    """How long an idle worker waits before looking for work again."""

    @classmethod
    def from_settings(cls, settings: Settings) -> WorkerConfig:
        return cls(lease_s=settings.job_lease_s, max_attempts=settings.job_max_attempts)

    def backoff(self, attempts: int) -> timedelta:
        """Delay after failed attempt number ``attempts`` (1-based)."""
        return timedelta(
            seconds=min(self.backoff_s * 2 ** max(attempts - 1, 0), self.backoff_max_s)
        )


@dataclass(frozen=True)
class JobResult:
    """How a run ended: the outcome, a last log line and the result json (counts, ids)."""

    outcome: Outcome
    message: str
    result: Mapping[str, Any] = field(default_factory=dict)


#: A handler's deferred write: run inside the transaction that finishes the job.
Commit = Callable[[Writer], JobResult]


class LeaseLost(Exception):
    """The job is no longer this worker's (its lease expired and another worker took it, or
    the job was cancelled because its turn was erased)."""


def append_log(log_text: str, at: datetime, message: str) -> str:
    """``log_text`` with one stamped line added, trimmed to the last :data:`LOG_LINES`."""
    lines = [*log_text.splitlines(), f"{at.strftime(STAMP)} {message}"]
    return "\n".join(lines[-LOG_LINES:])


def next_progress(current: float, wanted: float) -> float:
    """Progress only moves forward, except that a failure (-1) or completion (>= 1) wins."""
    return wanted if wanted < 0 or wanted >= 1 else max(current, wanted)


class JobQueue:
    """The job table's protocol over one store: claim, progress, finish, retry, park."""

    def __init__(self, store: Store, clock: Clock, config: WorkerConfig) -> None:
        self.store = store
        self.clock = clock
        self.config = config

    def claim(self, owner: str) -> Job | None:
        with self.store.write() as w:
            return w.claim_job(self.clock.now(), self.config.lease_s, owner)

    def owned(self, w: Writer, job_id: int, owner: str) -> Job:
        """The job, if ``owner`` still holds its lease; else :class:`LeaseLost`."""
        job = w.job(job_id)
        if job is None or job.state is not JobState.RUNNING or job.lease_owner != owner:
            raise LeaseLost(f"job {job_id} is no longer held by {owner}")
        return job

    def progress(
        self, job_id: int, owner: str, value: float | None, message: str, w: Writer | None = None
    ) -> None:
        """Log a step (and move progress) and renew the lease; ``value`` None only logs."""
        if w is None:
            with self.store.write() as own:
                self.progress(job_id, owner, value, message, own)
            return
        job = self.owned(w, job_id, owner)
        now = self.clock.now()
        w.update_job(
            job_id,
            {
                "progress": job.progress if value is None else next_progress(job.progress, value),
                "progress_msg": append_log(job.progress_msg, now, message),
                "lease_until": now + timedelta(seconds=self.config.lease_s),
                "updated_at": now,
            },
        )

    def finish(self, w: Writer, job: Job, owner: str, result: JobResult) -> None:
        """Record a final outcome (inside the caller's transaction, lease checked)."""
        current = self.owned(w, job.id, owner)
        now = self.clock.now()
        w.update_job(
            job.id,
            {
                "state": _STATE[result.outcome],
                "outcome": result.outcome.value,
                "progress": 1.0 if result.outcome in SUCCESS else -1.0,
                "progress_msg": append_log(current.progress_msg, now, result.message),
                "result": {"outcome": result.outcome.value, **result.result},
                "lease_until": None,
                "lease_owner": None,
                "updated_at": now,
            },
        )

    def failed(
        self, job: Job, owner: str, message: str, *, transient: bool, result: Mapping[str, Any]
    ) -> None:
        """A run failed: requeue it with backoff while attempts remain, else park it."""
        with self.store.write() as w:
            current = self.owned(w, job.id, owner)
            if not transient or current.attempts >= self.config.max_attempts:
                why = "" if transient else " (not retried)"
                final = f"Attempt {current.attempts} failed{why}: {message}"
                self.finish(w, current, owner, JobResult(Outcome.FAILED, final, result))
                return
            now = self.clock.now()
            due = now + self.config.backoff(current.attempts)
            line = (
                f"Attempt {current.attempts} of {self.config.max_attempts} failed: {message}; "
                f"retrying after {due.strftime(STAMP)}."
            )
            w.update_job(
                job.id,
                {
                    "state": JobState.QUEUED,
                    "progress": 0.0,
                    "progress_msg": append_log(current.progress_msg, now, line),
                    "run_after": due,
                    "lease_until": None,
                    "lease_owner": None,
                    "result": dict(result),
                    "updated_at": now,
                },
            )


class JobContext:
    """What a handler sees of its running job: progress, logging, metered model calls."""

    def __init__(self, queue: JobQueue, job: Job, owner: str) -> None:
        self.queue = queue
        self.job = job
        self.owner = owner
        self.usage = Meter.from_result(job.result)
        """LLM cost of this job so far, earlier attempts included."""

    def progress(self, value: float, message: str, w: Writer | None = None) -> None:
        """Move progress and log a step (inside ``w``'s transaction when it is given)."""
        self.queue.progress(self.job.id, self.owner, value, message, w)

    def log(self, message: str, w: Writer | None = None) -> None:
        """Log a step without moving progress (inside ``w``'s transaction when given)."""
        self.queue.progress(self.job.id, self.owner, None, message, w)

    def call(self, chat: ChatModel, request: ChatRequest) -> ChatReply:
        """Call the model; its cost is counted whether or not the reply is any good."""
        return self.usage.call(chat, request)


Handler = Callable[[JobContext], "JobResult | Commit"]


class Host(Protocol):
    """What a worker needs of the engine it works for: the store holding the job table, the
    clock, settings, and the handler of each job kind the engine enqueues."""

    store: Store
    clock: Clock
    settings: Settings
    observer: Observer

    def job_handlers(self) -> Mapping[str, Handler]: ...


class Worker:
    """Claims and runs jobs of one engine, one at a time, with the handlers it is given
    (by default the engine's own, :meth:`Host.job_handlers`)."""

    def __init__(
        self,
        engine: Host,
        *,
        config: WorkerConfig | None = None,
        owner: str | None = None,
        handlers: Mapping[str, Handler] | None = None,
    ) -> None:
        self.config = config or WorkerConfig.from_settings(engine.settings)
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.queue = JobQueue(engine.store, engine.clock, self.config)
        self.handlers = dict(handlers if handlers is not None else engine.job_handlers())
        self.observer = engine.observer

    def run_once(self) -> bool:
        """Claim one due job and run it to an outcome; False when there was nothing to do."""
        job = self.queue.claim(self.owner)
        if job is None:
            return False
        try:
            started = time.perf_counter()
            self._run(job)
        except LeaseLost as exc:
            log.warning("%s; its result was dropped", exc)
        else:
            if self.observer.listeners:  # how the run ended, as its row now says
                with self.queue.store.read() as r:
                    self.observer.job(job, r.job(job.id), time.perf_counter() - started)
        return True

    def run_until_idle(self, limit: int = 100_000) -> int:
        """Run due jobs until none is left (or ``limit`` runs); returns how many ran."""
        runs = 0
        while runs < limit and self.run_once():
            runs += 1
        return runs

    def run_forever(self, stop: threading.Event) -> None:
        """Poll for work until ``stop`` is set."""
        while not stop.is_set():
            try:
                busy = self.run_once()
            except StoreError:
                log.exception("job store unavailable; waiting %ss", self.config.poll_s)
                busy = False
            if not busy:
                stop.wait(self.config.poll_s)

    def _run(self, job: Job) -> None:
        ctx = JobContext(self.queue, job, self.owner)
        if job.attempts > self.config.max_attempts:
            self._give_up(ctx, f"its lease expired on all {self.config.max_attempts} attempts")
            return
        handler = self.handlers.get(job.kind)
        if handler is None:
            self._give_up(ctx, f"no handler for jobs of kind {job.kind!r}")
            return
        try:
            ran = handler(ctx)
            with self.queue.store.write() as w:
                final = ran if isinstance(ran, JobResult) else ran(w)
                costed = JobResult(
                    final.outcome, final.message, {**final.result, **ctx.usage.result()}
                )
                self.queue.finish(w, job, self.owner, costed)
        except ChatError as exc:
            self._failed(ctx, str(exc), transient=exc.transient)
        except CapacityExceeded as exc:
            self._failed(ctx, str(exc), transient=False)
        except (ModelError, StoreError) as exc:
            self._failed(ctx, f"{type(exc).__name__}: {exc}", transient=True)
        except RecalleryError as exc:
            self._failed(ctx, f"{type(exc).__name__}: {exc}", transient=False)
        except LeaseLost:
            raise
        except Exception as exc:  # a bug: park the job with its cause, keep the worker alive
            log.exception("job %s crashed", job.id)
            self._failed(ctx, f"internal error {type(exc).__name__}: {exc}", transient=False)

    def _failed(self, ctx: JobContext, message: str, *, transient: bool) -> None:
        self.queue.failed(
            ctx.job, self.owner, message, transient=transient, result=ctx.usage.result()
        )

    def _give_up(self, ctx: JobContext, why: str) -> None:
        with self.queue.store.write() as w:
            self.queue.finish(
                w,
                ctx.job,
                self.owner,
                JobResult(Outcome.FAILED, f"Parked: {why}.", ctx.usage.result()),
            )


def start_worker(
    engine: Host,
    stop: threading.Event,
    *,
    config: WorkerConfig | None = None,
    name: str = "recallery-worker",
) -> threading.Thread:
    """Run a :class:`Worker` in a daemon thread until ``stop`` is set (``serve`` uses this)."""
    worker = Worker(engine, config=config)
    thread = threading.Thread(target=worker.run_forever, args=(stop,), name=name, daemon=True)
    thread.start()
    return thread


def record_finished(
    w: Writer, *, kind: JobKind | str, tenant_id: str, memory_id: str, at: datetime, done: JobResult
) -> int:
    """Write the finished job row of work done in a request rather than by a worker (an agent's
    statement that took the model's judgement): its outcome, log line and result (the model
    usage) kept like a worker's, so what is summed over a memory's jobs counts it. A finished
    row is never claimed. Returns its id."""
    job_id = w.enqueue_job(
        kind=kind, tenant_id=tenant_id, memory_id=memory_id, message_id=None, at=at
    )
    w.update_job(
        job_id,
        {
            "state": _STATE[done.outcome],
            "outcome": done.outcome.value,
            "progress": 1.0 if done.outcome in SUCCESS else -1.0,
            "progress_msg": append_log("", at, done.message),
            "result": {"outcome": done.outcome.value, **done.result},
        },
    )
    return job_id


__all__ = [
    "Commit",
    "Handler",
    "Host",
    "JobContext",
    "JobQueue",
    "JobResult",
    "LeaseLost",
    "Worker",
    "WorkerConfig",
    "append_log",
    "next_progress",
    "record_finished",
    "start_worker",
]
