"""Two API servers and two workers, as separate processes, on one PostgreSQL database.

2,000 turns go in concurrently through both servers, each into two memories: one extracts a
fact from every turn (through a fake OpenAI-compatible model), one has a small byte budget.
Midway one worker is killed with SIGKILL while it holds a job; a replacement starts. In the
end every turn is stored once, every extraction job ran to completion exactly once (the killed
worker's job after its lease expired), no fact is duplicated, and the small memory never went
over its budget while turns were evicted from it, each eviction audited.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import psycopg
import pytest

from memstrata.testing import FakeLLM
from memstrata.testing.fake_llm import Reply
from memstrata.testing.ports import free_port

if TYPE_CHECKING:
    from memstrata.testing.postgres import EmbeddedPostgres

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

TURNS = int(os.environ.get("MEMSTRATA_MULTIPROCESS_TURNS", "2000"))
CLIENT_THREADS = 8
LEASE_S = 3
BUDGET = 300_000
#: Room for every turn and its fact (about 3.3 kB a pair), so nothing is evicted there.
FACTS_BUDGET = 10 * 1024 * 1024
EMBD = "BAAI/bge-small-en-v1.5@Builtin"
ADMIN_KEY = "mp-admin-" + uuid.uuid4().hex
MEMSTRATA = Path(sys.executable).with_name("memstrata")
START_TIMEOUT_S = 60
DRAIN_TIMEOUT_S = 900
_TURN = re.compile(r"turn number (\d+)")


# --- the fake model ---------------------------------------------------------------------------


@dataclass
class Model:
    """Answers extraction with one fact naming the turn's number; consolidation with "add"."""

    slow: threading.Event = field(default_factory=threading.Event)
    extractions: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, body: dict[str, Any]) -> Reply:
        schema = body.get("response_format", {}).get("json_schema", {}).get("name", "")
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        if schema == "reconcile_decision" or "extracted_memory" not in schema:
            return Reply.json({"action": "add", "entry": None})
        numbers = _TURN.findall(prompt)
        n = int(numbers[-1])
        with self.lock:
            self.extractions.append(n)
        fact = f"The user keeps {n} marbles in jar {n * 7 + 3}"
        item = {"content": fact, "valid_at": None, "invalid_at": None}
        return Reply(json.dumps({"semantic": [item]}), delay_s=0.6 if self.slow.is_set() else 0.0)


# --- processes --------------------------------------------------------------------------------


