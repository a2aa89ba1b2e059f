"""What the MCP tools call: one caller's acting surface, either the engine in this process bound
to an authenticated principal (:class:`~recallery.acting.Acting`, also known here as
:data:`EngineBackend`) or the SDK client of a running server (:class:`ClientBackend`, whose
key the server checks). Both have the SDK's operations under the same names and parameters
(``tests/api/test_acting_surface.py`` pins that), so every tool is written once against
them, and the few steps the tools share (the caller's memories, an entry with its history)
are written once here. Neither touches a store."""

from __future__ import annotations

from dataclasses import dataclass

from recallery.acting import Acting
from recallery.client import Client
from recallery.models import Entry, EntryType, Principal

#: The most memories a caller's list holds (the key's scope, its own and its teams').
MAX_MEMORIES = 1000
_PAGE = 100  # the REST list's largest page

#: The engine in this process acting for a principal (its name before :mod:`recallery.acting`).
EngineBackend = Acting


class ClientBackend(Client):
    """The SDK client of a running server, with who its key is (``principal``: what the
    server answered ``/users/me`` when the backend was made)."""

    def __init__(self, client: Client) -> None:
        vars(self).update(vars(client))  # the same server, key and connections
        self.principal: Principal = client.me()


#: What the tools act on, for one caller.
Backend = Acting | ClientBackend


@dataclass(frozen=True)
class MemoryRef:
    """A memory as the tools name it."""

    id: str
    name: str
    types: tuple[EntryType, ...]
    description: str | None


def memories(b: Backend, named: str | None = None) -> list[MemoryRef]:
    """Every memory the caller reaches, or for ``named`` the one with that id, else those
    whose name holds it (a query for it, not a listing of every memory the key reaches)."""
    found = _listed(b, None if named is None else [named], None)
    if named is not None and not found:
        found = _listed(b, None, named)
    return found


def _listed(b: Backend, ids: list[str] | None, keywords: str | None) -> list[MemoryRef]:
    found: list[MemoryRef] = []
    for number in range(1, MAX_MEMORIES // _PAGE + 1):
        page = b.list_memories(ids=ids, keywords=keywords, page=number, page_size=_PAGE)
        found += [MemoryRef(m.id, m.name, m.memory_types, m.description) for m in page.items]
        if len(found) >= page.total or not page.items:
            break
    return found


def entry_detail(
    b: Backend, memory_id: str, message_id: int
) -> tuple[Entry, list[Entry], list[int]]:
    """An entry, its versions and the turns it was extracted from."""
    entry, _ = b.get_entry(memory_id, message_id)
    return entry, b.history(memory_id, message_id), b.evidence(memory_id, message_id)


__all__ = [
    "MAX_MEMORIES",
    "Backend",
    "ClientBackend",
    "EngineBackend",
    "MemoryRef",
    "entry_detail",
    "memories",
]
