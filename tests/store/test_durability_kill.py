"""Kill -9 under load, restart, and nothing the server acknowledged is lost, changed or doubled.

``recallery serve`` (SQLite, worker on, the real local embedder) runs as a subprocess. Writer
threads post turns, each with a unique marker, to a raw-only memory, to a memory that also
extracts (so every turn enqueues a job in its write) and to both at once. The server is
SIGKILLed mid-load several times and restarted on the same data directory. Then, with the
server up: every acknowledged turn reads back byte-exact under the id it was given, and a
search finds it; no id was given to two turns; no turn, acknowledged or not, is stored twice;
every raw turn of the extracting memory has exactly one job; each memory's ``used_bytes`` and
``entry_count`` are the sums over its rows. Once the server is stopped, SQLite's integrity
check passes on the file. Writes cut off by a kill (no answer) may or may not be stored, but
at most once.
"""

from __future__ import annotations

import contextlib
import itertools
import random
import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from benchmarks.live_server import LiveServer, client, create_memory, data

from recallery.models import EntryType

pytestmark = [pytest.mark.slow, pytest.mark.model]

ADMIN_KEY = "rc-durability-admin-key"
WRITERS = 4
KILLS = 5
#: Acknowledged turns between restarts (and after the last one) before the next kill.
ACKS_PER_ROUND = 120
ROUND_TIMEOUT_S = 60.0
SAMPLE = 24
#: Text that must come back byte for byte: accents, CJK, an emoji, quotes, a tab, a backslash.
TAIL = 'naïve café, 東京 🙂 "quoted" \\ back\tslash'
MARKER = re.compile(r"dk\d+n\d{5}")


#: Each memory's stored turns: message id -> the turn as the message list shows it.
Stored = dict[str, dict[int, dict[str, Any]]]


@dataclass
class Ledger:
    """What the writers sent and what the server answered, shared by the writer threads."""

    acked: dict[str, tuple[str, dict[str, int]]] = field(default_factory=dict)
    unacked: list[str] = field(default_factory=list)
    owner: dict[int, str] = field(default_factory=dict)
    reused: list[tuple[int, str, str]] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def ack(self, marker: str, content: str, written: dict[str, int]) -> None:
        with self.changed:
            self.acked[marker] = (content, written)
            for mid in written.values():
                first = self.owner.setdefault(mid, marker)
                if first != marker:
                    self.reused.append((mid, first, marker))
            self.changed.notify_all()

    def wait_for(self, acks: int) -> None:
        with self.changed:
            if not self.changed.wait_for(
                lambda: len(self.acked) >= acks or bool(self.unexpected), ROUND_TIMEOUT_S
            ):
                pytest.fail(f"only {len(self.acked)} of {acks} turns acknowledged in time")
        assert not self.unexpected, self.unexpected


class Writers:
    """Writer threads posting turns while ``up`` is set; a write the server never answers
    (killed mid-request, or not listening yet) is recorded as unacknowledged."""

    def __init__(self, url: str, targets: list[list[str]], ledger: Ledger) -> None:
        self.url, self.targets, self.ledger = url, targets, ledger
        self.in_flight = 0
        self.up, self.done = threading.Event(), threading.Event()
        self.threads = [
            threading.Thread(target=self._write, args=(w,), name=f"writer-{w}", daemon=True)
            for w in range(WRITERS)
        ]

    def __enter__(self) -> Writers:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.up.set()
        for t in self.threads:
            t.join(60)

    def _write(self, writer: int) -> None:
        with client(self.url, ADMIN_KEY) as http:
            for seq in itertools.count(1):
                self.up.wait()
                if self.done.is_set():
                    return
                self._post(http, f"dk{writer}n{seq:05d}", self.targets[seq % len(self.targets)])

    def _post(self, http: httpx.Client, marker: str, memory_ids: list[str]) -> None:
        user_input = f"Turn {marker}: {TAIL}"
        body = {
            "memory_id": memory_ids,
            "agent_id": "durability",
            "session_id": marker[:3],
            "user_input": user_input,
            "agent_response": f"Noted {marker}.",
        }
        with self.ledger.changed:
            self.in_flight += 1
        try:
            response = http.post("/messages", json=body)
        except httpx.TransportError:
            with self.ledger.changed:
                self.ledger.unacked.append(marker)
            return
        finally:
            with self.ledger.changed:
                self.in_flight -= 1
        answer = response.json() if response.status_code == 200 else {"code": None}
        written = {e["memory_id"]: int(e["message_id"]) for e in answer.get("data") or ()}
        if answer["code"] != 0 or sorted(written) != sorted(memory_ids):
            with self.ledger.changed:
                self.ledger.unexpected.append(f"{marker}: {response.status_code} {response.text}")
                self.ledger.changed.notify_all()
            return
        content = f"User Input: {user_input}\nAgent Response: Noted {marker}."
        self.ledger.ack(marker, content, written)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    live = LiveServer(tmp_path / "data", ADMIN_KEY)
    with live:
        yield live


