"""Durable jobs: claims with a lease, retries with backoff, parking, and no work lost when a
worker dies."""

from __future__ import annotations

import re
import threading
from datetime import timedelta

import pytest
from tests.support.extraction import CONFIG, extracted, facts, job_of, say

from recallery import Engine, Job, JobState, Memory, Principal
from recallery.jobs import (
    JobContext,
    JobQueue,
    JobResult,
    LeaseLost,
    Worker,
    append_log,
    next_progress,
    start_worker,
)
from recallery.models import Outcome
from recallery.testing import FakeLLM, FrozenClock, Reply

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S")


def queue(engine: Engine) -> JobQueue:
    return JobQueue(engine.store, engine.clock, CONFIG)


def test_claim_takes_the_oldest_due_job_with_a_lease(
    engine: Engine, alice: Principal, mem: Memory, clock: FrozenClock
) -> None:
    first, second = say(engine, alice, mem, "one"), say(engine, alice, mem, "two")
    job = queue(engine).claim("w1")
    assert job is not None
    assert job.message_id == first.message_id
    assert (job.state, job.attempts, job.lease_owner) == (JobState.RUNNING, 1, "w1")
    assert job.lease_until == clock.now() + timedelta(seconds=CONFIG.lease_s)
    nxt = queue(engine).claim("w2")
    assert nxt is not None and nxt.message_id == second.message_id
    assert queue(engine).claim("w3") is None  # both leased


def test_a_job_is_not_claimed_before_its_run_after(
    engine: Engine, alice: Principal, mem: Memory, clock: FrozenClock, llm: FakeLLM
) -> None:
    raw = say(engine, alice, mem, "one")
    llm.push(Reply.http_error(500))
    assert Worker(engine, config=CONFIG).run_once()
    assert job_of(engine, raw).run_after == clock.now() + timedelta(seconds=10)
    assert queue(engine).claim("w") is None
    clock.advance(seconds=10)
    assert queue(engine).claim("w") is not None


def test_a_killed_worker_loses_nothing(
    engine: Engine, alice: Principal, mem: Memory, clock: FrozenClock, llm: FakeLLM
) -> None:
    raw = say(engine, alice, mem, "I live in Berlin.")
    dead = queue(engine).claim("dead-worker")  # claims, then is killed: never finishes
    assert dead is not None
    survivor = Worker(engine, config=CONFIG, owner="survivor")
    assert not survivor.run_once()  # the lease still holds
    clock.advance(seconds=CONFIG.lease_s + 1)
    llm.push(facts(semantic=["The user lives in Berlin"]))
    assert survivor.run_once()
    job = job_of(engine, raw)
    assert (job.state, job.outcome, job.attempts) == (JobState.DONE, "done", 2)
    assert [e.content for e in extracted(engine, mem)] == ["The user lives in Berlin"]
    with engine.store.write() as w, pytest.raises(LeaseLost):  # the dead one cannot finish
        queue(engine).owned(w, dead.id, "dead-worker")


def test_a_worker_whose_lease_was_taken_over_writes_nothing(
    engine: Engine, alice: Principal, mem: Memory, clock: FrozenClock, llm: FakeLLM
) -> None:
    raw = say(engine, alice, mem, "I live in Berlin.")
    slow = Worker(engine, config=CONFIG, owner="slow")
    fast = Worker(engine, config=CONFIG, owner="fast")

    def answer_after_takeover(body: dict[str, object]) -> Reply:
        if len(llm.requests) == 1:  # the slow worker's call: its lease expires meanwhile
            clock.advance(seconds=CONFIG.lease_s + 1)
            llm.push(facts(semantic=["The user lives in Berlin"]))
            assert fast.run_once()
        return Reply.json(facts(semantic=["The user lives in Berlin"]))

    llm.respond_with(answer_after_takeover)
    assert slow.run_once()
    assert len(extracted(engine, mem)) == 1  # written once, by the fast worker
    job = job_of(engine, raw)
    assert (job.state, job.attempts) == (JobState.DONE, 2)


def test_transient_failures_are_retried_with_backoff(
    engine: Engine, alice: Principal, mem: Memory, clock: FrozenClock, llm: FakeLLM
) -> None:
    raw = say(engine, alice, mem, "I live in Berlin.")
    llm.push(Reply.http_error(500), Reply.http_error(503))
    llm.push(facts(semantic=["The user lives in Berlin"]))
    worker = Worker(engine, config=CONFIG)
    assert worker.run_once()
    job = job_of(engine, raw)
    assert (job.state, job.outcome, job.progress) == (JobState.QUEUED, None, 0.0)
    assert "Attempt 1 of 3 failed: chat call" in job.progress_msg
    clock.advance(seconds=10)
    assert worker.run_once()
    assert job_of(engine, raw).run_after == clock.now() + timedelta(seconds=20)
    clock.advance(seconds=20)
    assert worker.run_once()
    job = job_of(engine, raw)
    assert (job.state, job.outcome, job.attempts, job.progress) == (JobState.DONE, "done", 3, 1.0)
    assert job.result["llm"]["calls"] == 3  # failed calls are counted too


