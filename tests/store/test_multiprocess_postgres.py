"""Two API servers and two workers, as separate processes, on one PostgreSQL database.

2,000 turns go in concurrently through both servers, each into two memories: one extracts a
fact from every turn (through a fake OpenAI-compatible model), one has a small byte budget.
Midway one worker is killed with SIGKILL while it holds a job, and a replacement starts;
then one server is killed with SIGKILL while requests are in flight. In the end every turn a
server acknowledged is stored once (a turn in flight at the kill at most once), every
extraction job ran to completion exactly once (the killed worker's job after its lease
expired), no fact is duplicated, and the small memory never went over its budget while turns
were evicted from it, each eviction audited.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import psycopg
import pytest

from recallery.testing import FakeLLM
from recallery.testing.cluster import (
    RECALLERY,
    Cluster,
    Model,
    budget_problems,
    cluster,
    job_problems,
    stored_turns,
    turn_text,
    wait_for_jobs,
    watch_budget,
)

if TYPE_CHECKING:
    from recallery.testing.postgres import EmbeddedPostgres

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

TURNS = int(os.environ.get("RECALLERY_MULTIPROCESS_TURNS", "2000"))
CLIENT_THREADS = 8
BUDGET = 300_000
#: Room for every turn and its fact (about 3.3 kB a pair), so nothing is evicted there.
FACTS_BUDGET = 10 * 1024 * 1024
DRAIN_TIMEOUT_S = 900


def _write_turns(c: Cluster, memory_ids: list[str], killed: threading.Event) -> dict[int, Any]:
    """POST every turn from several threads, alternating servers while both live; each
    turn's written entries, or None where its server died before answering."""
    local = threading.local()
    urls = list(c.urls.values())

    def post(n: int) -> tuple[int, Any]:
        client: httpx.Client | None = getattr(local, "client", None)
        if client is None:
            client = local.client = httpx.Client(headers=c.headers(), timeout=120)
        url = urls[0] if killed.is_set() else urls[n % len(urls)]
        body = {
            "memory_id": memory_ids,
            "agent_id": "agent-1",
            "session_id": f"session-{n % 17}",
            "user_input": turn_text(n),
            "agent_response": "Noted.",
        }
        try:
            response = client.post(f"{url}/messages", json=body)
        except httpx.TransportError:
            assert url == urls[1], "the surviving server failed a request"
            return n, None  # in flight when its server was killed: not acknowledged
        assert response.status_code == 200, response.text
        return n, response.json()["data"]

    with ThreadPoolExecutor(CLIENT_THREADS) as pool:
        return dict(pool.map(post, range(TURNS)))


def _kill_while_holding_a_job(dsn: str, victim: subprocess.Popen[bytes], model: Model) -> list[int]:
    """SIGKILL ``victim`` while it holds a job; the ids of the jobs it leaves running."""
    held = "SELECT id FROM jobs WHERE state = 'running' AND lease_owner LIKE %s"
    owner = f"%:{victim.pid}:%"
    model.slow.set()  # model calls now take a while: a worker spends them holding its lease
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            deadline = time.monotonic() + 60
            while not conn.execute(held, [owner]).fetchall():
                assert time.monotonic() < deadline, "the worker never took a job"
                time.sleep(0.05)
            time.sleep(0.1)
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            return [int(r[0]) for r in conn.execute(held, [owner]).fetchall()]
    finally:
        model.slow.clear()


