"""The facade: every operation a user can do, with its permission check, audit event and
transaction. REST, MCP, CLI, UI and jobs call this and nothing lower."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memstrata.clock import Clock, SystemClock
from memstrata.facade.accounts import Accounts
from memstrata.facade.core import (
    EXTRACTION_JOB,
    MEMORY_UPDATABLE,
    MessagePage,
    SearchRequest,
    TurnInput,
    hash_key,
)
from memstrata.facade.operations import Operations
from memstrata.facade.searching import Searching
from memstrata.providers.registry import ModelRegistry
from memstrata.retrieval.usage import UsageRecorder
from memstrata.settings import Settings
from memstrata.store.base import Store


class Engine(Accounts, Searching, Operations):
    """memstrata's operations over one store, one model registry and one clock."""

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
            self.settings.providers, chat_timeout=self.settings.chat_timeout_s
        )
        self.clock = clock or SystemClock()
        self.usage = UsageRecorder(store)

    @classmethod
    def open(cls, data_dir: str | Path = "data", **kwargs: Any) -> Engine:
        """An engine on the store ``settings`` name (SQLite in ``data_dir`` by default)."""
        from memstrata.store import open_store

        settings: Settings = kwargs.pop("settings", None) or Settings(data_dir=Path(data_dir))
        return cls(open_store(settings), settings=settings, **kwargs)

    def warm(self) -> None:
        """Build the store's in-process search indexes now rather than at the first search."""
        self.store.warm()

    def close(self) -> None:
        self.usage.close()
        self.store.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = [
    "EXTRACTION_JOB",
    "MEMORY_UPDATABLE",
    "Engine",
    "MessagePage",
    "SearchRequest",
    "TurnInput",
    "hash_key",
]
