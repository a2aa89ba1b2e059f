"""What happened, without a browser: the jobs page shows each job's model calls, tokens and
model time (from the usage its result holds) and their total, and the result one field a row."""

from __future__ import annotations

import re

from tests.support.web import Login

from recallery import Engine, Memory, Principal
from recallery.jobs import JobQueue, JobResult, WorkerConfig
from recallery.models import Outcome

USAGE = {"calls": 2, "prompt_tokens": 812, "completion_tokens": 64, "latency_ms": 1530}


def test_jobs_show_latency_tokens_and_the_result_as_rows(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    engine.add_turn(alice, [notes.id], user_input="I live in Lisbon", agent_response="ok")
    engine.add_turn(alice, [notes.id], user_input="I moved to Berlin", agent_response="ok")
    queue = JobQueue(engine.store, engine.clock, WorkerConfig())
    job = queue.claim("worker-1")
    assert job is not None
    with engine.store.write() as w:
        queue.finish(w, job, "worker-1", JobResult(Outcome.DONE, "done", {"llm": USAGE}))
    page = login(alice_key).get(f"/memories/{notes.id}/jobs").text
    rows = {
        int(m.group(1)): m.group(0)
        for m in re.finditer(r'<tr>\s*<td class="num">(\d+)</td>.*?</tr>', page, re.S)
    }
    assert len(rows) == 2
    done, waiting = rows[job.id], next(r for i, r in rows.items() if i != job.id)
    assert '<td class="num job-calls">2</td>' in done
    assert ">812 + 64</td>" in done and ">1.5 s</td>" in done
    assert "job-calls" not in waiting and "job-tokens" not in waiting  # nothing metered yet
    assert "2 calls · 812 + 64 tokens · 1.5 s over 2 jobs" in page
    assert "<dt>llm · calls</dt><dd>2</dd>" in done  # the result one field a row


def test_the_audit_log_filters_by_a_person_chosen_by_name(
    login: Login, alice_key: str, engine: Engine, alice: Principal, bob: Principal
) -> None:
    engine.join_team(alice, alice.user_id, bob.user_id)
    shared = engine.create_memory(
        alice, name="shared", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    engine.update_memory(alice, shared.id, {"permissions": "team"})
    engine.add_turn(alice, [shared.id], user_input="alice wrote", agent_response="ok")
    engine.add_turn(
        engine.principal(bob.user_id), [shared.id], user_input="bob wrote", agent_response="ok"
    )
    stranger = engine.principal(engine.create_user("mallory").id)  # never seen by alice
    c = login(alice_key)
    page = c.get("/audit").text
    options = re.findall(r'<option value="([0-9a-f]+)" >(\w+)</option>', page)
    assert ("bob" in dict(options).values()) and ("alice" in dict(options).values())
    assert stranger.user_id not in page and "mallory" not in page
    assert 'name="actor" value=' not in page  # no raw id to type
    by_bob = c.get(f"/audit?actor={bob.user_id}&memory={shared.id}").text
    assert f'<option value="{bob.user_id}" selected>bob</option>' in by_bob
    shown = engine.audit_log(alice, memory_id=shared.id, actor_id=bob.user_id)
    assert shown.total >= 1 and f"{shown.total} event" in by_bob
    everyone = engine.audit_log(alice, memory_id=shared.id)
    assert everyone.total > shown.total  # alice's events are filtered out
