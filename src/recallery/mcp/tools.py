"""The MCP tools: each a typed coroutine over the caller's backend, with its description,
annotations and the capabilities it needs. Memories are named by ``memory`` (a name or an id
among those the key may use); without one, a search covers them all and a write needs the key
to reach exactly one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field

from recallery.errors import InvalidInput, NotFound
from recallery.models import Capability, EntryType
from recallery.requests import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_SIMILARITY_THRESHOLD,
    DEFAULT_TOP_N,
    EntryInput,
    SearchRequest,
    search_fields,
)

from .backend import Backend, MemoryRef, entry_detail, memories
from .calls import call
from .shapes import (
    Changed,
    ContextBlock,
    EntryDetail,
    EntryInfo,
    Memories,
    MemoryInfo,
    Recall,
    Receipt,
    Remembered,
    Stated,
    TaskStatus,
    recall_result,
)
from .subjects import RENAMED, erase_subject, erase_user, forget_subject, forget_user

Memory = Annotated[
    str | None,
    Field(description="A memory's name or id (see list_memories); default: every memory."),
]
Target = Annotated[
    str | None,
    Field(description="The memory's name or id; needed when the key reaches several."),
]
EntryId = Annotated[int, Field(description="The entry's id (recall results carry it).")]
#: What each search argument does, as the search request declares it (the tools name a few
#: of them as agents know them: ``top_k`` for ``top_n``, ``threshold``).
_SAID = {spec.name: str(spec.metadata["about"]) for spec in search_fields()}
UserId = Annotated[str, Field(description=_SAID["user_id"])]
AgentId = Annotated[str, Field(description=_SAID["agent_id"])]
SessionId = Annotated[str, Field(description=_SAID["session_id"])]
Types = Annotated[
    list[Literal["raw", "semantic", "episodic", "procedural"]] | None,
    Field(description=_SAID["types"]),
]
TopK = Annotated[int, Field(ge=1, le=100, description=_SAID["top_n"])]
Threshold = Annotated[float, Field(ge=0, le=1, description=_SAID["similarity_threshold"])]
AsOf = Annotated[datetime | None, Field(description=_SAID["as_of"])]
ValidOn = Annotated[datetime | None, Field(description=_SAID["valid_on"])]
Reason = Annotated[str, Field(description="Why, for the audit log.")]


class EntrySpec(BaseModel):
    content: str = Field(description="The statement, self-contained (name who it is about).")
    type: Literal["semantic", "episodic", "procedural"] = Field(
        "semantic", description="semantic: a fact; episodic: an event; procedural: how to act."
    )
    valid_at: datetime | None = Field(None, description="When it became true (default: now).")
    invalid_at: datetime | None = Field(None, description="When it stops being true.")


def _scope(b: Backend, memory: str | None) -> list[MemoryRef]:
    """The caller's memories, narrowed to the one ``memory`` names."""
    found = memories(b, memory or None)
    if not memory:
        return found
    picked = [m for m in found if m.id == memory] or [m for m in found if m.name == memory]
    if not picked:
        raise NotFound(f"Memory '{memory}' not found.")
    if len(picked) > 1:
        raise InvalidInput("memory", f"Several memories are named '{memory}'; use its id.")
    return picked


def _one(b: Backend, memory: str | None) -> str:
    found = _scope(b, memory)
    if len(found) != 1:
        names = ", ".join(m.name for m in found) or "none"
        raise InvalidInput("memory", f"Name the memory to use (this key reaches: {names}).")
    return found[0].id


def _request(
    b: Backend,
    memory: str | None,
    query: str,
    types: Sequence[str] | None,
    top_k: int,
    threshold: float,
    ids: tuple[str, str, str],
    times: tuple[datetime | None, datetime | None],
    explain: bool = False,
) -> SearchRequest:
    """A search of the caller's memories (narrowed by ``memory``); ``ids``: user, agent and
    session filters ("" for none); ``times``: as_of and valid_on; ``explain``: each hit's
    score by ranking stage."""
    user_id, agent_id, session_id = (i or None for i in ids)
    return SearchRequest(
        query,
        tuple(m.id for m in _scope(b, memory)),
        top_n=top_k,
        similarity_threshold=threshold,
        user_id=user_id,
        agent_id=agent_id,
        session_id=session_id,
        types=None if types is None else frozenset(EntryType(t) for t in types),
        as_of=times[0],
        valid_on=times[1],
        explain=explain,
    )


