"""Deprecated: the People listing's old module, kept as an alias for one release (issue 56).

:class:`Person` moved to :mod:`recallery.requests.subjects` (one name for the feature:
subjects, the people entries are about); its JSON is :mod:`recallery.wire.subjects`'. Importing
this module warns (``DeprecationWarning``); it will be removed in the next release.
"""

from __future__ import annotations

import warnings

from recallery.requests.subjects import Person

warnings.warn(
    "recallery.people moved: import Person from recallery.requests.subjects",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["Person"]
