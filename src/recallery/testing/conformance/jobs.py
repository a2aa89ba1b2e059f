"""Conformance: jobs are queued, updated and found by memory and by message."""

from __future__ import annotations

from recallery.models import JobKind, JobState
from recallery.store.base import Store
from recallery.testing.conformance.support import T0, Conformance


class JobConformance(Conformance):
    def test_jobs_enqueue_and_update(self, store: Store) -> None:
        with store.write() as w:
            j = w.enqueue_job(
                kind=JobKind.EXTRACTION, tenant_id="t", memory_id="m", message_id=5, at=T0
            )
            w.update_job(j, {"state": JobState.DONE, "progress": 1.0, "result": {"added": 2}})
        with store.read() as r:
            job = r.job(j)
            assert job is not None and job.state is JobState.DONE and job.result == {"added": 2}
            assert r.jobs_for_messages([5])[5].id == j
            assert r.jobs(frozenset({"other"})) == []

    def test_a_batch_of_jobs_is_one_queued_job_per_entry(self, store: Store) -> None:
        with store.write() as w:
            w.enqueue_jobs(
                kind=JobKind.EXTRACTION, tenant_id="t", memory_id="m", message_ids=[4, 2], at=T0
            )
            w.enqueue_jobs(
                kind=JobKind.EXTRACTION, tenant_id="t", memory_id="n", message_ids=[], at=T0
            )
            one = w.enqueue_job(
                kind=JobKind.EXTRACTION, tenant_id="t", memory_id="m", message_id=8, at=T0
            )
        with store.read() as r:
            jobs = r.jobs(frozenset({"m", "n"}))
            by_message = r.jobs_for_messages([4, 2, 8])
        assert sorted(j.message_id or 0 for j in jobs) == [2, 4, 8]
        assert {(j.kind, j.state, j.attempts, j.memory_id) for j in jobs} == {
            (JobKind.EXTRACTION, JobState.QUEUED, 0, "m")
        }
        single = by_message[8]
        for batched in (by_message[4], by_message[2]):
            assert (batched.progress_msg, batched.created_at, batched.run_after) == (
                single.progress_msg,
                single.created_at,
                single.run_after,
            )
        assert one == single.id and by_message[4].id < by_message[2].id < one
