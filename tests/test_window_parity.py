"""The PostgreSQL store's conversation windows, read around the keyword leg's matches, are the
windows SQLite's index keeps: for random conversations of long and short turns, with turns
erased, forgotten and disabled, every query finds the same windows in both stores (in a
memory this small every match is a seed), under the retrieval filter and under a session
filter."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from memstrata import Engine, Memory, Principal, TurnInput
from memstrata.models import Scope
from memstrata.providers.registry import ModelRegistry
from memstrata.store.base import Store
from memstrata.store.filters import EntryFilter
from memstrata.store.postgres import PostgresStore
from memstrata.store.sqlite import SQLiteStore
from memstrata.testing import DeterministicEmbedder, FrozenClock

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
