"""The one event a search emits: what it handed to its caller.

An agent's search or context (:meth:`~recallery.services.search.SearchService.search`) emits
one :class:`Retrieved` to its listeners once ranked; a person trying a query in the web
playground (``try_out``) emits none. Its listeners record what a request did: the use
counts LRU eviction reads (:class:`~recallery.retrieval.usage.UsageRecorder`) and the
current call's record in the request log
(:meth:`~recallery.services.requestlog.RequestLog.retrieved`). Both read the same event, so
within the log's retention an entry's ``returned`` count equals what its use count gained.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Retrieved:
    """A search returned ``entry_ids`` (best first) at ``at`` for ``query`` over the memories
    the caller named."""

    query: str
    memory_ids: tuple[str, ...]
    entry_ids: tuple[int, ...]
    at: datetime


#: Who hears of a :class:`Retrieved` (called on the searching thread, in its context).
RetrievalListener = Callable[[Retrieved], None]

__all__ = ["RetrievalListener", "Retrieved"]