def pages(http: httpx.Client, path: str, key: str) -> list[dict[str, Any]]:
    """Every item of a paged route (``key``: the list in its answer), with the total checked."""
    items: list[dict[str, Any]] = []
    for page in range(1, 10_000):
        found = data(http.get(path, params={"page": page, "page_size": 100}))
        listed = found.get("messages", found)  # a memory's messages, or its jobs
        items.extend(listed[key])
        if len(items) >= listed["total_count"] or not listed[key]:
            assert len(items) == listed["total_count"], path
            return items
    raise AssertionError(f"{path}: too many pages")


def stored_turns(http: httpx.Client, memory_id: str) -> dict[int, dict[str, Any]]:
    """A memory's turns by message id, as its message list shows them."""
    rows = pages(http, f"/memories/{memory_id}", "message_list")
    assert {r["message_type"] for r in rows} <= {"raw"}
    by_id = {int(r["message_id"]): r for r in rows}
    assert len(by_id) == len(rows), "a message id listed twice"
    return by_id


def test_acknowledged_turns_survive_kill_and_restart(server: LiveServer) -> None:
    with client(server.url, ADMIN_KEY) as http:
        raw_only = create_memory(http, "durability raw", ["raw"])
        extracting = create_memory(http, "durability extracting", ["raw", "semantic"])
    ledger = Ledger()
    targets = [[raw_only], [extracting], [raw_only, extracting]]
    kill_points: list[int] = []
    in_flight: list[int] = []
    with Writers(server.url, targets, ledger) as writers:
        writers.up.set()
        for round_ in range(1, KILLS + 1):
            ledger.wait_for(round_ * ACKS_PER_ROUND)
            in_flight.append(writers.in_flight)
            server.kill()
            writers.up.clear()
            kill_points.append(len(ledger.acked))
            server.start()
            writers.up.set()
        ledger.wait_for((KILLS + 1) * ACKS_PER_ROUND)
    assert sum(in_flight) > 0, "no kill landed while a write was in flight"
    assert not ledger.unexpected, ledger.unexpected
    assert not ledger.reused, f"message ids given to two turns: {ledger.reused}"

    with client(server.url, ADMIN_KEY) as http:
        stored = {m: stored_turns(http, m) for m in (raw_only, extracting)}
        check_acknowledged(http, ledger, stored)
        check_nothing_doubled(ledger, stored)
        check_searchable(http, ledger, kill_points)
        check_one_job_per_turn(http, extracting, raw_only, stored[extracting])
        for memory_id, rows in stored.items():
            config = data(http.get(f"/memories/{memory_id}/config"))
            assert config["entry_count"] == len(rows)
            assert config["used_bytes"] == sum(r["size_bytes"] for r in rows.values())
    server.stop()
    check_file(server.db_path, stored)


def check_acknowledged(http: httpx.Client, ledger: Ledger, stored: Stored) -> None:
    """Every acknowledged turn is stored under the id it was given, byte for byte, in the
    memory's list (all of them) and on its content route (a sample)."""
    assert len(ledger.acked) >= (KILLS + 1) * ACKS_PER_ROUND
    for marker, (content, written) in ledger.acked.items():
        for memory_id, mid in written.items():
            listed = stored[memory_id].get(mid)
            assert listed is not None, f"acknowledged turn {marker} ({mid}) lost"
            assert listed["content"].encode("utf-8") == content.encode("utf-8"), marker
    for marker in random.Random(7).sample(sorted(ledger.acked), SAMPLE):
        content, written = ledger.acked[marker]
        for memory_id, mid in written.items():
            entry = data(http.get(f"/messages/{memory_id}:{mid}/content"))
            assert entry["content"].encode("utf-8") == content.encode("utf-8")


def check_nothing_doubled(ledger: Ledger, stored: Stored) -> None:
    """No marker, acknowledged or cut off, is stored twice in a memory; every stored turn is
    one the writers sent."""
    sent = set(ledger.acked) | set(ledger.unacked)
    for memory_id, rows in stored.items():
        markers = Counter(marker_of(r["content"]) for r in rows.values())
        assert set(markers) <= sent, set(markers) - sent
        doubled = {m: n for m, n in markers.items() if n > 1}
        assert not doubled, f"{memory_id}: stored more than once: {doubled}"
        acked_here = {m for m, (_, w) in ledger.acked.items() if memory_id in w}
        assert acked_here <= set(markers)


def marker_of(content: str) -> str:
    found = MARKER.search(content)
    assert found is not None, content
    return found.group()


