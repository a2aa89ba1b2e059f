"""Deprecated: the data-subject module's old name, kept as an alias for one release (issue 56).

Its types moved to :mod:`recallery.requests.subjects`, the receipt's JSON and text to
:mod:`recallery.wire.subjects` (``receipt_dict`` and ``receipt_from_dict`` are
``subject_receipt_dict`` and ``subject_receipt_from_dict`` there); import them from there.
Importing this module warns (``DeprecationWarning``); it will be removed in the next release.
"""

from __future__ import annotations

import warnings

from recallery.requests.subjects import (
    Changed,
    MemoryShare,
    Refused,
    SubjectAction,
    SubjectKind,
    SubjectMemory,
    SubjectProfile,
    SubjectReceipt,
    subject_action,
    subject_kind,
)
from recallery.wire.subjects import SCRUB_DUE, receipt_lines
from recallery.wire.subjects import subject_receipt_dict as receipt_dict
from recallery.wire.subjects import subject_receipt_from_dict as receipt_from_dict

warnings.warn(
    "recallery.subjects moved: import its types from recallery.requests.subjects and the "
    "receipt's shapes from recallery.wire.subjects",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "SCRUB_DUE",
    "Changed",
    "MemoryShare",
    "Refused",
    "SubjectAction",
    "SubjectKind",
    "SubjectMemory",
    "SubjectProfile",
    "SubjectReceipt",
    "receipt_dict",
    "receipt_from_dict",
    "receipt_lines",
    "subject_action",
    "subject_kind",
]
