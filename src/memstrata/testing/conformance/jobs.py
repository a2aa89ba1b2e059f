"""Conformance: jobs are queued, updated and found by memory and by message."""

from __future__ import annotations

from memstrata.models import JobKind, JobState
from memstrata.store.base import Store
from memstrata.testing.conformance.support import T0, Conformance


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
