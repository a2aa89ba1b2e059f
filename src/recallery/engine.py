"""The facade: every operation a user can do, with its permission check, audit event and
transaction. REST, MCP, CLI, UI and jobs call this and nothing lower.

:class:`Engine` is one plain class over services, each built with only what it needs; its
public methods are theirs, named here once (``create_memory = _via(...)``), so a reader finds
every operation in this file and its body in the service that owns it:

=====================  ===========================================================
service                operations
=====================  ===========================================================
``MemoryService``      create, get, list, update and delete memories
``EntryService``       add turns and messages; list, recent, get, history, evidence
``LifecycleService``   enable/disable, forget/restore, review, correct, reinstate, erase
``SearchService``      search, context (:mod:`recallery.services.search`)
``AccountService``     users, teams, API keys, authentication
``ActivityService``    audit log, jobs, extraction costs, an erased entry's tombstone
``ExtractionService``  test a memory's chat model, re-run extraction (a turn, failed jobs)
``TransferService``    export and import
``StatementService``   entries agents state directly (reconciled), a turn's task status
``CurationService``    bulk changes with a dry run, the review queue, facts, entries over time
``StatsService``       the store's counts for an operator (``/metrics``)
``SubjectService``     data subjects: forget or erase everything about a user; the
                       users, agents and sessions a caller may browse, and their pages
``RequestLog``         the request log: who read what (:mod:`recallery.services.requestlog`)
=====================  ===========================================================

An operation renamed keeps its old name one release (:func:`_renamed`: it warns): ``people``
is ``list_subjects``, ``requests`` is ``request_log`` (issue 56: one name per feature).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from recallery.clock import Clock, SystemClock
from recallery.extraction.pipeline import Extraction
from recallery.jobs import Handler
from recallery.models import JobKind, Principal
from recallery.providers.registry import ModelRegistry
from recallery.requests import MessagePage, SearchRequest, TurnInput
from recallery.requests.requestlog import Call, EntryReads
from recallery.retrieval.usage import UsageRecorder
from recallery.services.accounts import AccountService
from recallery.services.activity import ActivityService
from recallery.services.curation import CurationService
from recallery.services.entries import EntryService
from recallery.services.extraction import ExtractionService
from recallery.services.lifecycle import LifecycleService
from recallery.services.memories import MemoryService
from recallery.services.repair import RepairService
from recallery.services.requestlog import RequestLog
from recallery.services.search import SearchService
from recallery.services.statements import StatementService
from recallery.services.stats import StatsService
from recallery.services.subjects import SubjectService
from recallery.services.transfer import TransferService
from recallery.settings import Settings
from recallery.store.base import Store

S = TypeVar("S")
P = ParamSpec("P")
R = TypeVar("R")


def _via(service: str, method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[Any, P], R]:
    """An engine method that calls ``method`` on the engine's ``service`` attribute."""

    @functools.wraps(method)
    def call(engine: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(getattr(engine, service), *args, **kwargs)

    return call


def _renamed(method: Callable[P, R], old: str, new: str) -> Callable[P, R]:
    """``method`` (named ``new``) under its old name ``old``, kept one release: it warns
    (``DeprecationWarning``), then does the same."""

    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        warnings.warn(f"{old} is deprecated: use {new}", DeprecationWarning, stacklevel=2)
        return method(*args, **kwargs)

    call.__name__ = call.__qualname__ = old
    return call


class Engine:
    """recallery's operations over one store, one model registry and one clock."""

    def __init__(
        self,
        store: Store,
        *,
        models: ModelRegistry | None = None,
        clock: Clock | None = None,
        settings: Settings | None = None,
    ) -> None:
        self.store = store
        self.settings = settings or Settings()
        self.models = models or ModelRegistry(
            self.settings.providers,
            chat_timeout=self.settings.chat_timeout_s,
            embed_threads=self.settings.embed_threads,
        )
        self.clock = clock or SystemClock()
        #: Where searches, model calls, jobs and warm-up report (``/metrics``, traces).
        self.observer = self.models.observer
        self.usage = UsageRecorder(store)
        models_, clock_ = self.models, self.clock
        self._memories = MemoryService(store, models_, clock_, self.settings)
        self._entries = EntryService(store, models_, clock_)
        self._lifecycle = LifecycleService(store, models_, clock_)
        #: The request log's writer and reader (reading it is :meth:`request_log`).
        self.request_recorder = RequestLog(store, clock_, self.settings)
        # what a search retrieved: the use counts, and the current call in the request log
        heard = (self.usage.retrieved, self.request_recorder.retrieved)
        self._search = SearchService(store, models_, clock_, self.settings, heard)
        self._accounts = AccountService(store, clock_)
        self._activity = ActivityService(store, self._memories)
        self._statements = StatementService(store, models_, clock_)
        self._extraction = ExtractionService(store, models_, clock_)
        self._transfer = TransferService(store, clock_, self._memories, self._entries)
        self._curation = CurationService(store, clock_, self._lifecycle)
        self._stats = StatsService(store)
        self._subjects = SubjectService(store, clock_)
        self._repair = RepairService(store, clock_)

    @classmethod
    def open(cls, data_dir: str | Path = "data", **kwargs: Any) -> Engine:
        """An engine on the store ``settings`` name (SQLite in ``data_dir`` by default)."""
        from recallery.store import open_store

        settings: Settings = kwargs.pop("settings", None) or Settings(data_dir=Path(data_dir))
        return cls(open_store(settings), settings=settings, **kwargs)

    def job_handlers(self) -> Mapping[str, Handler]:
        """The handler of each job kind the engine enqueues (what a worker runs)."""
        extraction = Extraction(
            self.store, self.models, self.clock, self.settings.max_items_per_type
        )
        return {JobKind.EXTRACTION: extraction}

    def warm(self) -> None:
        """Build the store's in-process search indexes now rather than at the first search."""
        with self.observer.timed("warmup"):
            self.store.warm()

    def close(self) -> None:
        self.usage.close()
        self.request_recorder.close()
        self.store.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- memories
    create_memory = _via("_memories", MemoryService.create_memory)
    get_memory = _via("_memories", MemoryService.get_memory)
    memory_warnings = _via("_memories", MemoryService.memory_warnings)
    written_warnings = _via("_memories", MemoryService.written_warnings)
    list_memories = _via("_memories", MemoryService.list_memories)
    update_memory = _via("_memories", MemoryService.update_memory)
    delete_memory = _via("_memories", MemoryService.delete_memory)

    # --- entries in and out
    add_turn = _via("_entries", EntryService.add_turn)
    add_messages = _via("_entries", EntryService.add_messages)
    list_messages = _via("_entries", EntryService.list_messages)
    recent = _via("_entries", EntryService.recent)
    get_entry = _via("_entries", EntryService.get_entry)
    history = _via("_entries", EntryService.history)
    evidence = _via("_entries", EntryService.evidence)

    # --- lifecycle
    set_status = _via("_lifecycle", LifecycleService.set_status)
    forget = _via("_lifecycle", LifecycleService.forget)
    restore = _via("_lifecycle", LifecycleService.restore)
    review = _via("_lifecycle", LifecycleService.review)
    correct = _via("_lifecycle", LifecycleService.correct)
    erase = _via("_lifecycle", LifecycleService.erase)
    reinstate = _via("_lifecycle", LifecycleService.reinstate)

    # --- what agents state directly, and the extraction job of a turn
    add_entries = _via("_statements", StatementService.add_entries)
    task_status = _via("_statements", StatementService.task_status)

    # --- the chat model tried, extraction re-run
    test_chat_model = _via("_extraction", ExtractionService.test_chat_model)
    retry_extraction = _via("_extraction", ExtractionService.retry_extraction)
    retry_failed_extraction = _via("_extraction", ExtractionService.retry_failed_extraction)

    # --- search
    search = _via("_search", SearchService.search)
    context = _via("_search", SearchService.context)
    try_out = _via("_search", SearchService.try_out)

    # --- accounts
    create_user = _via("_accounts", AccountService.create_user)
    add_user = _via("_accounts", AccountService.add_user)
    ensure_user = _via("_accounts", AccountService.ensure_user)
    list_users = _via("_accounts", AccountService.list_users)
    user_names = _via("_accounts", AccountService.user_names)
    principal = _via("_accounts", AccountService.principal)
    authenticate = _via("_accounts", AccountService.authenticate)
    ensure_admin = _via("_accounts", AccountService.ensure_admin)
    create_api_key = _via("_accounts", AccountService.create_api_key)
    register_api_key = _via("_accounts", AccountService.register_api_key)
    list_api_keys = _via("_accounts", AccountService.list_api_keys)
    key_scopes = _via("_accounts", AccountService.key_scopes)
    revoke_api_key = _via("_accounts", AccountService.revoke_api_key)
    join_team = _via("_accounts", AccountService.join_team)
    leave_team = _via("_accounts", AccountService.leave_team)
    team_members = _via("_accounts", AccountService.team_members)

    # --- activity, export and import
    audit_log = _via("_activity", ActivityService.audit_log)
    jobs = _via("_activity", ActivityService.jobs)
    extraction_costs = _via("_activity", ActivityService.extraction_costs)
    tombstone = _via("_activity", ActivityService.tombstone)
    store_counts = _via("_stats", StatsService.store_counts)
    export_memory = _via("_transfer", TransferService.export_memory)
    import_memory = _via("_transfer", TransferService.import_memory)

    # --- curation
    bulk = _via("_curation", CurationService.bulk)
    review_queue = _via("_curation", CurationService.review_queue)
    facts = _via("_curation", CurationService.facts)
    timeline = _via("_curation", CurationService.timeline)

    # --- data subjects: everything about one user, agent or session
    forget_subject = _via("_subjects", SubjectService.forget_subject)
    erase_subject = _via("_subjects", SubjectService.erase_subject)
    subject_profile = _via("_subjects", SubjectService.subject_profile)
    list_subjects = _via("_subjects", SubjectService.list_subjects)
    people = _renamed(list_subjects, "people", "list_subjects")
    repair_links = _via("_repair", RepairService.repair_links)

    # --- the request log: who read what
    request_log = _via("request_recorder", RequestLog.requests)
    requests = _renamed(request_log, "requests", "request_log")

    def describe_model(self, model_id: str) -> str:
        """What a model id resolves to (``@Builtin``: which local model), for the forms."""
        return self.models.describe(model_id)

    def model_resolution(self, model_id: str) -> str:
        """What a model id resolves to, as a sentence; for an unconfigured provider, which
        environment variable to set."""
        return self.models.resolution(model_id)

    def offered_models(self) -> tuple[str, ...]:
        """Model ids the forms offer: the local embedders, then one per configured provider."""
        return self.models.offered()

    def log_request(self, call: Call, status: int, latency_ms: float) -> None:
        """Queue one answered call for the request log (written off the request path)."""
        self.request_recorder.record(call, status, latency_ms)

    def entry_reads(self, actor: Principal, memory_id: object, message_id: object) -> EntryReads:
        """An entry's access history from the request log, for a caller who may read it."""
        entry, _ = self.get_entry(actor, memory_id, message_id)
        return self.request_recorder.entry_reads(actor, entry.message_id, entry.use_count)


__all__ = ["Engine", "MessagePage", "SearchRequest", "TurnInput"]
