"""The world the framework adapters' tests share: Alice owns two memories (``notes``, where the
adapter under test works, and ``diary``), Bob owns one; each holds text about Berlin, so a
leak across memories would show. Keys are made with any scope and capabilities, and the SDK
clients reach the app in process."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from recallery import AsyncClient, Client, Engine, Memory, Principal
from recallery.models import Entry

EMBD = "BAAI/bge-small-en-v1.5@Builtin"
LLM = "glm-4-flash@ZHIPU-AI"
DIARY_SECRET = "Berlin diary: the door code is 4711."
BOB_SECRET = "Bob lives in Berlin; his locker code is 8080."


@dataclass
class World:
    engine: Engine
    alice: Principal
    notes: Memory
    diary: Memory
    bobs: Memory
    bob: Principal
    sync: Callable[[str], Client]
    asyncs: Callable[[str], AsyncClient]

    def key(
        self,
        *,
        scope: Sequence[str] | None = None,
        capabilities: Sequence[str] | None = None,
        owner: Principal | None = None,
    ) -> str:
        """A new key of Alice's (or ``owner``'s)."""
        who = owner or self.alice
        _, key = self.engine.create_api_key(
            who, who.user_id, scope=scope, capabilities=capabilities
        )
        return key

    def client(self, key: str | None = None) -> Client:
        return self.sync(key or self.key())

    def async_client(self, key: str | None = None) -> AsyncClient:
        return self.asyncs(key or self.key())

    def turns(self, memory: Memory) -> list[Entry]:
        """The current raw turns of a memory, newest first, read by its owner's engine."""
        owner = self.engine.principal(memory.tenant_id)
        return list(self.engine.list_messages(owner, memory.id, page_size=100).items)

    def contents(self, memory: Memory) -> list[tuple[int, str]]:
        """What a memory holds: each current raw turn's id and text (use counts left out)."""
        return [(e.message_id, e.content) for e in self.turns(memory)]


def make_memory(engine: Engine, owner: Principal, name: str, types: Sequence[str]) -> Memory:
    return engine.create_memory(owner, name=name, memory_type=list(types), embd_id=EMBD, llm_id=LLM)
