"""The two clients: :class:`Client` sends calls with ``httpx.Client`` and :class:`AsyncClient`
with ``httpx.AsyncClient``. Both are thin shells over :class:`_Base`, which builds the requests
and reads the envelopes; each operation becomes a method of both from its one definition."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import warnings
import weakref
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

import httpx

from recallery import wire
from recallery.client import (
    accounts,
    agents,
    curation,
    memories,
    messages,
    requestlog,
    subjects,
)
from recallery.client.call import Call, query
from recallery.errors import RecalleryError, RecalleryWarning

T = TypeVar("T")
P = ParamSpec("P")
DEFAULT_URL = "http://127.0.0.1:9380"


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
            params=query(call.params),
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
            raise RecalleryError(
                f"HTTP {response.status_code} from {response.request.url}: not a recallery answer"
            ) from exc
        if not isinstance(body, dict) or body.get("code") != wire.SUCCESS:
            raise wire.error_from_envelope(
                body if isinstance(body, dict) else {}, response.status_code
            )
        # what a write's answer says beside its data (text the embedder cannot read)
        for message in body.get("warnings") or ():
            warnings.warn(str(message), RecalleryWarning, stacklevel=4)
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

    create_memory = _sync(memories.create_memory)
    list_memories = _sync(memories.list_memories)
    get_memory = _sync(memories.get_memory)
    update_memory = _sync(memories.update_memory)
    delete_memory = _sync(memories.delete_memory)
    list_messages = _sync(memories.list_messages)
    jobs = _sync(memories.jobs)
    retry_extraction = _sync(memories.retry_extraction)
    retry_failed_extraction = _sync(memories.retry_failed_extraction)
    test_chat_model = _sync(memories.test_chat_model)
    export_memory = _sync(memories.export_memory)
    import_memory = _sync(memories.import_memory)
    add_turn = _sync(messages.add_turn)
    search = _sync(messages.search)
    context = _sync(messages.context)
    recent = _sync(messages.recent)
    get_entry = _sync(messages.get_entry)
    set_status = _sync(messages.set_status)
    forget = _sync(messages.forget)
    restore = _sync(messages.restore)
    review = _sync(messages.review)
    correct = _sync(messages.correct)
    reinstate = _sync(messages.reinstate)
    erase = _sync(messages.erase)
    history = _sync(messages.history)
    evidence = _sync(messages.evidence)
    audit_log = _sync(accounts.audit_log)
    health = _sync(accounts.health)
    me = _sync(accounts.me)
    create_user = _sync(accounts.create_user)
    list_users = _sync(accounts.list_users)
    create_api_key = _sync(accounts.create_api_key)
    list_api_keys = _sync(accounts.list_api_keys)
    revoke_api_key = _sync(accounts.revoke_api_key)
    join_team = _sync(accounts.join_team)
    team_members = _sync(accounts.team_members)
    leave_team = _sync(accounts.leave_team)
    add_entries = _sync(agents.add_entries)
    task_status = _sync(agents.task_status)
    bulk = _sync(curation.bulk)
    review_queue = _sync(curation.review_queue)
    facts = _sync(curation.facts)
    timeline = _sync(curation.timeline)
    forget_subject = _sync(subjects.forget_subject)
    erase_subject = _sync(subjects.erase_subject)
    list_subjects = _sync(subjects.list_subjects)
    people = _sync(subjects.people)
    request_log = _sync(requestlog.request_log)
    requests = _sync(requestlog.requests)
    entry_reads = _sync(requestlog.entry_reads)


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
        self._transport = transport
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient]
        self._pools = weakref.WeakKeyDictionary()

    @property
    def _http(self) -> httpx.AsyncClient:
        """The running loop's ``httpx.AsyncClient``: a pooled connection belongs to the loop
        that opened it, so each loop (``asyncio.run`` per turn, a framework's worker
        threads) gets its own, dropped with the loop."""
        loop = asyncio.get_running_loop()
        http = self._pools.get(loop)
        if http is None or http.is_closed:
            http = self._pools[loop] = httpx.AsyncClient(transport=self._transport)
        return http

    async def _run(self, call: Call[T]) -> T:
        return self._result(call, await self._http.send(self._request(call)))

    async def aclose(self) -> None:
        """Close the running loop's connections (another loop's go with that loop)."""
        http = self._pools.pop(asyncio.get_running_loop(), None)
        if http is not None:
            await http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    create_memory = _async(memories.create_memory)
    list_memories = _async(memories.list_memories)
    get_memory = _async(memories.get_memory)
    update_memory = _async(memories.update_memory)
    delete_memory = _async(memories.delete_memory)
    list_messages = _async(memories.list_messages)
    jobs = _async(memories.jobs)
    retry_extraction = _async(memories.retry_extraction)
    retry_failed_extraction = _async(memories.retry_failed_extraction)
    test_chat_model = _async(memories.test_chat_model)
    export_memory = _async(memories.export_memory)
    import_memory = _async(memories.import_memory)
    add_turn = _async(messages.add_turn)
    search = _async(messages.search)
    context = _async(messages.context)
    recent = _async(messages.recent)
    get_entry = _async(messages.get_entry)
    set_status = _async(messages.set_status)
    forget = _async(messages.forget)
    restore = _async(messages.restore)
    review = _async(messages.review)
    correct = _async(messages.correct)
    reinstate = _async(messages.reinstate)
    erase = _async(messages.erase)
    history = _async(messages.history)
    evidence = _async(messages.evidence)
    audit_log = _async(accounts.audit_log)
    health = _async(accounts.health)
    me = _async(accounts.me)
    create_user = _async(accounts.create_user)
    list_users = _async(accounts.list_users)
    create_api_key = _async(accounts.create_api_key)
    list_api_keys = _async(accounts.list_api_keys)
    revoke_api_key = _async(accounts.revoke_api_key)
    join_team = _async(accounts.join_team)
    team_members = _async(accounts.team_members)
    leave_team = _async(accounts.leave_team)
    add_entries = _async(agents.add_entries)
    task_status = _async(agents.task_status)
    bulk = _async(curation.bulk)
    review_queue = _async(curation.review_queue)
    facts = _async(curation.facts)
    timeline = _async(curation.timeline)
    forget_subject = _async(subjects.forget_subject)
    erase_subject = _async(subjects.erase_subject)
    list_subjects = _async(subjects.list_subjects)
    people = _async(subjects.people)
    request_log = _async(requestlog.request_log)
    requests = _async(requestlog.requests)
    entry_reads = _async(requestlog.entry_reads)


#: Every operation both clients offer (a test checks that the shells list exactly these);
#: ``people`` and ``requests`` are old names of ``list_subjects`` and ``request_log``, kept one
#: release (they warn).
OPERATIONS = (
    "create_memory",
    "list_memories",
    "get_memory",
    "update_memory",
    "delete_memory",
    "list_messages",
    "jobs",
    "retry_extraction",
    "retry_failed_extraction",
    "test_chat_model",
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
    "reinstate",
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
    "bulk",
    "review_queue",
    "facts",
    "timeline",
    "forget_subject",
    "erase_subject",
    "list_subjects",
    "people",
    "request_log",
    "requests",
    "entry_reads",
    "add_entries",
    "task_status",
)

__all__ = ["OPERATIONS", "AsyncClient", "Client"]
