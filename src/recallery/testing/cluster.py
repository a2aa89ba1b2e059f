"""API servers and workers as separate processes on one PostgreSQL database, with the fake
extraction model they call and the checks of what they stored: for the multi-process test
and benchmark (tests/store/test_multiprocess_postgres.py,
benchmarks/scale/multiprocess_postgres.py).

Each memory's turns say "turn number N"; the model extracts one fact naming N, so every turn,
job and fact can be told apart afterwards. Nothing happens at import time.
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
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

from recallery.testing.fake_llm import FakeLLM, Reply
from recallery.testing.ports import free_port

EMBD = "BAAI/bge-small-en-v1.5@Builtin"
RECALLERY = Path(sys.executable).with_name("recallery")
START_TIMEOUT_S = 60
_TURN = re.compile(r"turn number (\d+)")


def turn_text(n: int) -> str:
    return f"This is turn number {n}: I counted my marbles again today."


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


class ClusterError(RuntimeError):
    """A server did not start or exited; the message carries its log."""


@dataclass
class Cluster:
    env: dict[str, str]
    logs: Path
    admin_key: str
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    urls: dict[str, str] = field(default_factory=dict)

    def start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = open(self.logs / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(
            [str(RECALLERY), *args], env=self.env, stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        self.procs[name] = proc
        return proc

    def serve(self, name: str) -> str:
        port = free_port()
        self.start(name, "serve", "--no-worker", "--port", str(port), "--log-level", "warning")
        url = f"http://127.0.0.1:{port}/api/v1"
        self._wait_until_serving(url, name)
        self.urls[name] = url
        return url

    def kill(self, name: str) -> None:
        """SIGKILL: no shutdown, no flush, as a crash or an OOM kill."""
        proc = self.procs[name]
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        self.urls.pop(name, None)

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin_key}"}

    def create_memory(self, name: str, **fields: Any) -> str:
        body = {"name": name, "embd_id": EMBD, "llm_id": "fake-model@fake", **fields}
        url = next(iter(self.urls.values()))
        response = httpx.post(f"{url}/memories", json=body, headers=self.headers(), timeout=30)
        if response.status_code != 200:
            raise ClusterError(f"creating memory {name}: {response.text}")
        memory_id: str = response.json()["data"]["id"]
        return memory_id

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

    def _wait_until_serving(self, url: str, name: str) -> None:
        proc, log = self.procs[name], self.logs / f"{name}.log"
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise ClusterError(f"{name} exited ({proc.returncode}):\n{log.read_text()}")
            try:
                response = httpx.get(f"{url}/memories", headers=self.headers(), timeout=2)
                if response.status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise ClusterError(f"{name} not ready after {START_TIMEOUT_S}s:\n{log.read_text()}")


@contextmanager
def cluster(dsn: str, llm: FakeLLM, logs: Path, lease_s: int = 3) -> Iterator[Cluster]:
    """An environment for servers and workers on ``dsn``, all stopped on exit."""
    admin_key = "mp-admin-" + uuid.uuid4().hex
    env = {
        **os.environ,
        "RECALLERY_DATABASE_URL": dsn,
        "RECALLERY_DATA_DIR": str(logs / "unused-data-dir"),
        "RECALLERY_ADMIN_API_KEY": admin_key,
        "RECALLERY_PROVIDER_FAKE_BASE_URL": llm.url,
        "RECALLERY_PROVIDER_FAKE_API_KEY": "test-key",
        "RECALLERY_JOB_LEASE_S": str(lease_s),
        "RECALLERY_DATABASE_POOL_SIZE": "8",
    }
    logs.mkdir(parents=True, exist_ok=True)
    c = Cluster(env, logs, admin_key)
    try:
        yield c
    finally:
        c.stop()


# --- what must hold afterwards ------------------------------------------------------------------


def stored_turns(dsn: str, memory_id: str) -> list[int]:
    """The turn numbers of a memory's raw entries, once per stored entry."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT content FROM entries WHERE memory_id = %s AND message_type = 'raw'",
            [memory_id],
        ).fetchall()
    return [int(m.group(1)) for (content,) in rows if (m := _TURN.search(content))]


def wait_for_jobs(dsn: str, memory_id: str, timeout_s: float) -> None:
    """Until every job of the memory is finished (done, failed or parked)."""
    deadline = time.monotonic() + timeout_s
    with psycopg.connect(dsn, autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT count(*) FILTER (WHERE state NOT IN ('done', 'failed', 'parked')) "
                "FROM jobs WHERE memory_id = %s",
                [memory_id],
            ).fetchone()
            if row is not None and row[0] == 0:
                return
            time.sleep(0.5)
    raise ClusterError(f"jobs of {memory_id} not finished after {timeout_s}s")


def job_problems(dsn: str, memory_id: str, model: Model) -> list[str]:
    """What is wrong with the memory's jobs: each raw turn has one job, done, and one fact."""
    with psycopg.connect(dsn) as conn:
        jobs = conn.execute(
            "SELECT message_id, state, outcome FROM jobs WHERE memory_id = %s", [memory_id]
        ).fetchall()
        facts = conn.execute(
            "SELECT r.message_id, count(x.message_id) FROM entries r "
            "LEFT JOIN entries x ON x.source_id = r.message_id AND x.message_type = 'semantic' "
            "WHERE r.memory_id = %s AND r.message_type = 'raw' GROUP BY r.message_id",
            [memory_id],
        ).fetchall()
    problems = []
    if len({j[0] for j in jobs}) != len(jobs) or len(jobs) != len(facts):
        problems.append(f"{len(jobs)} jobs for {len(facts)} turns")
    if {(j[1], j[2]) for j in jobs} - {("done", "done")}:
        problems.append(f"job states {sorted({(j[1], j[2]) for j in jobs})}")
    if any(n != 1 for _, n in facts):
        problems.append("a turn without exactly one fact")
    return problems


def budget_problems(dsn: str, memory_id: str, budget: int, peaks: list[int]) -> list[str]:
    """The memory stayed within its budget, its accounting equals its rows, and every
    eviction was audited."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT used_bytes, entry_count FROM memories WHERE id = %s", [memory_id]
        ).fetchone()
        stored = conn.execute(
            "SELECT count(*), coalesce(sum(size_bytes), 0) FROM entries WHERE memory_id = %s",
            [memory_id],
        ).fetchone()
    assert row is not None and stored is not None
    used, count = row
    problems = []
    if max(peaks, default=0) > budget or used > budget:
        problems.append(f"over budget: peak {max(peaks, default=0)}, now {used} > {budget}")
    if tuple(stored) != (count, used):
        problems.append(f"accounting {(count, used)} != rows {tuple(stored)}")
    return problems


def watch_budget(dsn: str, memory_id: str, stop: threading.Event, peaks: list[int]) -> None:
    """Sample the memory's used bytes every 50 ms until ``stop``."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        while not stop.is_set():
            row = conn.execute("SELECT used_bytes FROM memories WHERE id = %s", [memory_id])
            found = row.fetchone()
            if found is not None:
                peaks.append(int(found[0]))
            stop.wait(0.05)
