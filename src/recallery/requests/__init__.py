"""Typed inputs and results of engine operations: what adapters (REST, SDK, CLI, UI, MCP) build
and read. They live in the model layer, beside :mod:`recallery.models`, so a client can use them
without importing the engine; their defaults are written here and nowhere else.

- :mod:`~recallery.requests.search`: the search request (every knob declared once) and the
  context block;
- :mod:`~recallery.requests.messages`: turns in, pages out, the Messages filter, stated
  entries;
- :mod:`~recallery.requests.curation`: bulk changes, the review queue, the Facts filter and
  its page, timelines;
- :mod:`~recallery.requests.audit`: the audit log's filter;
- :mod:`~recallery.requests.transfer`: what an import wrote;
- :mod:`~recallery.requests.requestlog`: the request log's query, rows and the call being
  answered.
"""

from __future__ import annotations

from recallery.requests.audit import AuditFilter, audit_filter_fields
from recallery.requests.curation import (
    MAX_BUCKETS,
    Bucket,
    BulkAction,
    BulkResult,
    FactFilter,
    FactPage,
    ReviewFilter,
    ReviewItem,
    ReviewPage,
    Timeline,
    TimelineClock,
    bucket,
    bucket_starts,
    bulk_action,
    fact_filter_fields,
    review_filter_fields,
    timeline_clock,
)
from recallery.requests.messages import (
    MEMORY_UPDATABLE,
    AddedEntries,
    EntryInput,
    EntryOutcome,
    MessageFilter,
    MessagePage,
    TurnInput,
    job_entry_ids,
    message_filter_fields,
)
from recallery.requests.search import (
    DEFAULT_CONTEXT_LENGTH,
    DEFAULT_FUSION,
    DEFAULT_KEYWORD_WEIGHT,
    DEFAULT_MAX_TOKENS,
    DEFAULT_RECENCY_BAND,
    DEFAULT_RECENCY_PLAIN,
    DEFAULT_RECENCY_WEIGHT,
    DEFAULT_SIMILARITY_THRESHOLD,
    DEFAULT_SUPERSESSION,
    DEFAULT_TOP_N,
    Context,
    SearchRequest,
    search_fields,
    search_knobs,
)
from recallery.requests.transfer import ImportReport

__all__ = [
    "DEFAULT_CONTEXT_LENGTH",
    "DEFAULT_FUSION",
    "DEFAULT_KEYWORD_WEIGHT",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_RECENCY_BAND",
    "DEFAULT_RECENCY_PLAIN",
    "DEFAULT_RECENCY_WEIGHT",
    "DEFAULT_SIMILARITY_THRESHOLD",
    "DEFAULT_SUPERSESSION",
    "DEFAULT_TOP_N",
    "MAX_BUCKETS",
    "MEMORY_UPDATABLE",
    "AddedEntries",
    "AuditFilter",
    "Bucket",
    "BulkAction",
    "BulkResult",
    "Context",
    "EntryInput",
    "EntryOutcome",
    "FactFilter",
    "FactPage",
    "ImportReport",
    "MessageFilter",
    "MessagePage",
    "ReviewFilter",
    "ReviewItem",
    "ReviewPage",
    "SearchRequest",
    "Timeline",
    "TimelineClock",
    "TurnInput",
    "audit_filter_fields",
    "bucket",
    "bucket_starts",
    "bulk_action",
    "fact_filter_fields",
    "job_entry_ids",
    "message_filter_fields",
    "review_filter_fields",
    "search_fields",
    "search_knobs",
    "timeline_clock",
]
