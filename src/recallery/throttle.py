"""Deprecated: moved to :mod:`recallery.web.edge.throttle`, beside the guard that uses it (issue
56); this name stays one release as an alias of that module, and warns on import."""

from __future__ import annotations

import sys
import warnings

from recallery.web.edge import throttle

warnings.warn(
    "recallery.throttle moved: import recallery.web.edge.throttle", DeprecationWarning, stacklevel=2
)
sys.modules[__name__] = throttle
