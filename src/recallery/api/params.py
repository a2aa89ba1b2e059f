"""Deprecated: moved to :mod:`recallery.web.edge.params`, the HTTP edge that REST, the web UI and
MCP share (issue 56); this name stays one release as an alias of that module, and warns on
import."""

from __future__ import annotations

import sys
import warnings

from recallery.web.edge import params

warnings.warn(
    "recallery.api.params moved: import recallery.web.edge.params", DeprecationWarning, stacklevel=2
)
sys.modules[__name__] = params
