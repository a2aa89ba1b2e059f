"""The data model: frozen dataclasses and enums, no behaviour beyond small derived values."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class EntryType(enum.StrEnum):
    """Kinds of entry. ``raw`` is the stored turn; the others are extracted from it."""

    RAW = "raw"
    SEMANTIC = "semantic"
    EPISODIC = "episodic"
    PROCEDURAL = "procedural"

    @property
    def flag(self) -> int:
        """RAGFlow's bit flag for the type (raw=1, semantic=2, episodic=4, procedural=8)."""
        return _TYPE_FLAGS[self]

    @classmethod
    def extracted(cls) -> tuple[EntryType, ...]:
        return (cls.SEMANTIC, cls.EPISODIC, cls.PROCEDURAL)


_TYPE_FLAGS = {t: 1 << n for n, t in enumerate(EntryType)}  # in declaration order: 1, 2, 4, 8


class Trust(enum.StrEnum):
    UNREVIEWED = "unreviewed"
    CONFIRMED = "confirmed"
    REJECTED = "rejected"


class Origin(enum.StrEnum):
    CONVERSATION = "conversation"
    EXTRACTION = "extraction"
    CORRECTION = "correction"
    IMPORT = "import"
    MANUAL = "manual"


class Permission(enum.StrEnum):
    ME = "me"
    TEAM = "team"


class ForgettingPolicy(enum.StrEnum):
    FIFO = "FIFO"
    LRU = "LRU"


class Fusion(enum.StrEnum):
    #: Keyword scores over the best one, vector scores over the vector candidates' spread,
    #: the keyword weight a hint around the embedding model's balance (the default).
    BALANCED = "balanced"
    #: Keyword scores over the best one plus raw cosine similarity, the weight as given.
    WEIGHTED = "weighted"
    RRF = "rrf"


@dataclass(frozen=True)
class User:
    id: str
    name: str
    is_admin: bool
    created_at: datetime


class Capability(enum.StrEnum):
    """What an API key may do: ``read`` (search, context, list, get), ``write`` (turns,
    entries, forget, restore, correct, enable) and ``manage`` (erase, delete, configure,
    review, share, keys and teams)."""

    READ = "read"
    WRITE = "write"
    MANAGE = "manage"


#: Every capability: what a key created without a list may do.
ALL_CAPABILITIES = frozenset(Capability)


@dataclass(frozen=True)
class Principal:
    """Who is calling: a user, the teams (tenants) they belong to, and an optional key scope.

    ``tenant_ids`` always contains the user's own tenant (its id). ``scope`` limits an API key
    to listed memory ids; ``None`` means no limit. ``capabilities`` limits what the key may do
    (all of them unless the key was created with fewer).
    """

    user_id: str
    tenant_ids: frozenset[str]
    is_admin: bool = False
    scope: frozenset[str] | None = None
    name: str = ""
    capabilities: frozenset[Capability] = ALL_CAPABILITIES
    #: The API key this caller authenticated with ('' when none: in process, the CLI).
    key_id: str = ""


@dataclass(frozen=True)
class Memory:
    id: str
    tenant_id: str
    name: str
    memory_types: tuple[EntryType, ...]
    embd_id: str
    llm_id: str
    permissions: Permission = Permission.ME
    memory_size: int = 5 * 1024 * 1024
    forgetting_policy: ForgettingPolicy = ForgettingPolicy.FIFO
    temperature: float = 0.5
    system_prompt: str | None = None
    user_prompt: str | None = None
    avatar: str | None = None
    description: str | None = None
    storage_type: str = "table"
    created_at: datetime | None = None
    updated_at: datetime | None = None
    used_bytes: int = 0
    entry_count: int = 0
    local_model: str | None = None
    """The local model of an ``@Builtin`` ``embd_id``, fixed at creation (None: a provider)."""

    @property
    def model_id(self) -> str:
        """The id its embeddings resolve by: ``local_model@Builtin``, else ``embd_id``."""
        return f"{self.local_model}@Builtin" if self.local_model else self.embd_id

    @property
    def extracted_types(self) -> tuple[EntryType, ...]:
        return tuple(t for t in EntryType.extracted() if t in self.memory_types)

    @property
    def type_flags(self) -> int:
        return sum(t.flag for t in self.memory_types)


@dataclass(frozen=True)
class Entry:
    """One row of memory (RAGFlow's *message*)."""

    message_id: int
    memory_id: str
    tenant_id: str
    message_type: EntryType
    content: str
    valid_at: datetime
    recorded_at: datetime
    user_id: str = ""
    agent_id: str = ""
    session_id: str = ""
    source_id: int | None = None
    invalid_at: datetime | None = None
    retired_at: datetime | None = None
    supersedes: int | None = None
    superseded_by: int | None = None
    status: bool = True
    trust: Trust = Trust.UNREVIEWED
    origin: Origin = Origin.CONVERSATION
    forget_at: datetime | None = None
    last_used_at: datetime | None = None
    use_count: int = 0
    size_bytes: int = 0


@dataclass(frozen=True)
class NewEntry:
    """An entry to insert; the store assigns ``message_id`` and ``recorded_at``."""

    memory_id: str
    tenant_id: str
    message_type: EntryType
    content: str
    valid_at: datetime
    size_bytes: int
    user_id: str = ""
    agent_id: str = ""
    session_id: str = ""
    source_id: int | None = None
    invalid_at: datetime | None = None
    supersedes: int | None = None
    trust: Trust = Trust.UNREVIEWED
    origin: Origin = Origin.CONVERSATION
    status: bool = True


