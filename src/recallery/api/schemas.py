"""Deprecated: moved to :mod:`recallery.web.edge.schemas`, the HTTP edge that REST, the web UI and
MCP share (issue 56); this name stays one release as an alias of that module, and warns on
import."""

from __future__ import annotations

import sys
import warnings

from recallery.web.edge import schemas

warnings.warn(
    "recallery.api.schemas moved: import recallery.web.edge.schemas",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = schemas
