"""Helpers shared by the extraction tests: an engine whose chat provider is the fake LLM
server, turns, jobs, and the replies the fake gives (their fixtures live in
tests/extraction/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from recallery import Engine, Entry, Job, Memory, Principal
from recallery.jobs import WorkerConfig
from recallery.models import EntryType, Scope
from recallery.providers.chat import OpenAIChatModel
from recallery.providers.registry import ModelRegistry
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.testing import DeterministicEmbedder, FakeLLM, FrozenClock

ALL_TYPES = ("raw", "semantic", "episodic", "procedural")
LLM_ID = "fake-model@fake"
CONFIG = WorkerConfig(lease_s=60, max_attempts=3, backoff_s=10, backoff_max_s=300)


def build_engine(
    store: Store,
    embedder: DeterministicEmbedder,
    clock: FrozenClock,
    llm: FakeLLM,
    timeout: float = 5.0,
) -> Engine:
    """An engine whose ``@fake`` provider is the fake server, with a client ``timeout``."""
    models = ModelRegistry(
        {"fake": llm.provider()},
        builtin=lambda: embedder,
        chat=lambda name, cfg: OpenAIChatModel(name, cfg, timeout=timeout),
    )
    return Engine(store, models=models, clock=clock)


def make_memory(
    engine: Engine,
    actor: Principal,
    types: Sequence[str] = ALL_TYPES,
    llm_id: str = LLM_ID,
    **options: object,
) -> Memory:
    return engine.create_memory(
        actor,
        name="agent memory",
        memory_type=list(types),
        embd_id="minilm@Builtin",
        llm_id=llm_id,
        **options,
    )


def say(engine: Engine, actor: Principal, memory: Memory, text: str, **kw: object) -> Entry:
    """Write one turn (the user says ``text``) and return its raw entry."""
    (raw,) = engine.add_turn(actor, [memory.id], user_input=text, agent_response="Noted.", **kw)
    return raw


def job_of(engine: Engine, raw: Entry) -> Job:
    with engine.store.read() as r:
        return r.jobs_for_messages([raw.message_id])[raw.message_id]


def extracted(engine: Engine, memory: Memory, *, current_only: bool = True) -> list[Entry]:
    """Extracted entries of ``memory`` (every type but raw), oldest first."""
    with engine.store.read() as r:
        found, _ = r.entries(
            Scope(frozenset({memory.id})),
            EntryFilter(types=frozenset(EntryType.extracted()), current_only=current_only),
            limit=1000,
        )
    return sorted(found, key=lambda e: e.message_id)


def facts(
    semantic: Sequence[str] = (), episodic: Sequence[str] = (), procedural: Sequence[str] = ()
) -> dict[str, object]:
    """An extraction reply whose items hold at the conversation time (valid_at null)."""

    def items(texts: Sequence[str]) -> list[dict[str, object]]:
        return [{"content": t, "valid_at": None, "invalid_at": None} for t in texts]

    return {
        "semantic": items(semantic),
        "episodic": items(episodic),
        "procedural": items(procedural),
    }


def judgement(action: str, entry: int | None = None) -> dict[str, object]:
    """A consolidation reply."""
    return {"action": action, "entry": entry}


#: How a consolidation prompt opens (what tells it from an extraction prompt).
JUDGING = "You keep a memory of statements"


def scripted(
    fact_of: Mapping[str, str], judge: Callable[[str], dict[str, object]]
) -> Callable[[dict[str, Any]], object]:
    """The chat model of a scenario: for an extraction prompt, the fact of the turn it quotes
    (``fact_of``: what was said, to its fact); for a judgement, ``judge`` of the new
    candidate's line."""

    def reply(body: dict[str, Any]) -> object:
        user = body["messages"][-1]["content"]
        if body["messages"][0]["content"].startswith(JUDGING):
            return judge(user.split("New candidate", 1)[1].split("\n", 1)[0])
        said = next(s for s in fact_of if s in user)
        return facts(semantic=[fact_of[said]])

    return reply


@contextmanager
def replying(
    reply: Callable[[dict[str, Any]], object],
    store: Store,
    embedder: DeterministicEmbedder,
    clock: FrozenClock,
) -> Iterator[Engine]:
    """An engine whose chat model answers with ``reply``, its use recorder closed after."""
    with FakeLLM(reply) as llm:
        engine = build_engine(store, embedder, clock, llm)
        yield engine
        engine.usage.close()