async def list_memories() -> Memories:
    return await call(lambda b: Memories(memories=[MemoryInfo.of(m) for m in memories(b)]))


async def remember(
    user_input: Annotated[str, Field(description="What the user said.")],
    agent_response: Annotated[str, Field(description="What the agent answered.")],
    memory: Target = None,
    user_id: Annotated[str, Field(description="The end user.")] = "",
    agent_id: Annotated[str, Field(description="This agent.")] = "",
    session_id: Annotated[str, Field(description="The conversation.")] = "",
    conversation_time: Annotated[
        datetime | None, Field(description="When the turn happened (default: now).")
    ] = None,
) -> Remembered:
    def run(b: Backend) -> Remembered:
        mid = _one(b, memory)
        (raw,) = b.add_turn(
            [mid],
            user_input=user_input,
            agent_response=agent_response,
            user_id=user_id or None,
            agent_id=agent_id,
            session_id=session_id,
            conversation_time=conversation_time,
        )
        return Remembered(memory_id=mid, message_id=raw.message_id)

    return await call(run)


async def add_entries(
    entries: Annotated[list[EntrySpec], Field(min_length=1, max_length=100)],
    memory: Target = None,
    user_id: Annotated[str, Field(description="Who the entries are about.")] = "",
    agent_id: Annotated[str, Field(description="This agent.")] = "",
    session_id: Annotated[str, Field(description="The conversation.")] = "",
    source_id: Annotated[
        int | None, Field(description="The raw turn they come from (see remember).")
    ] = None,
) -> Stated:
    stated = [EntryInput(e.content, e.type, e.valid_at, e.invalid_at) for e in entries]
    ids = {"user_id": user_id, "agent_id": agent_id, "session_id": session_id}
    return await call(
        lambda b: Stated.of(b.add_entries(_one(b, memory), stated, source_id=source_id, **ids))
    )


async def recall(
    query: Annotated[str, Field(description="What to look for, in a few words.")],
    memory: Memory = None,
    types: Types = None,
    top_k: TopK = DEFAULT_TOP_N,
    threshold: Threshold = DEFAULT_SIMILARITY_THRESHOLD,
    user_id: UserId = "",
    agent_id: AgentId = "",
    session_id: SessionId = "",
    as_of: AsOf = None,
    valid_on: ValidOn = None,
    explain: Annotated[bool, Field(description=_SAID["explain"])] = False,
) -> Annotated[CallToolResult, Recall]:
    def run(b: Backend) -> CallToolResult:
        ids, times = (user_id, agent_id, session_id), (as_of, valid_on)
        request = _request(b, memory, query, types, top_k, threshold, ids, times, explain)
        return recall_result(b.search(request) if request.memory_ids else [])

    return await call(run)


async def get_context(
    query: Annotated[str, Field(description="What the conversation is about now.")],
    memory: Memory = None,
    max_tokens: Annotated[int, Field(ge=1, description="Token budget of the block.")] = (
        DEFAULT_MAX_TOKENS
    ),
    types: Types = None,
    top_k: TopK = DEFAULT_TOP_N,
    threshold: Threshold = DEFAULT_SIMILARITY_THRESHOLD,
    user_id: UserId = "",
    agent_id: AgentId = "",
    session_id: SessionId = "",
    as_of: AsOf = None,
    valid_on: ValidOn = None,
) -> ContextBlock:
    def run(b: Backend) -> ContextBlock:
        ids, times = (user_id, agent_id, session_id), (as_of, valid_on)
        request = _request(b, memory, query, types, top_k, threshold, ids, times)
        if not request.memory_ids:
            return ContextBlock(text="", message_ids=[], tokens=0, truncated=False)
        return ContextBlock.of(b.context(request, max_tokens=max_tokens))

    return await call(run)


async def get_entry(entry_id: EntryId, memory: Target = None) -> EntryDetail:
    def run(b: Backend) -> EntryDetail:
        entry, history, evidence = entry_detail(b, _one(b, memory), entry_id)
        versions = [EntryInfo.of(e) for e in history]
        return EntryDetail(entry=EntryInfo.of(entry), history=versions, evidence=evidence)

    return await call(run)


async def correct(
    entry_id: EntryId,
    content: Annotated[str, Field(description="The corrected statement.")],
    memory: Target = None,
    reason: Reason = "",
) -> EntryInfo:
    return await call(
        lambda b: EntryInfo.of(b.correct(_one(b, memory), entry_id, content, reason=reason))
    )