def test_a_permanent_error_is_not_retried(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM
) -> None:
    raw = say(engine, alice, mem, "I live in Berlin.")
    llm.push(Reply.http_error(401, "invalid api key"))
    assert Worker(engine, config=CONFIG).run_once()
    job = job_of(engine, raw)
    assert (job.state, job.outcome, job.attempts) == (JobState.PARKED, "failed", 1)
    assert "failed (not retried)" in job.progress_msg and "HTTP 401" in job.progress_msg


def test_a_job_whose_lease_expired_on_every_attempt_is_parked(
    engine: Engine, alice: Principal, mem: Memory, clock: FrozenClock
) -> None:
    raw = say(engine, alice, mem, "poison")
    for n in range(CONFIG.max_attempts):
        assert queue(engine).claim(f"crashing-{n}") is not None
        clock.advance(seconds=CONFIG.lease_s)
    assert Worker(engine, config=CONFIG).run_once()
    job = job_of(engine, raw)
    assert (job.state, job.outcome, job.attempts) == (JobState.PARKED, "failed", 4)
    assert "lease expired on all 3 attempts" in job.progress_msg


def enqueue(engine: Engine, memory: Memory, kind: str) -> int:
    with engine.store.write() as w:
        return w.enqueue_job(
            kind=kind,
            tenant_id=memory.tenant_id,
            memory_id=memory.id,
            message_id=None,
            at=engine.clock.now(),
        )


def stored_job(engine: Engine, job_id: int) -> Job:
    with engine.store.read() as r:
        job = r.job(job_id)
    assert job is not None
    return job


def test_a_job_of_an_unknown_kind_is_parked(engine: Engine, mem: Memory) -> None:
    job_id = enqueue(engine, mem, "mystery")
    assert Worker(engine, config=CONFIG).run_once()
    job = stored_job(engine, job_id)
    assert (job.state, job.outcome) == (JobState.PARKED, Outcome.FAILED)
    assert "no handler for jobs of kind 'mystery'" in job.progress_msg


def test_the_progress_log_follows_ragflows_task_view(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM
) -> None:
    raw = say(engine, alice, mem, "I live in Berlin.")
    llm.push(facts(semantic=["The user lives in Berlin"]))
    assert Worker(engine, config=CONFIG).run_once()
    lines = job_of(engine, raw).progress_msg.splitlines()
    assert all(LINE.match(line) for line in lines)
    texts = [line[20:] for line in lines]
    assert texts[0] == "Task has been received."
    assert texts[1].startswith("Prompts and LLM prepared (extract-")
    assert texts[2].startswith("LLM result received: ")
    assert texts[3] == "Extracted 1 fact from the turn."
    assert texts[4:6] == ["Embedding model prepared.", "Extracted content embedded."]
    assert texts[6] == "semantic item 1: add (nothing close)"
    assert texts[7:] == [
        "Messages saved to storage.",
        "Message saved successfully (1 added, 0 deduped, 0 superseded, 0 suppressed).",
    ]


def test_log_lines_are_capped_and_progress_only_moves_forward(clock: FrozenClock) -> None:
    text = "\n".join(f"old line {i}" for i in range(2998))
    for i in range(5):
        text = append_log(text, clock.now(), f"step {i}")
    lines = text.splitlines()
    assert len(lines) == 3000
    assert lines[0] == "old line 3" and lines[-1] == "2026-01-01 12:00:00 step 4"
    assert next_progress(0.5, 0.35) == 0.5
    assert next_progress(0.5, 0.65) == 0.65
    assert next_progress(0.95, -1.0) == -1.0
    assert next_progress(0.95, 1.0) == 1.0


def test_a_worker_thread_runs_jobs_until_stopped(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM
) -> None:
    llm.push(facts(semantic=["The user lives in Berlin"]))
    raw = say(engine, alice, mem, "I live in Berlin.")
    stop = threading.Event()
    thread = start_worker(engine, stop, config=CONFIG)
    try:
        for _ in range(500):
            if job_of(engine, raw).state is JobState.DONE:
                break
            stop.wait(0.01)
    finally:
        stop.set()
        thread.join(timeout=5)
    assert not thread.is_alive()
    assert job_of(engine, raw).outcome == "done"


def test_a_crashing_handler_parks_its_job_with_the_cause(engine: Engine, mem: Memory) -> None:
    job_id = enqueue(engine, mem, "buggy")

    def buggy(ctx: JobContext) -> JobResult:
        ctx.progress(0.15, "about to fail")
        raise KeyError("missing-field")

    worker = Worker(engine, config=CONFIG, handlers={"buggy": buggy})
    assert worker.run_once()
    job = stored_job(engine, job_id)
    assert (job.state, job.outcome, job.progress) == (JobState.PARKED, "failed", -1.0)
    assert "internal error KeyError: 'missing-field'" in job.progress_msg
    assert not worker.run_once()
