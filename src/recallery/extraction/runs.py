"""Deprecated: what a chat model check and a retried extraction answer moved to
:mod:`recallery.requests.runs`, beside the other results adapters read; this name stays one
release as an alias of that module (issue 56), and warns on import."""

from __future__ import annotations

import sys
import warnings

from recallery.requests import runs

warnings.warn(
    "recallery.extraction.runs moved: import recallery.requests.runs",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = runs
