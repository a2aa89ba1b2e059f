"""Deprecated: the whose-fact rule moved to :mod:`recallery.ownership`, a pure rule of the
kernel that the store checks too; this name stays one release as an alias of that module
(issue 56), and warns on import."""

from __future__ import annotations

import sys
import warnings

from recallery import ownership

warnings.warn(
    "recallery.policies.people moved: import recallery.ownership", DeprecationWarning, stacklevel=2
)
sys.modules[__name__] = ownership
