"""Deprecated: the request log's old module, kept as an alias for one release (issue 56).

Its types and the current call moved to :mod:`recallery.requests.requestlog`, its JSON
shapes to :mod:`recallery.wire.requestlog`; import them from there. Importing this module
warns (``DeprecationWarning``); it will be removed in the next release.
"""

from __future__ import annotations

import warnings

from recallery.requests.requestlog import (
    CHANNELS,
    FILTERS,
    NAMED,
    NUMBERS,
    RETURNED,
    Call,
    EntryReads,
    KeyReads,
    LoggedRequest,
    RequestQuery,
    begin,
    current,
    note_caller,
    note_search,
    parse_query,
    query_filters,
)
from recallery.wire.requestlog import (
    entry_reads_dict,
    entry_reads_from_dict,
    request_dict,
    request_from_dict,
    requests_page_dict,
    requests_page_from_dict,
)

warnings.warn(
    "recallery.requestlog moved: import its types from recallery.requests.requestlog and its "
    "JSON shapes from recallery.wire.requestlog",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "CHANNELS",
    "FILTERS",
    "NAMED",
    "NUMBERS",
    "RETURNED",
    "Call",
    "EntryReads",
    "KeyReads",
    "LoggedRequest",
    "RequestQuery",
    "begin",
    "current",
    "entry_reads_dict",
    "entry_reads_from_dict",
    "note_caller",
    "note_search",
    "parse_query",
    "query_filters",
    "request_dict",
    "request_from_dict",
    "requests_page_dict",
    "requests_page_from_dict",
]
