"""How fast the web UI's Messages, Facts and People pages render for a large memory, on the
server.

A memory on the embedded SQLite store is filled with ``--entries`` entries through the engine:
half raw turns (``add_messages`` in batches, so each has its extraction job), half one
extracted entry per turn written as the extraction worker writes them. Some turns are
disabled, forgotten and confirmed, so the rows show every badge. The deterministic test
embedder with 8 dimensions keeps the vectors small (a memory's budget is at most 10 MiB) and the
fill fast: the page never embeds anything.

Then the ASGI app runs in process (no network): a session logs in through the login form and
each page is requested ``--repeat`` times: the Messages page (first page, a page deep in the
list, filtered by user), the Facts page (first page, filtered by user and trust, by a text
that 1,111 facts hold and by one that 11,111 hold), a user's page (a quarter of the
entries are theirs) and the People listing of users (4) and of sessions (2,500 at 100,000
entries: each a group of the one grouped query). p50 and p95 are printed, with whether p95
is under the budget, and with ``--out`` written as JSON with the machine's load averages.

Usage::

    python -m benchmarks.speed.web_messages                 # 100,000 entries, 30 requests each
    python -m benchmarks.speed.web_messages --entries 2000 --repeat 5
    python -m benchmarks.speed.web_messages --out benchmarks/results/web-pages-100k.json
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from fastapi.testclient import TestClient

from benchmarks.support import load_average, write_json
from recallery import Engine, Memory, Principal, TurnInput
from recallery.api import create_app
from recallery.models import EntryType, NewEntry, Origin
from recallery.providers.registry import ModelRegistry
from recallery.store.sqlite import SQLiteStore
from recallery.testing import DeterministicEmbedder

BUDGET_MS = 300.0
BATCH = 2000
DIMENSION = 8
USERS = ("u-ana", "u-ben", "u-cho", "u-dan")


@dataclass(frozen=True)
class Timing:
    name: str
    p50_ms: float
    p95_ms: float
    rows: int

    def line(self) -> str:
        verdict = "ok" if self.p95_ms < BUDGET_MS else "OVER"
        return (
            f"{self.name:<22} p50 {self.p50_ms:7.1f} ms   p95 {self.p95_ms:7.1f} ms   "
            f"rows {self.rows:3d}   {verdict} (budget {BUDGET_MS:.0f} ms)"
        )


@contextmanager
def filled(entries: int, data_dir: Path) -> Iterator[tuple[Engine, Principal, Memory, str]]:
    """An engine over a memory holding ``entries`` entries, its owner and a key."""
    embedder = DeterministicEmbedder(dimension=DIMENSION)
    engine = Engine(
        SQLiteStore(data_dir / "recallery.db"), models=ModelRegistry(builtin=lambda: embedder)
    )
    try:
        admin, key = engine.ensure_admin()
        assert key is not None
        owner = engine.principal(admin.id)
        memory = engine.create_memory(
            owner,
            name="large",
            memory_type=["raw", "semantic"],
            embd_id="deterministic@Builtin",
            llm_id="fake-model@fake",
            memory_size=10 * 1024 * 1024,
        )
        turns = entries // 2
        for start in range(0, turns, BATCH):
            batch = [
                TurnInput(
                    f"User Input: note {i} about the trip\nAgent Response: ok",
                    user_id=USERS[i % len(USERS)],
                    agent_id="helper",
                    session_id=f"s-{i // 20}",
                )
                for i in range(start, min(start + BATCH, turns))
            ]
            written = engine.add_messages(owner, [memory.id], batch)
            _extract(engine, [(e.message_id, e.user_id) for e in written], memory)
        _vary(engine, owner, memory)
        yield engine, owner, engine.get_memory(owner, memory.id), key
    finally:
        engine.close()


def _extract(engine: Engine, raw_ids: list[tuple[int, str]], memory: Memory) -> None:
    """One semantic entry per turn (its user's), written as the extraction worker writes it."""
    vectors = np.zeros((len(raw_ids), DIMENSION), dtype=np.float32)
    vectors[:, 0] = 1.0
    new = [
        NewEntry(
            memory_id=memory.id,
            tenant_id=memory.tenant_id,
            message_type=EntryType.SEMANTIC,
            content=f"fact {i}",
            valid_at=engine.clock.now(),
            size_bytes=len(f"fact {i}") + 4 * DIMENSION,
            source_id=i,
            user_id=user,
            origin=Origin.EXTRACTION,
        )
        for i, user in raw_ids
    ]
    with engine.store.write() as w:
        w.insert_entries(new, vectors, engine.clock.now())


def _vary(engine: Engine, owner: Principal, memory: Memory) -> None:
    """Recent turns disabled, forgotten and confirmed, so the first page shows each state."""
    newest = engine.list_messages(owner, memory.id, page_size=30).items
    for n, e in enumerate(newest):
        if n % 5 == 1:
            engine.set_status(owner, memory.id, e.message_id, False)
        elif n % 5 == 2:
            engine.forget(owner, memory.id, e.message_id)
        elif n % 5 == 3:
            engine.review(owner, memory.id, e.message_id, "confirmed")


def _log_in(client: TestClient, key: str) -> None:
    page = client.get("/login")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert token is not None
    answer = client.post("/login", data={"csrf": token.group(1), "key": key})
    assert answer.status_code == 303, answer.text


def time_page(
    client: TestClient, name: str, url: str, repeat: int, row: str = '<tbody id="turn-'
) -> Timing:
    client.get(url)  # warm: templates compiled, caches filled
    took: list[float] = []
    rows = 0
    for _ in range(repeat):
        start = time.perf_counter()
        answer = client.get(url)
        took.append((time.perf_counter() - start) * 1000)
        assert answer.status_code == 200, answer.text[:500]
        rows = answer.text.count(row)
    took.sort()
    p95 = took[min(len(took) - 1, round(0.95 * (len(took) - 1)))]
    return Timing(name, statistics.median(took), p95, rows)


def run(entries: int, repeat: int, data_dir: Path) -> list[Timing]:
    with filled(entries, data_dir) as (engine, _, memory, key):
        print(f"memory {memory.id}: {memory.entry_count} entries, {memory.used_bytes} bytes")
        with TestClient(create_app(engine), follow_redirects=False) as client:
            _log_in(client, key)
            base = f"/memories/{memory.id}/messages"
            facts = f"/memories/{memory.id}/facts"
            deep = max(1, memory.entry_count // 2 // 50 // 2)
            fact = '<tr id="fact-'
            return [
                time_page(client, "first page (50 rows)", base, repeat),
                time_page(client, f"page {deep}", f"{base}?page={deep}", repeat),
                time_page(client, "filtered by user", f"{base}?user=u-ben&forgotten=no", repeat),
                time_page(client, "facts, first page", facts, repeat, fact),
                time_page(
                    client,
                    "facts, user and trust",
                    f"{facts}?user=u-ben&trust=unreviewed",
                    repeat,
                    fact,
                ),
                time_page(client, "facts, text", f"{facts}?text=fact+12", repeat, fact),
                time_page(client, "facts, common text", f"{facts}?text=fact+1", repeat, fact),
                time_page(client, "person page (a user)", "/people/user?id=u-ben", repeat, "<li"),
                time_page(client, "people, users", "/people", repeat, '<tr data-id="'),
                time_page(
                    client, "people, sessions", "/people?kind=session", repeat, '<tr data-id="'
                ),
            ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None, help="write the timings as JSON here")
    args = parser.parse_args(argv)
    started, load = time.perf_counter(), load_average()
    with tempfile.TemporaryDirectory() as tmp:
        timings = run(args.entries, args.repeat, args.data_dir or Path(tmp))
    for t in timings:
        print(t.line())
    print(f"total {time.perf_counter() - started:.0f} s, load average {load} -> {load_average()}")
    if args.out is not None:
        report = {"entries": args.entries, "repeat": args.repeat, "budget_ms": BUDGET_MS}
        report |= {"loadavg_start": load, "loadavg_end": load_average(), "cpus": os.cpu_count()}
        write_json(args.out, report | {"pages": [asdict(t) for t in timings]})
    return 0 if all(t.p95_ms < BUDGET_MS for t in timings) else 1


if __name__ == "__main__":
    sys.exit(main())
