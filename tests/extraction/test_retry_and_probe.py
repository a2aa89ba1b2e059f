"""A memory's chat model tried with one tiny request, and extraction re-run: one turn, or every
turn whose last job failed; who may do either, and what is audited."""

from __future__ import annotations

import pytest
from tests.support.extraction import extracted, facts, job_of, say

from recallery import Engine, Memory, Principal
from recallery.errors import Conflict, Forbidden, InvalidInput, NotFound
from recallery.jobs import Worker
from recallery.models import JobState
from recallery.testing import FakeLLM, Reply


def _key(engine: Engine, owner: Principal, *capabilities: str) -> Principal:
    _, key = engine.create_api_key(owner, owner.user_id, capabilities=list(capabilities))
    return engine.authenticate(key)


def test_a_failed_job_retried_with_a_working_model_ends_done_with_its_entries(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    broken = say(engine, alice, mem, "I live in Berlin.")
    fine = say(engine, alice, mem, "I like tea.")
    llm.push(Reply.text("not json at all"), facts(semantic=["The user likes tea"]))
    assert worker.run_once() and worker.run_once()
    assert job_of(engine, broken).outcome == "unparseable"
    assert job_of(engine, fine).outcome == "done"
    assert [e.content for e in extracted(engine, mem)] == ["The user likes tea"]

    retried = engine.retry_failed_extraction(alice, mem.id)
    assert retried.message_ids == (broken.message_id,)  # the done turn is left alone
    assert job_of(engine, broken).state is JobState.QUEUED
    llm.push(facts(semantic=["The user lives in Berlin"]))
    assert worker.run_once()
    assert not worker.run_once()  # nothing else was queued
    job = job_of(engine, broken)
    assert (job.state, job.outcome, job.id) == (JobState.DONE, "done", retried.job_ids[0])
    contents = sorted(e.content for e in extracted(engine, mem))
    assert contents == ["The user likes tea", "The user lives in Berlin"]
    events = engine.audit_log(alice, memory_id=mem.id, action="job.retry").items
    assert [(e.actor, e.message_id, e.after) for e in events] == [
        (alice.user_id, broken.message_id, {"job_id": job.id})
    ]
    assert engine.retry_failed_extraction(alice, mem.id).job_ids == ()  # nothing failed now


def test_one_turn_is_retried_once_at_a_time(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    raw = say(engine, alice, mem, "I live in Berlin.")
    with pytest.raises(Conflict, match="already queued"):
        engine.retry_extraction(alice, mem.id, raw.message_id)
    llm.push(Reply.http_error(401, "bad key"))
    assert worker.run_once()
    assert job_of(engine, raw).outcome == "failed"
    job = engine.retry_extraction(alice, mem.id, raw.message_id)
    assert (job.state, job.message_id) == (JobState.QUEUED, raw.message_id)
    llm.push(facts(semantic=["The user lives in Berlin"]))
    assert worker.run_once()
    assert [e.content for e in extracted(engine, mem)] == ["The user lives in Berlin"]
    fact = extracted(engine, mem)[0]
    with pytest.raises(InvalidInput, match="not a turn"):
        engine.retry_extraction(alice, mem.id, fact.message_id)
    with pytest.raises(NotFound):
        engine.retry_extraction(alice, mem.id, 999_999)


def test_retrying_needs_write_and_the_memory(
    engine: Engine, alice: Principal, bob: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    raw = say(engine, alice, mem, "I live in Berlin.")
    llm.push(Reply.text("nope"))
    assert worker.run_once()
    reader = _key(engine, alice, "read")
    with pytest.raises(Forbidden, match="write"):
        engine.retry_extraction(reader, mem.id, raw.message_id)
    with pytest.raises(Forbidden, match="write"):
        engine.retry_failed_extraction(reader, mem.id)
    with pytest.raises(NotFound):
        engine.retry_failed_extraction(bob, mem.id)
    assert job_of(engine, raw).state is JobState.FAILED  # nothing was queued
    assert engine.audit_log(alice, memory_id=mem.id, action="job.retry").total == 0


def test_the_chat_model_test_answers_ok_or_the_error(
    engine: Engine, alice: Principal, bob: Principal, mem: Memory, llm: FakeLLM
) -> None:
    llm.push(Reply.text("OK"))
    check = engine.test_chat_model(alice, mem.id)
    assert (check.ok, check.answer, check.error, check.llm_id) == (True, "OK", "", mem.llm_id)
    llm.push(Reply.http_error(401, "invalid api key"))
    failed = engine.test_chat_model(alice, mem.id)
    assert not failed.ok and "invalid api key" in failed.error and failed.answer == ""
    unconfigured = engine.update_memory(alice, mem.id, {"llm_id": "gpt@nowhere"})
    missing = engine.test_chat_model(alice, unconfigured.id)
    assert not missing.ok and "not configured" in missing.error
    with pytest.raises(Forbidden, match="manage"):
        engine.test_chat_model(_key(engine, alice, "read", "write"), mem.id)
    with pytest.raises(NotFound):
        engine.test_chat_model(bob, mem.id)
    assert llm.pending == 0
