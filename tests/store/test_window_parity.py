"""The PostgreSQL store's conversation windows, read around the keyword leg's matches, are the
windows SQLite's index keeps: for random conversations of long and short turns, with turns
erased, forgotten and disabled, every query finds the same windows in both stores (in a
memory this small every match is a seed), under the retrieval filter and under a session
filter; and each window read around its seeds holds what the same window built from the
whole conversation holds (words, length, turns)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from recallery import Engine, Memory, Principal, TurnInput
from recallery.models import Scope
from recallery.providers.registry import ModelRegistry
from recallery.store.base import Store
from recallery.store.filters import EntryFilter, where_clause
from recallery.store.postgres import PostgresStore
from recallery.store.postgres.windows import Window, windows_around
from recallery.store.sqlite import SQLiteStore
from recallery.store.windowing import REACH, SPAN, WINDOW_TOKENS
from recallery.testing import DeterministicEmbedder, FrozenClock

pytestmark = pytest.mark.postgres

WORDS = ["tea", "harbour", "violin", "garden", "rain", "lamp", "river", "cello", "bread", "kite"]
FILL = ["and", "the", "then", "we", "it", "was", "very", "so"]


def _said(rng: random.Random) -> str:
    """A short message (one to four words) or, one time in four, a long turn."""
    size = rng.randint(20, 45) if rng.random() < 0.25 else rng.randint(1, 4)
    return " ".join(rng.choice(WORDS if rng.random() < 0.3 else FILL) for _ in range(size))


class _Side:
    """One store with a memory, written and changed as the other."""

    def __init__(self, store: Store, clock: FrozenClock) -> None:
        embedder = DeterministicEmbedder()
        self.engine = Engine(store, models=ModelRegistry(builtin=lambda: embedder), clock=clock)
        self.actor: Principal = self.engine.principal(self.engine.create_user("alice").id)
        self.memory: Memory = self.engine.create_memory(
            self.actor,
            name="notes",
            memory_type=["raw"],
            embd_id="BAAI/bge-small-en-v1.5@Builtin",
            llm_id="glm-4-flash@ZHIPU-AI",
        )
        self.ids: list[int] = []

    def say(self, text: str, session: str) -> None:
        (entry,) = self.engine.add_messages(
            self.actor, [self.memory.id], [TurnInput(text, session_id=session)]
        )
        self.ids.append(int(entry.message_id))

    def change(self, n: int, how: str) -> None:
        turn = self.ids[n]
        if how == "erase":
            self.engine.erase(self.actor, self.memory.id, turn)
        elif how == "forget":
            self.engine.forget(self.actor, self.memory.id, turn)
        else:
            self.engine.set_status(self.actor, self.memory.id, turn, False)

    def windows(self, query: str, f: EntryFilter) -> set[int]:
        """The windows found, as places in the order written (ids differ between stores)."""
        with self.engine.store.read() as r:
            found = r.window_candidates(Scope.of(self.memory.id), query, f, 1000)
        return {self.ids.index(i) for i, _ in found}


@pytest.fixture
def sides(
    sqlite_store: SQLiteStore, postgres_store: PostgresStore
) -> Iterator[tuple[_Side, _Side]]:
    clock = FrozenClock()
    pair = (_Side(sqlite_store, clock), _Side(postgres_store, clock))
    yield pair
    for side in pair:
        side.engine.usage.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_postgres_finds_the_windows_sqlite_keeps(sides: tuple[_Side, _Side], seed: int) -> None:
    rng = random.Random(seed)
    turns = [(_said(rng), f"s{rng.randint(1, 2)}") for _ in range(36)]
    changes = [(n, rng.choice(["erase", "forget", "disable"])) for n in rng.sample(range(36), 6)]
    for side in sides:
        for text, session in turns:
            side.say(text, session)
        for n, how in changes:
            side.change(n, how)
    clock = sides[0].engine.clock
    filters = [EntryFilter.retrieval(valid_on=clock.now()), EntryFilter(session_id="s1")]
    for query in [*WORDS, "tea rain", "violin cello kite"]:
        for f in filters:
            sqlite, postgres = (side.windows(query, f) for side in sides)
            assert postgres == sqlite, (query, f)
    pg = sides[1]
    for f in filters:
        with pg.engine.store.read() as r:
            for words in (["tea"], ["rain", "kite"], ["violin", "cello", "bread"]):
                whole, seeds = _whole_conversations(r.conn, pg.memory.id, f, words)
                read, _ = windows_around(r.conn, Scope.of(pg.memory.id), f, words, seeds)
                assert read == {i: w for i, w in whole.items() if i in read}
                assert set(read) == {i for i, w in whole.items() if w.tf}


def _whole_conversations(
    conn: object, memory_id: str, f: EntryFilter, words: list[str]
) -> tuple[dict[int, Window], list[int]]:
    """Every visible raw turn's window, from its whole conversation read in order, and the
    visible turns that hold one of ``words`` (each word in this test is its own lexeme)."""
    where, params = where_clause(Scope.of(memory_id), f)
    rows = conn.execute(  # type: ignore[attr-defined]
        f"SELECT e.message_id, e.session_id, e.fts_len, ({where}), "
        "ARRAY(SELECT u.lexeme || ':' || cardinality(u.positions) FROM unnest(e.fts) u) "
        "FROM entries e WHERE e.memory_id = ? AND e.message_type = 'raw' "
        "ORDER BY e.session_id, e.valid_at, e.message_id",
        [*params, memory_id],
    )
    out: dict[int, Window] = {}
    matches: list[int] = []
    earlier: dict[str, list[tuple[int, bool, dict[str, int]]]] = {}
    for message_id, session, length, passes, counted in rows:
        pairs = (c.rsplit(":", 1) for c in counted)
        tf = {w: int(n) for w, n in pairs if w in words}
        turns = earlier.setdefault(session, [])
        before = turns[::-1]
        back = _back(length, [t[0] for t in before])
        if passes and tf:
            matches.append(message_id)
        if passes:
            members = [(length, True, tf), *before[:back]]
            shown = [m for m in members if m[1]]
            held: dict[str, int] = {}
            for _, _, counts in shown:
                for w, n in counts.items():
                    held[w] = held.get(w, 0) + n
            out[message_id] = Window(held, sum(m[0] for m in shown), back + 1)
        turns.append((length, bool(passes), tf))
    return out, matches


def _back(own: int, before: list[int]) -> int:
    """How many of the turns ``before`` a turn (nearest first) its window holds: at least
    SPAN, more while it holds fewer than WINDOW_TOKENS words, at most REACH."""
    back, words = 0, own
    while back < min(REACH, len(before)) and (back < SPAN or words < WINDOW_TOKENS):
        words += before[back]
        back += 1
    return back
