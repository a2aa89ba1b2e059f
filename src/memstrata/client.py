"""memstrata's Python SDK: every REST route, typed results, the engine's exceptions.

::

    from memstrata import Client

    with Client("http://127.0.0.1:9380", api_key="ms-...") as ms:
        memory = ms.create_memory("notes", ["raw", "semantic"], "all-MiniLM-L6-v2@Builtin",
                                  "gpt-4o-mini@OpenAI")
        ms.add_turn([memory.id], user_input="I moved to Lyon", agent_response="Noted.")
        hits = ms.search("where does the user live", [memory.id])

Each operation is written once, as a function that describes its request and how to read the
answer (a :class:`Call`). :class:`Client` sends calls with ``httpx.Client`` and
:class:`AsyncClient` with ``httpx.AsyncClient``; both are thin shells over :class:`_Base`, which
builds the requests and reads the envelopes. An error envelope raises the exception the engine
would have raised (``NotFound``, ``InvalidInput`` with its field, ``Unauthorized``...).
Connection failures stay ``httpx`` exceptions.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar

import httpx
import numpy as np
from numpy.typing import NDArray

from memstrata import transfer, wire
from memstrata.engine import MessagePage
from memstrata.errors import MemstrataError
from memstrata.models import (
    ApiKey,
    AuditEvent,
    Entry,
    EraseReceipt,
    Hit,
    Job,
    Memory,
    Page,
    Principal,
    User,
)
from memstrata.retrieval.context import Context
from memstrata.wire import MemorySummary

T = TypeVar("T")
P = ParamSpec("P")
Data = Any
DEFAULT_URL = "http://127.0.0.1:9380"


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and how to turn its envelope's ``data`` into a result."""

    method: str
    path: str
    parse: Callable[[Data], T]
    params: Mapping[str, Any] | None = None
    json: object = None
    content: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    #: The body is the result itself (JSONL), not an envelope.
    raw: bool = False


