"""The engine bound to one caller: every operation the SDK offers, under the SDK's names and
with its signatures, run in this process for an authenticated principal.

Whatever acts for someone (the MCP tools in process, a framework adapter, a script) can hold
an :class:`Acting` or a :class:`~recallery.Client` and call the same methods; a test checks
that both have the same names and parameters, so an adapter written against one runs on the
other. Most operations are the engine's with the caller filled in; the few whose engine form
takes a typed request (search, context, the Messages list, the request log) or pages by
offset (the audit log) read the SDK's arguments as the REST routes do, and accept the
request objects too (:mod:`recallery.requests.either`).

The caller is resolved again at every call (with ``key``, the key is checked, so a revoked
key stops at the next call; without one, the user's teams are read again); its scope and
capabilities stay those given.

An operation renamed keeps its old name one release and warns (``people`` is
``list_subjects``, ``requests`` is ``request_log``), as the SDK's and the engine's do.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Concatenate, ParamSpec, TypeVar

from recallery import validation as v
from recallery.engine import Engine
from recallery.models import AuditEvent, Entry, Hit, Memory, Page, Principal, User
from recallery.requests import (
    DEFAULT_MAX_TOKENS,
    AuditFilter,
    Context,
    MessageFilter,
    MessagePage,
    SearchRequest,
    requestlog,
)
from recallery.requests.either import (
    alone,
    audit_filter,
    message_filter,
    search_request,
    search_signature,
)
from recallery.requests.requestlog import LoggedRequest, RequestQuery

P = ParamSpec("P")
R = TypeVar("R")


def _bound(method: Callable[Concatenate[Any, Principal, P], R]) -> Callable[Concatenate[Any, P], R]:
    """An :class:`Acting` method: the engine's ``method`` for the bound caller, with the
    engine's parameters after the caller."""

    @functools.wraps(method)
    def call(acting: Acting, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(acting.engine, acting.principal, *args, **kwargs)

    engine_side = inspect.signature(method)
    this, _caller, *rest = engine_side.parameters.values()
    call.__signature__ = engine_side.replace(parameters=[this, *rest])  # type: ignore[attr-defined]
    return call


class Acting:
    """An engine acting for one caller, with the SDK's operations (see the module)."""

    def __init__(self, engine: Engine, principal: Principal, *, key: str | None = None) -> None:
        self.engine = engine
        self._given = principal
        self._key = key

    @property
    def principal(self) -> Principal:
        """The caller as the store says it is now (see the module)."""
        if self._key is not None:
            return self.engine.authenticate(self._key)
        given = self._given
        return self.engine.principal(given.user_id, given.scope, given.capabilities)

    def me(self) -> Principal:
        """The caller: user, teams and key scope (``GET /users/me``)."""
        return self.principal

    # --- memories
    def create_memory(
        self, name: str, memory_type: Sequence[str], embd_id: str, llm_id: str, **options: object
    ) -> Memory:
        """Create a memory; ``options`` are any of the configuration fields."""
        return self.engine.create_memory(
            self.principal,
            name=name,
            memory_type=memory_type,
            embd_id=embd_id,
            llm_id=llm_id,
            **options,
        )

    list_memories = _bound(Engine.list_memories)
    get_memory = _bound(Engine.get_memory)
    update_memory = _bound(Engine.update_memory)
    delete_memory = _bound(Engine.delete_memory)

    def list_messages(
        self,
        memory_id: str,
        where: MessageFilter | None = None,
        *,
        agent_ids: Sequence[str] | None = None,
        keywords: str | None = None,
        trust: str | Iterable[str] | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        types: str | Iterable[str] | None = None,
        status: bool | None = None,
        forgotten: bool | None = None,
        origin: str | Iterable[str] | None = None,
        recorded_since: datetime | str | None = None,
        recorded_before: datetime | str | None = None,
        valid_since: datetime | str | None = None,
        valid_before: datetime | str | None = None,
        page: int = 1,
        page_size: int = 50,
    ) -> MessagePage:
        """Raw turns newest first, filtered by ``where`` or by the filter keywords."""
        args = dict(locals())
        for name in ("self", "memory_id", "where", "page", "page_size"):
            del args[name]
        chosen = message_filter(where, args)
        return self.engine.list_messages(
            self.principal, memory_id, chosen, page=page, page_size=page_size
        )

    jobs = _bound(Engine.jobs)
    retry_extraction = _bound(Engine.retry_extraction)
    retry_failed_extraction = _bound(Engine.retry_failed_extraction)
    test_chat_model = _bound(Engine.test_chat_model)
    export_memory = _bound(Engine.export_memory)
    import_memory = _bound(Engine.import_memory)

    # --- turns, search and one entry's life
    def add_turn(
        self,
        memory_ids: Sequence[str],
        *,
        user_input: str,
        agent_response: str,
        agent_id: str = "",
        session_id: str = "",
        user_id: str | None = None,
        conversation_time: datetime | str | None = None,
    ) -> list[Entry]:
        """Store a conversation turn in each memory; ``user_id`` None (or empty): the
        caller's own, as ``POST /messages`` reads it."""
        me = self.principal
        return self.engine.add_turn(
            me,
            memory_ids,
            user_input=user_input,
            agent_response=agent_response,
            user_id=user_id or me.user_id,
            agent_id=agent_id,
            session_id=session_id,
            conversation_time=conversation_time,
        )

    def search(
        self, query: str | SearchRequest, memory_ids: Sequence[str] | None = None, **knobs: Any
    ) -> list[Hit]:
        """Hybrid search, best first: a :class:`SearchRequest`, or its fields (the SDK's
        keywords, one per declared knob)."""
        return self.engine.search(self.principal, search_request(query, memory_ids, knobs))

    def context(
        self,
        query: str | SearchRequest,
        memory_ids: Sequence[str] | None = None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        **knobs: Any,
    ) -> Context:
        """A token-bounded block of the best entries, the search as in :meth:`search`."""
        request = search_request(query, memory_ids, knobs)
        return self.engine.context(self.principal, request, max_tokens)

    search.__signature__ = search_signature(search)  # type: ignore[attr-defined]
    context.__signature__ = search_signature(context)  # type: ignore[attr-defined]

    recent = _bound(Engine.recent)
    get_entry = _bound(Engine.get_entry)
    set_status = _bound(Engine.set_status)
    forget = _bound(Engine.forget)
    restore = _bound(Engine.restore)
    review = _bound(Engine.review)
    correct = _bound(Engine.correct)
    reinstate = _bound(Engine.reinstate)
    erase = _bound(Engine.erase)
    history = _bound(Engine.history)
    evidence = _bound(Engine.evidence)

    # --- accounts and the audit log
    def audit_log(
        self,
        where: AuditFilter | None = None,
        *,
        memory_id: str | None = None,
        message_id: int | None = None,
        actor_id: str | None = None,
        action: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        page: int = 1,
        page_size: int = 30,
    ) -> Page[AuditEvent]:
        """Audit events newest first, filtered by ``where`` or its fields as keywords
        (:class:`~recallery.requests.AuditFilter`), paged as the SDK pages them."""
        given = {"memory_id": memory_id, "message_id": message_id, "actor_id": actor_id}
        f = audit_filter(where, {**given, "action": action, "since": since, "until": until})
        size = v.top_n(page_size, "page_size")
        return self.engine.audit_log(
            self.principal,
            memory_id=f.memory_id,
            message_id=f.message_id,
            actor_id=f.actor_id,
            action=f.action,
            since=f.since,
            until=f.until,
            limit=size,
            offset=(v.page(page) - 1) * size,
        )

    def create_user(self, name: str, *, admin: bool = False) -> User:
        """Create a user (an administrator's operation)."""
        return self.engine.add_user(self.principal, name, admin=admin)

    list_users = _bound(Engine.list_users)
    create_api_key = _bound(Engine.create_api_key)
    list_api_keys = _bound(Engine.list_api_keys)
    revoke_api_key = _bound(Engine.revoke_api_key)
    join_team = _bound(Engine.join_team)
    team_members = _bound(Engine.team_members)
    leave_team = _bound(Engine.leave_team)

    # --- what agents state, curation, data subjects
    add_entries = _bound(Engine.add_entries)
    task_status = _bound(Engine.task_status)
    bulk = _bound(Engine.bulk)
    review_queue = _bound(Engine.review_queue)
    facts = _bound(Engine.facts)
    timeline = _bound(Engine.timeline)
    forget_subject = _bound(Engine.forget_subject)
    erase_subject = _bound(Engine.erase_subject)
    list_subjects = _bound(Engine.list_subjects)
    people = _bound(Engine.people)

    # --- the request log
    def request_log(
        self,
        where: RequestQuery | None = None,
        *,
        key: str | None = None,
        user: str | None = None,
        route: str | None = None,
        status: int | None = None,
        slow: float | None = None,
        memory: str | None = None,
        entry: int | None = None,
        page: int = 1,
        page_size: int = 30,
    ) -> Page[LoggedRequest]:
        """Logged requests, newest first, filtered as ``GET /admin/requests`` filters them."""
        given = locals()
        fields = requestlog.request_filter_fields()
        values = {s.metadata["wire"]: given[s.metadata["arg"]] for s in fields}
        if where is not None:
            alone(where, values)
            values = requestlog.query_filters(where)
        size = v.top_n(page_size, "page_size")
        q = requestlog.parse_query(_texts(values), limit=size, offset=(v.page(page) - 1) * size)
        found, total = self.engine.request_log(self.principal, q)
        return Page(tuple(found), total)

    def requests(
        self,
        where: RequestQuery | None = None,
        *,
        key: str | None = None,
        user: str | None = None,
        route: str | None = None,
        status: int | None = None,
        slow: float | None = None,
        memory: str | None = None,
        entry: int | None = None,
        page: int = 1,
        page_size: int = 30,
    ) -> Page[LoggedRequest]:
        """Deprecated: :meth:`request_log`'s old name, kept one release; it warns."""
        warnings.warn("requests is deprecated: use request_log", DeprecationWarning, stacklevel=2)
        return self.request_log(
            where,
            key=key,
            user=user,
            route=route,
            status=status,
            slow=slow,
            memory=memory,
            entry=entry,
            page=page,
            page_size=page_size,
        )

    entry_reads = _bound(Engine.entry_reads)


def _texts(values: Mapping[str, object]) -> dict[str, str | None]:
    """Filters as a query string carries them (what :func:`requestlog.parse_query` reads)."""
    return {k: None if value is None else str(value) for k, value in values.items()}


#: The SDK's operations an engine in this process has no form of (the server's liveness).
SERVER_ONLY = ("health",)

__all__ = ["SERVER_ONLY", "Acting"]