def check_searchable(http: httpx.Client, ledger: Ledger, kill_points: list[int]) -> None:
    """A search for a turn's marker finds it: the last turns acknowledged before each kill
    (the ones a lost commit would take) and a sample of the rest."""
    order = list(ledger.acked)
    around_kills = {order[i - j] for i in kill_points for j in range(1, 4)}
    sample = around_kills | set(random.Random(11).sample(order, SAMPLE))
    for marker in sorted(sample):
        _, written = ledger.acked[marker]
        for memory_id, mid in written.items():
            hits = data(
                http.get("/messages/search", params={"query": marker, "memory_id": memory_id})
            )
            assert mid in [int(h["message_id"]) for h in hits], f"search missed {marker} ({mid})"


def check_one_job_per_turn(
    http: httpx.Client, extracting: str, raw_only: str, turns: dict[int, dict[str, Any]]
) -> None:
    jobs = pages(http, f"/memories/{extracting}/jobs", "jobs")
    per_turn = Counter(int(j["message_id"]) for j in jobs)
    assert set(per_turn) == set(turns), "jobs without their turn, or turns without a job"
    assert set(per_turn.values()) == {1}, {m: n for m, n in per_turn.items() if n > 1}
    assert {j["kind"] for j in jobs} == {"extraction"}
    assert pages(http, f"/memories/{raw_only}/jobs", "jobs") == []


def check_file(db: Path, stored: Stored) -> None:
    """The file passes SQLite's integrity check and holds exactly the rows the API listed."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        rows = conn.execute("SELECT memory_id, message_id FROM entries").fetchall()
    finally:
        conn.close()
    assert sorted(rows) == sorted((m, mid) for m, turns in stored.items() for mid in turns)


# --- a bulk change under kill -9 ------------------------------------------------------------

BULK_TURNS = 1500
BULK_ROUNDS = 4


def _seed_turns(db: Path, memory_id: str, count: int) -> None:
    """``count`` raw turns written straight into the store (random unit vectors: this test
    is about the rows a bulk change touches, not about search)."""
    import numpy as np

    from recallery.clock import SystemClock
    from recallery.models import NewEntry
    from recallery.store.sqlite import SQLiteStore

    store = SQLiteStore(db)
    try:
        with store.read() as r:
            memory = r.memory(memory_id)
        assert memory is not None
        now = SystemClock().now()
        vectors = np.random.default_rng(3).standard_normal((count, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        news = [
            NewEntry(
                memory_id=memory_id,
                tenant_id=memory.tenant_id,
                message_type=EntryType.RAW,
                content=f"bulk turn {i}",
                valid_at=now,
                size_bytes=len(f"bulk turn {i}") + 4 * 384,
            )
            for i in range(count)
        ]
        with store.write() as w:
            w.insert_entries(news, vectors, now)
    finally:
        store.close()


def _forgotten(http: httpx.Client, memory_id: str) -> int:
    found = data(http.get(f"/memories/{memory_id}", params={"forgotten": "true", "page_size": 1}))
    return int(found["messages"]["total_count"])


def test_a_bulk_change_is_all_or_nothing_under_kill(server: LiveServer) -> None:
    with client(server.url, ADMIN_KEY) as http:
        memory_id = create_memory(http, "durability bulk", ["raw"])
    _seed_turns(server.db_path, memory_id, BULK_TURNS)
    outcomes = []
    for round_ in range(BULK_ROUNDS):
        with client(server.url, ADMIN_KEY) as http:
            before = _forgotten(http, memory_id)
            action = "restore" if before else "forget"
            body = {"action": action, "filter": {}, "dry_run": False}
            path = f"/memories/{memory_id}/bulk"
            sender = threading.Thread(target=_quietly, args=(http, path, body), daemon=True)
            sender.start()
            threading.Event().wait(0.05 + 0.1 * round_)  # land the kill inside the change
            server.kill()
            sender.join(30)
        server.start()
        with client(server.url, ADMIN_KEY) as http:
            after = _forgotten(http, memory_id)
        assert after in (0, BULK_TURNS), f"round {round_}: {after} of {BULK_TURNS} forgotten"
        outcomes.append((action, after))
    with client(server.url, ADMIN_KEY) as http:
        config = data(http.get(f"/memories/{memory_id}/config"))
        rows = pages(http, f"/memories/{memory_id}", "message_list")
    assert config["entry_count"] == len(rows) == BULK_TURNS
    assert config["used_bytes"] == sum(r["size_bytes"] for r in rows)
    server.stop()
    conn = sqlite3.connect(f"file:{server.db_path}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()


def _quietly(http: httpx.Client, path: str, body: dict[str, Any]) -> None:
    """Post and ignore the answer (the server is killed under it)."""
    with contextlib.suppress(httpx.TransportError):
        http.post(path, json=body)