class _Base:
    """What both clients share: the base URL, the key, building requests, reading answers."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_url = f"{self.base_url}/api/v1"
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = httpx.Timeout(timeout)

    def _request(self, call: Call[Any]) -> httpx.Request:
        return httpx.Request(
            call.method,
            self.api_url + call.path,
            params=_query(call.params),
            json=call.json,
            content=call.content,
            headers={**self._headers, **call.headers},
            extensions={"timeout": self._timeout.as_dict()},
        )

    @staticmethod
    def _result(call: Call[T], response: httpx.Response) -> T:
        if call.raw and response.is_success:
            return call.parse(response.text)
        try:
            body = response.json()
        except json.JSONDecodeError as exc:
            raise MemstrataError(
                f"HTTP {response.status_code} from {response.request.url}: not a memstrata answer"
            ) from exc
        if not isinstance(body, dict) or body.get("code") != wire.SUCCESS:
            raise wire.error_from_envelope(
                body if isinstance(body, dict) else {}, response.status_code
            )
        return call.parse(body.get("data"))


class _Runner(Protocol):
    def _run(self, call: Call[T]) -> T: ...


class _AsyncRunner(Protocol):
    async def _run(self, call: Call[T]) -> T: ...


def _sync(op: Callable[P, Call[T]]) -> Callable[Concatenate[Any, P], T]:
    """A client method that sends ``op``'s call and returns its result."""

    def method(self: _Runner, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(op(*args, **kwargs))

    _describe(method, op, "{}")
    return method


def _async(op: Callable[P, Call[T]]) -> Callable[Concatenate[Any, P], Awaitable[T]]:
    """The same, awaited."""

    async def method(self: _AsyncRunner, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(op(*args, **kwargs))

    _describe(method, op, "Awaitable[{}]")
    return method


def _describe(method: Callable[..., Any], op: Callable[..., Any], returns: str) -> None:
    """Name and document ``method`` as ``op``: its parameters after ``self``, and the result
    of its call (``returns`` formats it) for a return type."""
    functools.update_wrapper(method, op)
    signature = inspect.signature(op)
    result = str(signature.return_annotation).removeprefix("Call[").removesuffix("]")
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[this, *signature.parameters.values()], return_annotation=returns.format(result)
    )


# --- encoding helpers -----------------------------------------------------------------------


def _query(values: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if values is None:
        return None
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, (list, tuple, set, frozenset)):
            value = [str(v) for v in value]
        out[key] = value
    return out


def _time(value: datetime | str | None) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value


def _entry_path(memory_id: str, message_id: int) -> str:
    return f"/messages/{memory_id}:{message_id}"


def _none(data: Data) -> None:
    return None


def _entries(data: Data) -> list[Entry]:
    return [wire.entry_from_dict(d) for d in data]


def _changed(data: Data) -> list[int]:
    return [int(i) for i in data["changed"]]


# --- memories -------------------------------------------------------------------------------


def create_memory(
    name: str, memory_type: Sequence[str], embd_id: str, llm_id: str, **options: object
) -> Call[Memory]:
    """Create a memory; ``options`` are any of the configuration fields (permissions...)."""
    body = {"name": name, "memory_type": list(memory_type), "embd_id": embd_id, "llm_id": llm_id}
    return Call("POST", "/memories", wire.memory_from_dict, json={**body, **options})


def list_memories(
    *,
    keywords: str | None = None,
    memory_types: Sequence[str] | None = None,
    storage_type: str | None = None,
    owner_ids: Sequence[str] | None = None,
    ids: Sequence[str] | None = None,
    page: int = 1,
    page_size: int = 30,
) -> Call[Page[MemorySummary]]:
    params = {
        "keywords": keywords,
        "memory_type": None if memory_types is None else ",".join(memory_types),
        "storage_type": storage_type,
        "owner_ids": None if owner_ids is None else ",".join(owner_ids),
        "ids": None if ids is None else ",".join(ids),
        "page": page,
        "page_size": page_size,
    }

    def parse(data: Data) -> Page[MemorySummary]:
        items = tuple(wire.memory_item_from_dict(d) for d in data["memory_list"])
        return Page(items, int(data["total_count"]))

    return Call("GET", "/memories", parse, params=params)


def get_memory(memory_id: str) -> Call[Memory]:
    return Call("GET", f"/memories/{memory_id}/config", wire.memory_from_dict)


def update_memory(memory_id: str, changes: Mapping[str, object]) -> Call[Memory]:
    return Call("PUT", f"/memories/{memory_id}", wire.memory_from_dict, json=dict(changes))


def delete_memory(memory_id: str) -> Call[None]:
    return Call("DELETE", f"/memories/{memory_id}", _none)


def list_messages(
    memory_id: str,
    *,
    agent_ids: Sequence[str] | None = None,
    keywords: str | None = None,
    page: int = 1,
    page_size: int = 50,
) -> Call[MessagePage]:
    """Raw turns newest first, each with its extracted entries and its extraction job."""
    params = {"agent_id": agent_ids, "keywords": keywords, "page": page, "page_size": page_size}
    return Call("GET", f"/memories/{memory_id}", _message_page, params=params)


def _message_page(data: Data) -> MessagePage:
    rows = data["messages"]["message_list"]
    items = tuple(wire.entry_from_dict(r) for r in rows)
    extracted = {int(r["message_id"]): tuple(_entries(r["extract"])) for r in rows if r["extract"]}
    jobs = {int(r["message_id"]): wire.job_from_dict(r["task"]) for r in rows if r["task"]}
    return MessagePage(items, int(data["messages"]["total_count"]), extracted, jobs)


def jobs(
    memory_id: str, *, state: str | None = None, page: int = 1, page_size: int = 30
) -> Call[Page[Job]]:
    def parse(data: Data) -> Page[Job]:
        return Page(tuple(wire.job_from_dict(j) for j in data["jobs"]), int(data["total_count"]))

    params = {"state": state, "page": page, "page_size": page_size}
    return Call("GET", f"/memories/{memory_id}/jobs", parse, params=params)


def export_memory(memory_id: str) -> Call[list[dict[str, Any]]]:
    """The memory as JSONL records (see :mod:`memstrata.transfer`)."""
    return Call("GET", f"/memories/{memory_id}/export", transfer.parse_jsonl, raw=True)


def import_memory(
    memory_id: str | None, records: str | Iterable[Mapping[str, Any]]
) -> Call[transfer.ImportReport]:
    """Import JSONL text or records into a memory, or into a new one when ``memory_id`` is
    None (the records then start with an export's header)."""
    text = records if isinstance(records, str) else transfer.to_jsonl(records)
    path = "/memories/import" if memory_id is None else f"/memories/{memory_id}/import"
    headers = {"Content-Type": "application/x-ndjson"}
    return Call("POST", path, transfer.report_from_dict, content=text, headers=headers)


# --- messages -------------------------------------------------------------------------------


def add_turn(
    memory_ids: Sequence[str],
    *,
    user_input: str,
    agent_response: str,
    agent_id: str = "",
    session_id: str = "",
    user_id: str | None = None,
    conversation_time: datetime | str | None = None,
) -> Call[list[Entry]]:
    """Store a conversation turn in each memory; returns the raw entries written."""
    body = {
        "memory_id": list(memory_ids),
        "agent_id": agent_id,
        "session_id": session_id,
        "user_input": user_input,
        "agent_response": agent_response,
        "user_id": user_id,
        "conversation_time": _time(conversation_time),
    }
    return Call(
        "POST", "/messages", _entries, json={k: v for k, v in body.items() if v is not None}
    )


def _search_params(
    query: str,
    memory_ids: Sequence[str],
    top_n: int,
    similarity_threshold: float,
    keywords_similarity_weight: float,
    filters: Mapping[str, Any],
) -> dict[str, Any]:
    return {
        "query": query,
        "memory_id": list(memory_ids),
        "top_n": top_n,
        "similarity_threshold": similarity_threshold,
        "keywords_similarity_weight": keywords_similarity_weight,
        **filters,
    }


def search(
    query: str,
    memory_ids: Sequence[str],
    *,
    top_n: int = 5,
    similarity_threshold: float = 0.2,
    keywords_similarity_weight: float = 0.7,
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    types: Sequence[str] | None = None,
    as_of: datetime | str | None = None,
    valid_on: datetime | str | None = None,
    fusion: str | None = None,
) -> Call[list[Hit]]:
    """Hybrid search, best first. ``keywords_similarity_weight`` weighs the keyword side."""
    filters = {
        "user_id": user_id,
        "agent_id": agent_id,
        "session_id": session_id,
        "message_type": None if types is None else ",".join(types),
        "as_of": _time(as_of),
        "valid_on": _time(valid_on),
        "fusion": fusion,
    }
    params = _search_params(
        query, memory_ids, top_n, similarity_threshold, keywords_similarity_weight, filters
    )
    return Call("GET", "/messages/search", _hits, params=params)


def _hits(data: Data) -> list[Hit]:
    return [wire.hit_from_dict(d) for d in data]


def context(
    query: str,
    memory_ids: Sequence[str],
    *,
    max_tokens: int = 2000,
    top_n: int = 5,
    similarity_threshold: float = 0.2,
    keywords_similarity_weight: float = 0.7,
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    types: Sequence[str] | None = None,
    as_of: datetime | str | None = None,
    valid_on: datetime | str | None = None,
) -> Call[Context]:
    """A token-bounded block of the best entries, fenced as data, for a prompt."""
    filters = {
        "max_tokens": max_tokens,
        "user_id": user_id,
        "agent_id": agent_id,
        "session_id": session_id,
        "message_type": None if types is None else list(types),
        "as_of": _time(as_of),
        "valid_on": _time(valid_on),
    }
    body = _search_params(
        query, memory_ids, top_n, similarity_threshold, keywords_similarity_weight, filters
    )
    body = {k: v for k, v in body.items() if v is not None}
    return Call("POST", "/messages/context", wire.context_from_dict, json=body)


def recent(
    memory_ids: Sequence[str],
    *,
    agent_id: str | None = None,
    session_id: str | None = None,
    limit: int = 10,
) -> Call[list[Entry]]:
    params = {
        "memory_id": list(memory_ids),
        "agent_id": agent_id,
        "session_id": session_id,
        "limit": limit,
    }
    return Call("GET", "/messages", _entries, params=params)


def get_entry(memory_id: str, message_id: int) -> Call[tuple[Entry, NDArray[np.float32] | None]]:
    """An entry with its vector."""

    def parse(data: Data) -> tuple[Entry, NDArray[np.float32] | None]:
        embed = data.get("content_embed")
        vector = None if embed is None else np.asarray(embed, dtype=np.float32)
        return wire.entry_from_dict(data), vector

    return Call("GET", _entry_path(memory_id, message_id) + "/content", parse)


def set_status(memory_id: str, message_id: int, enabled: bool) -> Call[list[int]]:
    """Enable or disable an entry (and what was extracted from it); returns the ids changed."""
    return Call("PUT", _entry_path(memory_id, message_id), _changed, json={"status": enabled})


def forget(memory_id: str, message_id: int) -> Call[list[int]]:
    return Call("DELETE", _entry_path(memory_id, message_id), _changed, json={})


def restore(memory_id: str, message_id: int) -> Call[list[int]]:
    return Call("POST", _entry_path(memory_id, message_id) + "/restore", _changed)


def review(memory_id: str, message_id: int, verdict: str, reason: str = "") -> Call[Entry]:
    """``verdict`` is ``confirmed`` or ``rejected``."""
    body = {"verdict": verdict, "reason": reason}
    path = _entry_path(memory_id, message_id) + "/review"
    return Call("POST", path, wire.entry_from_dict, json=body)


def correct(
    memory_id: str,
    message_id: int,
    content: str,
    *,
    reason: str = "",
    valid_at: datetime | str | None = None,
) -> Call[Entry]:
    """Write a corrected version; returns the new current entry."""
    body = {"content": content, "reason": reason, "valid_at": _time(valid_at)}
    path = _entry_path(memory_id, message_id) + "/correct"
    return Call("POST", path, wire.entry_from_dict, json=body)


def erase(memory_id: str, message_id: int, *, reason: str = "") -> Call[EraseReceipt]:
    path = _entry_path(memory_id, message_id) + "/erase"
    return Call("POST", path, wire.receipt_from_dict, json={"reason": reason})


def history(memory_id: str, message_id: int) -> Call[list[Entry]]:
    return Call("GET", _entry_path(memory_id, message_id) + "/history", _entries)


def evidence(memory_id: str, message_id: int) -> Call[list[int]]:
    def parse(data: Data) -> list[int]:
        return [int(i) for i in data["source_ids"]]

    return Call("GET", _entry_path(memory_id, message_id) + "/evidence", parse)


# --- audit and accounts ---------------------------------------------------------------------


def audit_log(
    *,
    memory_id: str | None = None,
    message_id: int | None = None,
    actor_id: str | None = None,
    action: str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
    page: int = 1,
    page_size: int = 30,
) -> Call[Page[AuditEvent]]:
    params = {
        "memory_id": memory_id,
        "message_id": message_id,
        "actor": actor_id,
        "action": action,
        "since": _time(since),
        "until": _time(until),
        "page": page,
        "page_size": page_size,
    }

    def parse(data: Data) -> Page[AuditEvent]:
        events = tuple(wire.audit_from_dict(a) for a in data["events"])
        return Page(events, int(data["total_count"]))

    return Call("GET", "/audit", parse, params=params)


def health() -> Call[dict[str, Any]]:
    return Call("GET", "/health", dict)


def me() -> Call[Principal]:
    def parse(data: Data) -> Principal:
        scope = data.get("scope")
        return Principal(
            user_id=data["id"],
            tenant_ids=frozenset(data["tenant_ids"]),
            is_admin=bool(data["is_admin"]),
            scope=None if scope is None else frozenset(scope),
            name=data.get("name", ""),
        )

    return Call("GET", "/users/me", parse)


def create_user(name: str, *, admin: bool = False) -> Call[User]:
    return Call("POST", "/users", wire.user_from_dict, json={"name": name, "is_admin": admin})


def list_users() -> Call[list[User]]:
    def parse(data: Data) -> list[User]:
        return [wire.user_from_dict(u) for u in data]

    return Call("GET", "/users", parse)


def create_api_key(
    user_id: str, *, name: str = "", scope: Sequence[str] | None = None
) -> Call[tuple[ApiKey, str]]:
    """A new key for ``user_id``: its record and the key itself (shown only this once)."""

    def parse(data: Data) -> tuple[ApiKey, str]:
        return wire.key_from_dict(data), str(data["key"])

    body = {"name": name, "scope": None if scope is None else list(scope)}
    return Call("POST", f"/users/{user_id}/keys", parse, json=body)


def list_api_keys(user_id: str) -> Call[list[ApiKey]]:
    def parse(data: Data) -> list[ApiKey]:
        return [wire.key_from_dict(k) for k in data]

    return Call("GET", f"/users/{user_id}/keys", parse)


def revoke_api_key(user_id: str, key_id: str) -> Call[None]:
    return Call("DELETE", f"/users/{user_id}/keys/{key_id}", _none)


def join_team(tenant_id: str, user_id: str) -> Call[None]:
    return Call("POST", f"/teams/{tenant_id}/members", _none, json={"user_id": user_id})


def team_members(tenant_id: str) -> Call[list[str]]:
    def parse(data: Data) -> list[str]:
        return [str(m) for m in data["members"]]

    return Call("GET", f"/teams/{tenant_id}/members", parse)


def leave_team(tenant_id: str, user_id: str) -> Call[None]:
    return Call("DELETE", f"/teams/{tenant_id}/members/{user_id}", _none)


# --- the two shells -------------------------------------------------------------------------


class Client(_Base):
    """The synchronous SDK."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, api_key, timeout)
        self._http = httpx.Client(transport=transport)

    def _run(self, call: Call[T]) -> T:
        return self._result(call, self._http.send(self._request(call)))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    create_memory = _sync(create_memory)
    list_memories = _sync(list_memories)
    get_memory = _sync(get_memory)
    update_memory = _sync(update_memory)
    delete_memory = _sync(delete_memory)
    list_messages = _sync(list_messages)
    jobs = _sync(jobs)
    export_memory = _sync(export_memory)
    import_memory = _sync(import_memory)
    add_turn = _sync(add_turn)
    search = _sync(search)
    context = _sync(context)
    recent = _sync(recent)
    get_entry = _sync(get_entry)
    set_status = _sync(set_status)
    forget = _sync(forget)
    restore = _sync(restore)
    review = _sync(review)
    correct = _sync(correct)
    erase = _sync(erase)
    history = _sync(history)
    evidence = _sync(evidence)
    audit_log = _sync(audit_log)
    health = _sync(health)
    me = _sync(me)
    create_user = _sync(create_user)
    list_users = _sync(list_users)
    create_api_key = _sync(create_api_key)
    list_api_keys = _sync(list_api_keys)
    revoke_api_key = _sync(revoke_api_key)
    join_team = _sync(join_team)
    team_members = _sync(team_members)
    leave_team = _sync(leave_team)


class AsyncClient(_Base):
    """The asynchronous SDK: the same operations, awaited."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, api_key, timeout)
        self._http = httpx.AsyncClient(transport=transport)

    async def _run(self, call: Call[T]) -> T:
        return self._result(call, await self._http.send(self._request(call)))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    create_memory = _async(create_memory)
    list_memories = _async(list_memories)
    get_memory = _async(get_memory)
    update_memory = _async(update_memory)
    delete_memory = _async(delete_memory)
    list_messages = _async(list_messages)
    jobs = _async(jobs)
    export_memory = _async(export_memory)
    import_memory = _async(import_memory)
    add_turn = _async(add_turn)
    search = _async(search)
    context = _async(context)
    recent = _async(recent)
    get_entry = _async(get_entry)
    set_status = _async(set_status)
    forget = _async(forget)
    restore = _async(restore)
    review = _async(review)
    correct = _async(correct)
    erase = _async(erase)
    history = _async(history)
    evidence = _async(evidence)
    audit_log = _async(audit_log)
    health = _async(health)
    me = _async(me)
    create_user = _async(create_user)
    list_users = _async(list_users)
    create_api_key = _async(create_api_key)
    list_api_keys = _async(list_api_keys)
    revoke_api_key = _async(revoke_api_key)
    join_team = _async(join_team)
    team_members = _async(team_members)
    leave_team = _async(leave_team)


#: Every operation both clients offer (a test checks that the shells list exactly these).
OPERATIONS = (
    "create_memory",
    "list_memories",
    "get_memory",
    "update_memory",
    "delete_memory",
    "list_messages",
    "jobs",
    "export_memory",
    "import_memory",
    "add_turn",
    "search",
    "context",
    "recent",
    "get_entry",
    "set_status",
    "forget",
    "restore",
    "review",
    "correct",
    "erase",
    "history",
    "evidence",
    "audit_log",
    "health",
    "me",
    "create_user",
    "list_users",
    "create_api_key",
    "list_api_keys",
    "revoke_api_key",
    "join_team",
    "team_members",
    "leave_team",
)

__all__ = ["AsyncClient", "Call", "Client"]