@dataclass(frozen=True)
class Hit:
    """A search result: the entry and how it scored."""

    entry: Entry
    score: float
    keyword_score: float
    vector_score: float
    why: tuple[tuple[str, float], ...] = ()
    """Its score's contributions by ranking stage, in order, where the search was asked to
    explain (``explain``); they add up to ``score``."""


@dataclass(frozen=True)
class Tombstone:
    """What is left of an erased entry: ids, type, times, who and why — never content."""

    message_id: int
    memory_id: str
    tenant_id: str
    message_type: EntryType
    valid_at: datetime
    recorded_at: datetime
    erased_at: datetime
    actor: str
    reason: str


@dataclass(frozen=True)
class EraseReceipt:
    memory_id: str
    requested: int
    erased: tuple[int, ...]
    at: datetime
    actor: str
    reason: str
    scrubbed: bool = True
    """Whether the store's files are already clean of the erased text; False while a reader
    elsewhere holds the old pages (the store completes the scrub at its next chance)."""


@dataclass(frozen=True)
class AuditEvent:
    id: int
    at: datetime
    actor: str
    action: str
    memory_id: str | None
    message_id: int | None
    reason: str
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)


class AuditAction(enum.StrEnum):
    """What an audit event records; every state change names one of these."""

    MEMORY_CREATE = "memory.create"
    MEMORY_UPDATE = "memory.update"
    MEMORY_DELETE = "memory.delete"
    ENTRY_ADD = "entry.add"
    ENTRY_ENABLE = "entry.enable"
    ENTRY_DISABLE = "entry.disable"
    ENTRY_FORGET = "entry.forget"
    ENTRY_RESTORE = "entry.restore"
    ENTRY_CONFIRM = "entry.confirm"
    ENTRY_REJECT = "entry.reject"
    ENTRY_CORRECT = "entry.correct"
    ENTRY_RETIRE = "entry.retire"
    ENTRY_REINSTATE = "entry.reinstate"
    ENTRY_SUPERSEDE = "entry.supersede"
    ENTRY_UNLINK = "entry.unlink"
    """A version link between two people's entries undone (:mod:`recallery.services.repair`)."""
    ENTRY_DEDUPE = "entry.dedupe"
    ENTRY_ERASE = "entry.erase"
    ENTRY_EVICT = "entry.evict"
    USER_CREATE = "user.create"
    TEAM_JOIN = "team.join"
    TEAM_LEAVE = "team.leave"
    KEY_CREATE = "key.create"
    KEY_REVOKE = "key.revoke"
    JOB_RETRY = "job.retry"


class JobKind(enum.StrEnum):
    """Kinds of background job the engine enqueues (``Job.kind``; a worker may be given
    handlers for others)."""

    EXTRACTION = "extraction"
    STATEMENT = "statement"
    """Never queued: the finished record of an agent's statement that took the model's
    judgement, holding that model usage (written with the statement's entries)."""


class JobState(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    PARKED = "parked"


class Outcome(enum.StrEnum):
    """How a finished job ended (``Job.outcome``). Only ``done`` and ``empty`` are successes.

    ``unparseable``: the model's reply is not JSON. ``invalid``: JSON of the wrong shape (a type
    that is unknown or not enabled, too many items, wrong fields). ``failed``: the call failed
    after its retries, or for good (HTTP 401, a full memory). ``skipped``: no chat model is
    configured for the memory's ``llm_id``, or the turn was forgotten before its turn came.
    """

    DONE = "done"
    EMPTY = "empty"
    UNPARSEABLE = "unparseable"
    INVALID = "invalid"
    FAILED = "failed"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Job:
    id: int
    kind: str
    tenant_id: str
    memory_id: str
    message_id: int | None
    state: JobState
    attempts: int
    progress: float
    progress_msg: str
    outcome: str | None
    created_at: datetime
    updated_at: datetime
    run_after: datetime | None = None
    lease_until: datetime | None = None
    lease_owner: str | None = None
    result: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ApiKey:
    """An API key's record; the key itself is shown once, when it is created."""

    id: str
    user_id: str
    name: str
    scope: tuple[str, ...] | None
    created_at: datetime
    revoked_at: datetime | None = None
    capabilities: tuple[str, ...] | None = None
    """What the key may do (``read``, ``write``, ``manage``); None: everything its user may."""


@dataclass(frozen=True)
class Page(Generic[T]):
    items: tuple[T, ...]
    total: int


__all__ = [
    "ALL_CAPABILITIES",
    "ApiKey",
    "AuditAction",
    "AuditEvent",
    "Capability",
    "Entry",
    "EntryType",
    "EraseReceipt",
    "ForgettingPolicy",
    "Fusion",
    "Hit",
    "Job",
    "JobKind",
    "JobState",
    "Memory",
    "NewEntry",
    "Origin",
    "Outcome",
    "Page",
    "Permission",
    "Principal",
    "Scope",
    "Tombstone",
    "Trust",
    "User",
]


@dataclass(frozen=True)
class Scope:
    """A resolved set of memories a caller may touch; every store query takes one.

    Built from the memories :func:`recallery.access.readable` let the caller read.
    An empty scope makes every query return nothing without touching an index.
    """

    memory_ids: frozenset[str]

    @classmethod
    def of(cls, *memory_ids: str) -> Scope:
        """The scope of these memories (for a caller already checked against each)."""
        return cls(frozenset(memory_ids))

    def __bool__(self) -> bool:
        return bool(self.memory_ids)