@dataclass
class Cluster:
    env: dict[str, str]
    logs: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    urls: list[str] = field(default_factory=list)

    def start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = open(self.logs / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(
            [str(MEMSTRATA), *args], env=self.env, stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        self.procs[name] = proc
        return proc

    def serve(self, name: str) -> str:
        port = free_port()
        self.start(name, "serve", "--no-worker", "--port", str(port), "--log-level", "warning")
        url = f"http://127.0.0.1:{port}/api/v1"
        _wait_until_serving(url, self.procs[name], self.logs / f"{name}.log")
        self.urls.append(url)
        return url

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def tail(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
            for p in sorted(self.logs.glob("*.log"))
        )


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN_KEY}"}


def _wait_until_serving(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server exited ({proc.returncode}):\n{log.read_text(errors='replace')}")
        try:
            if httpx.get(f"{url}/memories", headers=_auth(), timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    pytest.fail(f"server not ready after {START_TIMEOUT_S}s:\n{log.read_text(errors='replace')}")


@contextmanager
def cluster(dsn: str, llm: FakeLLM, tmp_path: Path) -> Iterator[Cluster]:
    env = {
        **os.environ,
        "MEMSTRATA_DATABASE_URL": dsn,
        "MEMSTRATA_DATA_DIR": str(tmp_path / "unused-data-dir"),
        "MEMSTRATA_ADMIN_API_KEY": ADMIN_KEY,
        "MEMSTRATA_PROVIDER_FAKE_BASE_URL": llm.url,
        "MEMSTRATA_PROVIDER_FAKE_API_KEY": "test-key",
        "MEMSTRATA_JOB_LEASE_S": str(LEASE_S),
        "MEMSTRATA_DATABASE_POOL_SIZE": "8",
    }
    logs = tmp_path / "logs"
    logs.mkdir()
    c = Cluster(env, logs)
    try:
        yield c
    finally:
        c.stop()


# --- the test ---------------------------------------------------------------------------------


def _create_memory(url: str, name: str, **fields: Any) -> str:
    body = {"name": name, "embd_id": EMBD, "llm_id": "fake-model@fake", **fields}
    response = httpx.post(f"{url}/memories", json=body, headers=_auth(), timeout=30)
    assert response.status_code == 200, response.text
    memory_id: str = response.json()["data"]["id"]
    return memory_id


def _write_turns(urls: list[str], memory_ids: list[str]) -> list[list[dict[str, Any]]]:
    """POST every turn, alternating servers, from several threads; the written entries."""
    local = threading.local()

    def post(n: int) -> list[dict[str, Any]]:
        client: httpx.Client | None = getattr(local, "client", None)
        if client is None:
            client = local.client = httpx.Client(headers=_auth(), timeout=120)
        body = {
            "memory_id": memory_ids,
            "agent_id": "agent-1",
            "session_id": f"session-{n % 17}",
            "user_input": f"This is turn number {n}: I counted my marbles again today.",
            "agent_response": "Noted.",
        }
        response = client.post(f"{urls[n % len(urls)]}/messages", json=body)
        assert response.status_code == 200, response.text
        written: list[dict[str, Any]] = response.json()["data"]
        return written

    with ThreadPoolExecutor(CLIENT_THREADS) as pool:
        return list(pool.map(post, range(TURNS)))


def _watch_budget(dsn: str, memory_id: str, stop: threading.Event, peaks: list[int]) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        while not stop.is_set():
            row = conn.execute("SELECT used_bytes FROM memories WHERE id = %s", [memory_id])
            peaks.append(int(row.fetchone()[0]))  # type: ignore[index]
            stop.wait(0.05)


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


def _wait_for_jobs(dsn: str, memory_id: str, expected: int) -> None:
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    with psycopg.connect(dsn, autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT count(*) FILTER (WHERE state IN ('done', 'failed', 'parked')), count(*) "
                "FROM jobs WHERE memory_id = %s",
                [memory_id],
            ).fetchone()
            assert row is not None
            if row[0] == row[1] == expected:
                return
            time.sleep(0.5)
    pytest.fail(f"jobs not finished after {DRAIN_TIMEOUT_S}s")


def test_servers_and_workers_share_one_database(
    postgres_server: EmbeddedPostgres, tmp_path: Path
) -> None:
    if not MEMSTRATA.exists():
        pytest.skip(f"{MEMSTRATA} is missing (pip install -e .)")
    dsn = postgres_server.create_database(f"multiprocess_{uuid.uuid4().hex[:8]}")
    model = Model()
    with FakeLLM(model) as llm, cluster(dsn, llm, tmp_path) as c:
        c.serve("serve-1")  # the first server creates the admin; the second finds it
        c.serve("serve-2")
        facts = _create_memory(
            c.urls[0], "facts", memory_type=["raw", "semantic"], memory_size=FACTS_BUDGET
        )
        small = _create_memory(c.urls[1], "small", memory_type=["raw"], memory_size=BUDGET)
        c.start("worker-1", "worker")
        c.start("worker-2", "worker")
        stop, peaks = threading.Event(), []
        watcher = threading.Thread(target=_watch_budget, args=(dsn, small, stop, peaks))
        watcher.start()
        killed: list[int] = []
        started = time.monotonic()
        try:
            writer = ThreadPoolExecutor(1).submit(_write_turns, c.urls, [facts, small])
            killed = _kill_while_holding_a_job(dsn, c.procs["worker-1"], model)
            c.start("worker-3", "worker")
            written = writer.result(timeout=DRAIN_TIMEOUT_S)
            print(f"turns written after {time.monotonic() - started:.0f}s")
            _wait_for_jobs(dsn, facts, TURNS)
            print(f"jobs done after {time.monotonic() - started:.0f}s")
        except BaseException:
            print(c.tail())
            raise
        finally:
            stop.set()
            watcher.join()
    check_turns(dsn, facts, small, written)
    check_jobs(dsn, facts, killed, model)
    check_budget(dsn, small, peaks)


def check_turns(dsn: str, facts: str, small: str, written: list[list[dict[str, Any]]]) -> None:
    """Each POST wrote one raw entry per memory, every id distinct, each audited once."""
    assert all(len(w) == 2 for w in written)
    ids = [int(e["message_id"]) for w in written for e in w]
    assert len(set(ids)) == 2 * TURNS
    with psycopg.connect(dsn) as conn:
        raw = conn.execute(
            "SELECT count(*), count(DISTINCT content) FROM entries "
            "WHERE memory_id = %s AND message_type = 'raw'",
            [facts],
        ).fetchone()
        adds = conn.execute(
            "SELECT count(*), count(DISTINCT message_id) FROM audit WHERE action = 'entry.add' "
            "AND message_id = ANY(%s)",
            [ids],
        ).fetchone()
    assert raw == (TURNS, TURNS)
    assert adds == (2 * TURNS, 2 * TURNS)


def check_jobs(dsn: str, facts: str, killed: list[int], model: Model) -> None:
    """One job per turn, done once; the killed worker's job redone; one fact per turn."""
    with psycopg.connect(dsn) as conn:
        jobs = conn.execute(
            "SELECT j.id, j.state, j.outcome, j.attempts, j.message_id FROM jobs j "
            "WHERE j.memory_id = %s",
            [facts],
        ).fetchall()
        per_turn = conn.execute(
            "SELECT r.message_id, count(x.message_id) FROM entries r "
            "LEFT JOIN entries x ON x.source_id = r.message_id AND x.message_type = 'semantic' "
            "WHERE r.memory_id = %s AND r.message_type = 'raw' GROUP BY r.message_id",
            [facts],
        ).fetchall()
        fact_rows = conn.execute(
            "SELECT count(*), count(DISTINCT content) FROM entries "
            "WHERE memory_id = %s AND message_type = 'semantic'",
            [facts],
        ).fetchone()
    assert len(jobs) == TURNS and len({j[4] for j in jobs}) == TURNS
    assert {(j[1], j[2]) for j in jobs} == {("done", "done")}
    assert killed, "the killed worker held no job"
    attempts = {j[0]: j[3] for j in jobs}
    assert all(attempts[k] >= 2 for k in killed), "the killed worker's job was not taken over"
    retried = {k for k, a in attempts.items() if a > 1}
    assert len(retried) <= len(killed) + 20, "leases expired on many jobs"
    assert all(n == 1 for _, n in per_turn) and len(per_turn) == TURNS
    assert fact_rows == (TURNS, TURNS)
    assert sorted(set(model.extractions)) == list(range(TURNS))
    assert len(model.extractions) <= TURNS + len(retried)


def check_budget(dsn: str, small: str, peaks: list[int]) -> None:
    """The small memory stayed within budget all along, and evicted with an audit event each."""
    with psycopg.connect(dsn) as conn:
        used, count = conn.execute(
            "SELECT used_bytes, entry_count FROM memories WHERE id = %s", [small]
        ).fetchone()  # type: ignore[misc]
        stored = conn.execute(
            "SELECT count(*), coalesce(sum(size_bytes), 0) FROM entries WHERE memory_id = %s",
            [small],
        ).fetchone()
        evictions = conn.execute(
            "SELECT count(*) FROM audit WHERE memory_id = %s AND action = 'entry.evict'", [small]
        ).fetchone()
    assert peaks and max(peaks) <= BUDGET and used <= BUDGET
    assert stored == (count, used)
    assert evictions is not None and evictions[0] == TURNS - count > 0
