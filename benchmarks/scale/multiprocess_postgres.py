"""Requests/s of one and of two API servers on one PostgreSQL database, two workers
extracting, and one server killed with SIGKILL mid-load.

Client threads send turns (POST /messages into two memories: one extracting a fact from every
turn through a fake OpenAI-compatible model, one with a 300 kB budget that evicts) and
searches (GET /messages/search) in turn, for a fixed time, spread over the live servers.
Afterwards: every acknowledged turn is stored once (a turn in flight at the kill at most
once), every stored turn's extraction job ran once and left one fact, and the small memory's
accounting equals its rows and never passed its budget.

    python -m benchmarks.scale.multiprocess_postgres --seconds 30 --threads 8

Results in benchmarks/results/multiprocess_postgres.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks.support import RESULTS, load_average, quantile_ms
from recallery.testing import FakeLLM
from recallery.testing.cluster import (
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

RESULT = RESULTS / "multiprocess_postgres.json"
BUDGET = 300_000
FACTS_BUDGET = 10 * 1024 * 1024


@dataclass
class Load:
    """What the client threads saw."""

    acknowledged: set[int] = field(default_factory=set)
    unanswered: set[int] = field(default_factory=set)
    write_s: list[float] = field(default_factory=list)
    search_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def client_loop(
    c: Cluster, memories: list[str], load: Load, numbers: Iterator[int], until: float, index: int
) -> None:
    """Alternate a turn and a search until ``until``, on the live servers in turn."""
    with httpx.Client(headers=c.headers(), timeout=120) as client:
        for step in itertools.count(index):
            if time.monotonic() >= until:
                return
            urls = list(c.urls.values())
            url = urls[(step // 2) % len(urls)]  # each server gets turns and searches alike
            if step % 2 == 0:
                write(client, url, memories, load, next(numbers))
            else:
                search(client, url, memories[0], load)


def write(client: httpx.Client, url: str, memories: list[str], load: Load, n: int) -> None:
    body = {
        "memory_id": memories,
        "agent_id": "agent-1",
        "session_id": f"session-{n % 17}",
        "user_input": turn_text(n),
        "agent_response": "Noted.",
    }
    t = time.perf_counter()
    try:
        response = client.post(f"{url}/messages", json=body)
    except httpx.TransportError:
        with load.lock:
            load.unanswered.add(n)  # its server died: maybe stored, never acknowledged
        return
    with load.lock:
        if response.status_code == 200:
            load.acknowledged.add(n)
            load.write_s.append(time.perf_counter() - t)
        else:
            load.errors.append(response.text[:200])


def search(client: httpx.Client, url: str, memory_id: str, load: Load) -> None:
    t = time.perf_counter()
    try:
        response = client.get(
            f"{url}/messages/search", params={"query": "marbles jar", "memory_id": memory_id}
        )
    except httpx.TransportError:
        return
    with load.lock:
        if response.status_code == 200:
            load.search_s.append(time.perf_counter() - t)
        else:
            load.errors.append(response.text[:200])


def run_phase(
    admin: Any, servers: int, seconds: float, threads: int, kill: bool, logs: Path
) -> dict[str, Any]:
    dsn = admin.create_database(f"mp_{servers}_{int(kill)}_{uuid.uuid4().hex[:6]}")
    model = Model()
    load = Load()
    with FakeLLM(model) as llm, cluster(dsn, llm, logs / f"{servers}-{int(kill)}") as c:
        for n in range(1, servers + 1):
            c.serve(f"serve-{n}")
        facts = c.create_memory("facts", memory_type=["raw", "semantic"], memory_size=FACTS_BUDGET)
        small = c.create_memory("small", memory_type=["raw"], memory_size=BUDGET)
        c.start("worker-1", "worker")
        c.start("worker-2", "worker")
        stop, peaks = threading.Event(), []
        watcher = threading.Thread(target=watch_budget, args=(dsn, small, stop, peaks))
        watcher.start()
        numbers = itertools.count()
        started = time.monotonic()
        until = started + seconds
        clients = [
            threading.Thread(target=client_loop, args=(c, [facts, small], load, numbers, until, i))
            for i in range(threads)
        ]
        for t in clients:
            t.start()
        if kill:
            time.sleep(seconds / 2)
            c.kill(f"serve-{servers}")
        for t in clients:
            t.join()
        elapsed = time.monotonic() - started
        wait_for_jobs(dsn, facts, 900)
        drained = time.monotonic() - started
        stop.set()
        watcher.join()
    stored = stored_turns(dsn, facts)
    problems = job_problems(dsn, facts, model) + budget_problems(dsn, small, BUDGET, peaks)
    if len(stored) != len(set(stored)):
        problems.append("a turn stored twice")
    if not load.acknowledged <= set(stored):
        problems.append(f"{len(load.acknowledged - set(stored))} acknowledged turns lost")
    if not set(stored) <= load.acknowledged | load.unanswered:
        problems.append("a turn stored that was never sent")
    requests = len(load.write_s) + len(load.search_s)
    return {
        "servers": servers,
        "server_killed_midway": kill,
        "seconds": elapsed,
        "requests_per_s": requests / elapsed,
        "turns_per_s": len(load.write_s) / elapsed,
        "searches_per_s": len(load.search_s) / elapsed,
        "write_ms": p50_p95(load.write_s),
        "search_ms": p50_p95(load.search_s),
        "acknowledged_turns": len(load.acknowledged),
        "unanswered_at_kill": len(load.unanswered),
        "unanswered_stored": len(load.unanswered & set(stored)),
        "jobs_drained_after_s": drained,
        "errors": load.errors[:5],
        "problems": problems,
        "load_average": load_average(),
    }


def p50_p95(seconds: Sequence[float]) -> dict[str, float | None]:
    if not seconds:
        return {}
    return {
        "p50": quantile_ms(seconds, 0.5, digits=None),
        "p95": quantile_ms(seconds, 0.95, digits=None),
    }


@contextmanager
def embedded() -> Iterator[Any]:
    from recallery.testing.postgres import EmbeddedPostgres

    with EmbeddedPostgres() as pg:
        yield pg


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args(argv)
    phases = []
    with tempfile.TemporaryDirectory(prefix="recallery-mp-") as tmp, embedded() as pg:
        for servers, kill in ((1, False), (2, False), (2, True)):
            phase = run_phase(pg, servers, args.seconds, args.threads, kill, Path(tmp))
            print(json.dumps(phase), flush=True)
            phases.append(phase)
    args.out.write_text(json.dumps({"phases": phases}, indent=2) + "\n")
    return 0 if all(not p["problems"] for p in phases) else 1


if __name__ == "__main__":
    raise SystemExit(main())