async def forget(entry_id: EntryId, memory: Target = None) -> Changed:
    return await call(lambda b: Changed(changed=b.forget(_one(b, memory), entry_id)))


async def restore(entry_id: EntryId, memory: Target = None) -> Changed:
    return await call(lambda b: Changed(changed=b.restore(_one(b, memory), entry_id)))


async def erase(entry_id: EntryId, memory: Target = None, reason: Reason = "") -> Receipt:
    return await call(lambda b: Receipt.of(b.erase(_one(b, memory), entry_id, reason=reason)))


async def task_status(
    entry_id: Annotated[int, Field(description="The raw turn's id (remember returns it).")],
    memory: Target = None,
) -> TaskStatus:
    return await call(lambda b: TaskStatus.of(b.task_status(_one(b, memory), entry_id)))


@dataclass(frozen=True)
class Tool:
    fn: Any
    description: str
    annotations: ToolAnnotations
    needs: frozenset[Capability]


def _hints(read_only: bool, destructive: bool = False, idempotent: bool = False) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=read_only or idempotent,
        open_world_hint=False,
    )


READ, WRITE = frozenset({Capability.READ}), frozenset({Capability.WRITE})
_FORGET_SUBJECT = (
    "Forget everything about one end user (their turns and the facts from them) in every "
    "memory this key may write; a dry run that only counts unless apply is true."
)
_ERASE_SUBJECT = (
    "Erase everything about one end user, for good, in every memory this key may erase; "
    "a dry run that only counts unless apply is true. Applying cannot be undone."
)
TOOLS = (
    Tool(list_memories, "List the memories this key may use.", _hints(True), frozenset()),
    Tool(
        remember,
        "Store one conversation turn (the user's words and your answer). Facts are extracted "
        "from it in the background; the result names the turn for task_status.",
        _hints(False),
        WRITE,
    ),
    Tool(
        add_entries,
        "Store facts, events or instructions you are sure of, directly. Each is reconciled: a "
        "repeat adds no entry, a contradiction replaces the old entry (kept in its history), "
        "one matching a rejected entry is dropped; the result says which.",
        _hints(False),
        WRITE,
    ),
    Tool(
        recall,
        "Search memory (keywords and meaning) for entries relevant to a query, best first: "
        "each with its id, type, text, valid time, trust and score (get_entry gives its "
        "history and evidence).",
        _hints(True),
        READ,
    ),
    Tool(
        get_context,
        "The best entries for a query as one fenced, token-bounded block to put into a prompt.",
        _hints(True),
        READ,
    ),
    Tool(
        get_entry,
        "One entry with its provenance, its version history and the turns supporting it.",
        _hints(True),
        READ,
    ),
    Tool(
        correct,
        "Replace an entry's text with a corrected version; the old one is retired, kept in "
        "its history.",
        _hints(False),
        WRITE,
    ),
    Tool(
        forget,
        "Stop using an entry (and, for a turn, what was extracted from it); restore undoes it.",
        _hints(False, idempotent=True),
        WRITE,
    ),
    Tool(restore, "Undo forget.", _hints(False, idempotent=True), WRITE),
    Tool(
        erase,
        "Delete an entry for good, with its versions and its extracts; returns the receipt. "
        "This cannot be undone.",
        _hints(False, destructive=True),
        frozenset({Capability.MANAGE}),
    ),
    Tool(
        forget_subject,
        _FORGET_SUBJECT,
        _hints(False, idempotent=True),
        WRITE,
    ),
    Tool(
        erase_subject,
        _ERASE_SUBJECT,
        _hints(False, destructive=True),
        frozenset({Capability.MANAGE}),
    ),
    Tool(
        forget_user,
        f"Deprecated: use {RENAMED['forget_user']} (this old name goes in the next release). "
        + _FORGET_SUBJECT,
        _hints(False, idempotent=True),
        WRITE,
    ),
    Tool(
        erase_user,
        f"Deprecated: use {RENAMED['erase_user']} (this old name goes in the next release). "
        + _ERASE_SUBJECT,
        _hints(False, destructive=True),
        frozenset({Capability.MANAGE}),
    ),
    Tool(
        task_status,
        "How the background extraction of a remembered turn went (state, outcome, progress).",
        _hints(True),
        READ,
    ),
)
NAMES = frozenset(t.fn.__name__ for t in TOOLS)

__all__ = ["NAMES", "RENAMED", "TOOLS", "EntrySpec", "Tool"]