def _kill_a_server_midway(c: Cluster, dsn: str, memory_id: str, killed: threading.Event) -> None:
    """SIGKILL serve-2 once half the turns are stored, with requests in flight to it."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        deadline = time.monotonic() + DRAIN_TIMEOUT_S
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT count(*) FROM entries WHERE memory_id = %s AND message_type = 'raw'",
                [memory_id],
            )
            found = row.fetchone()
            if found is not None and found[0] >= TURNS // 2:
                break
            time.sleep(0.05)
    c.kill("serve-2")
    killed.set()


def test_servers_and_workers_share_one_database(
    postgres_server: EmbeddedPostgres, tmp_path: Path
) -> None:
    if not RECALLERY.exists():
        pytest.skip(f"{RECALLERY} is missing (pip install -e .)")
    dsn = postgres_server.create_database(f"multiprocess_{uuid.uuid4().hex[:8]}")
    model = Model()
    with FakeLLM(model) as llm, cluster(dsn, llm, tmp_path / "logs") as c:
        c.serve("serve-1")  # the first server creates the admin; the second finds it
        c.serve("serve-2")
        facts = c.create_memory("facts", memory_type=["raw", "semantic"], memory_size=FACTS_BUDGET)
        small = c.create_memory("small", memory_type=["raw"], memory_size=BUDGET)
        c.start("worker-1", "worker")
        c.start("worker-2", "worker")
        stop, peaks, killed = threading.Event(), [], threading.Event()
        watcher = threading.Thread(target=watch_budget, args=(dsn, small, stop, peaks))
        watcher.start()
        held: list[int] = []
        try:
            writer = ThreadPoolExecutor(1).submit(_write_turns, c, [facts, small], killed)
            held = _kill_while_holding_a_job(dsn, c.procs["worker-1"], model)
            c.start("worker-3", "worker")
            _kill_a_server_midway(c, dsn, facts, killed)
            written = writer.result(timeout=DRAIN_TIMEOUT_S)
            wait_for_jobs(dsn, facts, DRAIN_TIMEOUT_S)
        except BaseException:
            print(c.tail())
            raise
        finally:
            stop.set()
            watcher.join()
    check_turns(dsn, facts, written)
    check_jobs(dsn, facts, held, model)
    assert budget_problems(dsn, small, BUDGET, peaks) == []
    check_evictions(dsn, small)


def check_turns(dsn: str, facts: str, written: dict[int, Any]) -> None:
    """Every acknowledged turn is stored once, with one raw entry per memory; a turn in
    flight at the server's kill at most once; each stored entry audited once."""
    acknowledged = {n for n, w in written.items() if w is not None}
    lost_in_flight = set(written) - acknowledged
    assert all(len(written[n]) == 2 for n in acknowledged)
    assert len(lost_in_flight) <= 2 * CLIENT_THREADS, "far more turns lost than were in flight"
    stored = stored_turns(dsn, facts)
    assert len(stored) == len(set(stored)), "a turn stored twice"
    assert acknowledged <= set(stored) <= set(written)
    ids = [int(e["message_id"]) for n in acknowledged for e in written[n]]
    with psycopg.connect(dsn) as conn:
        adds = conn.execute(
            "SELECT count(*), count(DISTINCT message_id) FROM audit WHERE action = 'entry.add' "
            "AND message_id = ANY(%s)",
            [ids],
        ).fetchone()
    assert adds == (len(ids), len(ids))


def check_jobs(dsn: str, facts: str, held: list[int], model: Model) -> None:
    """One job per stored turn, done once; the killed worker's job redone; one fact per turn."""
    assert job_problems(dsn, facts, model) == []
    with psycopg.connect(dsn) as conn:
        attempts = dict(
            conn.execute("SELECT id, attempts FROM jobs WHERE memory_id = %s", [facts]).fetchall()
        )
    assert held, "the killed worker held no job"
    assert all(attempts[k] >= 2 for k in held), "the killed worker's job was not taken over"
    retried = {k for k, a in attempts.items() if a > 1}
    assert len(retried) <= len(held) + 20, "leases expired on many jobs"
    stored = stored_turns(dsn, facts)
    assert sorted(set(model.extractions)) == sorted(stored)
    assert len(model.extractions) <= len(stored) + len(retried)


def check_evictions(dsn: str, small: str) -> None:
    """The small memory evicted turns, one audit event each."""
    with psycopg.connect(dsn) as conn:
        count = conn.execute("SELECT entry_count FROM memories WHERE id = %s", [small]).fetchone()
        evictions = conn.execute(
            "SELECT count(*) FROM audit WHERE memory_id = %s AND action = 'entry.evict'", [small]
        ).fetchone()
        adds = conn.execute(
            "SELECT count(*) FROM audit WHERE memory_id = %s AND action = 'entry.add'", [small]
        ).fetchone()
    assert count is not None and evictions is not None and adds is not None
    assert evictions[0] == adds[0] - count[0] > 0
