"""What the MCP tools call: one caller's view of recallery, either an engine in this process
acting for an authenticated principal (:class:`EngineBackend`) or the SDK client of a running
server (:class:`ClientBackend`, whose key the server checks). Both go through the engine's
checks; neither touches a store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from recallery.client import Client
from recallery.engine import Engine
from recallery.models import Entry, EntryType, EraseReceipt, Hit, Job, Principal
from recallery.requests import AddedEntries, Context, EntryInput, SearchRequest, search_knobs
from recallery.subjects import SubjectAction, SubjectReceipt

#: The most memories a caller's list holds (the key's scope, its own and its teams').
MAX_MEMORIES = 1000
_PAGE = 100  # the REST list's largest page


@dataclass(frozen=True)
class MemoryRef:
    """A memory as the tools name it."""

    id: str
    name: str
    types: tuple[EntryType, ...]
    description: str | None


@dataclass(frozen=True)
class Turn:
    memory_id: str
    user_input: str
    agent_response: str
    user_id: str = ""
    agent_id: str = ""
    session_id: str = ""
    conversation_time: datetime | None = None


class Backend(Protocol):
    """The operations the tools use, for one caller."""

    @property
    def principal(self) -> Principal: ...

    def memories(self, named: str | None = None) -> list[MemoryRef]:
        """The caller's memories; with ``named``, at least those whose id or name it is."""
        ...

    def add_turn(self, turn: Turn) -> Entry: ...

    def add_entries(
        self,
        memory_id: str,
        entries: Sequence[EntryInput],
        ids: dict[str, str],
        source_id: int | None,
    ) -> AddedEntries: ...

    def search(self, request: SearchRequest) -> list[Hit]: ...

    def context(self, request: SearchRequest, max_tokens: int) -> Context: ...

    def entry(self, memory_id: str, message_id: int) -> tuple[Entry, list[Entry], list[int]]: ...

    def correct(self, memory_id: str, message_id: int, content: str, reason: str) -> Entry: ...

    def forget(self, memory_id: str, message_id: int) -> list[int]: ...

    def restore(self, memory_id: str, message_id: int) -> list[int]: ...

    def erase(self, memory_id: str, message_id: int, reason: str) -> EraseReceipt: ...

    def task_status(self, memory_id: str, message_id: int) -> Job | None: ...

    def subject(
        self,
        action: SubjectAction,
        user_id: str,
        dry_run: bool,
        reason: str,
        token: str | None = None,
    ) -> SubjectReceipt: ...


class EngineBackend:
    """An engine in this process, acting for ``principal``: the caller is resolved again at
    every call (``key`` checked, teams read), as ``/mcp`` checks its key per request."""

    def __init__(self, engine: Engine, principal: Principal, *, key: str | None = None) -> None:
        self.engine = engine
        self._given = principal
        self._key = key

    @property
    def principal(self) -> Principal:
        """The caller as the store says it is now: with a key, the key is checked again (a
        revoked one stops working at the next call); without one, the user's teams are read
        again (a user removed from a team loses its memories at the next call); the scope and
        capabilities stay those given."""
        if self._key is not None:
            return self.engine.authenticate(self._key)
        given = self._given
        return self.engine.principal(given.user_id, given.scope, given.capabilities)

    def memories(self, named: str | None = None) -> list[MemoryRef]:
        """Every memory, or for ``named`` the one with that id, else those whose name holds it
        (a query for it, not a listing of every memory the key reaches)."""
        me, most = self.principal, MAX_MEMORIES
        page = self.engine.list_memories(me, page_size=most, ids=None if named is None else [named])
        if named is not None and not page.items:
            page = self.engine.list_memories(me, page_size=most, keywords=named)
        return [MemoryRef(m.id, m.name, m.memory_types, m.description) for m in page.items]

    def add_turn(self, turn: Turn) -> Entry:
        (raw,) = self.engine.add_turn(
            self.principal,
            [turn.memory_id],
            user_input=turn.user_input,
            agent_response=turn.agent_response,
            user_id=turn.user_id,
            agent_id=turn.agent_id,
            session_id=turn.session_id,
            conversation_time=turn.conversation_time,
        )
        return raw

    def add_entries(
        self,
        memory_id: str,
        entries: Sequence[EntryInput],
        ids: dict[str, str],
        source_id: int | None,
    ) -> AddedEntries:
        return self.engine.add_entries(
            self.principal, memory_id, list(entries), source_id=source_id, **ids
        )

    def search(self, request: SearchRequest) -> list[Hit]:
        return self.engine.search(self.principal, request)

    def context(self, request: SearchRequest, max_tokens: int) -> Context:
        return self.engine.context(self.principal, request, max_tokens)

    def entry(self, memory_id: str, message_id: int) -> tuple[Entry, list[Entry], list[int]]:
        entry, _ = self.engine.get_entry(self.principal, memory_id, message_id)
        history = self.engine.history(self.principal, memory_id, message_id)
        return entry, history, self.engine.evidence(self.principal, memory_id, message_id)

    def correct(self, memory_id: str, message_id: int, content: str, reason: str) -> Entry:
        return self.engine.correct(self.principal, memory_id, message_id, content, reason=reason)

    def forget(self, memory_id: str, message_id: int) -> list[int]:
        return self.engine.forget(self.principal, memory_id, message_id)

    def restore(self, memory_id: str, message_id: int) -> list[int]:
        return self.engine.restore(self.principal, memory_id, message_id)

    def erase(self, memory_id: str, message_id: int, reason: str) -> EraseReceipt:
        return self.engine.erase(self.principal, memory_id, message_id, reason=reason)

    def task_status(self, memory_id: str, message_id: int) -> Job | None:
        return self.engine.task_status(self.principal, memory_id, message_id)

    def subject(
        self,
        action: SubjectAction,
        user_id: str,
        dry_run: bool,
        reason: str,
        token: str | None = None,
    ) -> SubjectReceipt:
        run = self.engine.forget_subject if action == "forget" else self.engine.erase_subject
        return run(self.principal, user_id, dry_run=dry_run, reason=reason, token=token)


