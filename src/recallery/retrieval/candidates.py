"""Deprecated: what a search gathers moved to :mod:`recallery.requests.gathered`, plain data
the store fills and ranking reads; this name stays one release as an alias of that module
(issue 56), and warns on import."""

from __future__ import annotations

import sys
import warnings

from recallery.requests import gathered

warnings.warn(
    "recallery.retrieval.candidates moved: import recallery.requests.gathered",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = gathered
