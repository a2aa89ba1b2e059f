"""Deprecated: moved to :mod:`recallery.web.edge.declared`, the HTTP edge that REST, the web UI and
MCP share (issue 56); this name stays one release as an alias of that module, and warns on
import."""

from __future__ import annotations

import sys
import warnings

from recallery.web.edge import declared

warnings.warn(
    "recallery.api.declared moved: import recallery.web.edge.declared",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = declared