class ClientBackend:
    """A running server, through the SDK client (its key decides; ``principal`` is what the
    server says the key is, from ``/users/me``)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._principal = client.me()

    @property
    def principal(self) -> Principal:
        return self._principal

    def memories(self, named: str | None = None) -> list[MemoryRef]:
        """Every memory, ``named`` or not (the tools pick the one it names)."""
        found: list[MemoryRef] = []
        for number in range(1, MAX_MEMORIES // _PAGE + 1):
            page = self.client.list_memories(page=number, page_size=_PAGE)
            found += [MemoryRef(m.id, m.name, m.memory_types, m.description) for m in page.items]
            if len(found) >= page.total or not page.items:
                break
        return found

    def add_turn(self, turn: Turn) -> Entry:
        (raw,) = self.client.add_turn(
            [turn.memory_id],
            user_input=turn.user_input,
            agent_response=turn.agent_response,
            user_id=turn.user_id or None,
            agent_id=turn.agent_id,
            session_id=turn.session_id,
            conversation_time=turn.conversation_time,
        )
        return raw

    def add_entries(
        self,
        memory_id: str,
        entries: Sequence[EntryInput],
        ids: dict[str, str],
        source_id: int | None,
    ) -> AddedEntries:
        return self.client.add_entries(memory_id, entries, source_id=source_id, **ids)

    def search(self, request: SearchRequest) -> list[Hit]:
        return self.client.search(request.query, request.memory_ids, **_search_options(request))

    def context(self, request: SearchRequest, max_tokens: int) -> Context:
        options = _search_options(request)
        return self.client.context(
            request.query, request.memory_ids, max_tokens=max_tokens, **options
        )

    def entry(self, memory_id: str, message_id: int) -> tuple[Entry, list[Entry], list[int]]:
        entry, _ = self.client.get_entry(memory_id, message_id)
        history = self.client.history(memory_id, message_id)
        return entry, history, self.client.evidence(memory_id, message_id)

    def correct(self, memory_id: str, message_id: int, content: str, reason: str) -> Entry:
        return self.client.correct(memory_id, message_id, content, reason=reason)

    def forget(self, memory_id: str, message_id: int) -> list[int]:
        return self.client.forget(memory_id, message_id)

    def restore(self, memory_id: str, message_id: int) -> list[int]:
        return self.client.restore(memory_id, message_id)

    def erase(self, memory_id: str, message_id: int, reason: str) -> EraseReceipt:
        return self.client.erase(memory_id, message_id, reason=reason)

    def task_status(self, memory_id: str, message_id: int) -> Job | None:
        return self.client.task_status(memory_id, message_id)

    def subject(
        self,
        action: SubjectAction,
        user_id: str,
        dry_run: bool,
        reason: str,
        token: str | None = None,
    ) -> SubjectReceipt:
        run = self.client.forget_subject if action == "forget" else self.client.erase_subject
        return run(user_id, dry_run=dry_run, reason=reason, token=token)


def _search_options(r: SearchRequest) -> dict[str, Any]:
    """A request's knobs and filters as the SDK's search and context take them: every
    declared field (the SDK's keywords are the fields' names)."""
    return {spec.name: getattr(r, spec.name) for spec in search_knobs()}


__all__ = ["MAX_MEMORIES", "Backend", "ClientBackend", "EngineBackend", "MemoryRef", "Turn"]
