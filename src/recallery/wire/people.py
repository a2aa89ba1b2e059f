"""Deprecated: the People listing's old JSON module, kept as an alias for one release (issue
56). The listing's shapes are :mod:`recallery.wire.subjects`' (``GET /subjects`` answers its
rows under ``subjects``); these read and write the old ``GET /people`` page, its rows under
``people``. Importing this module warns (``DeprecationWarning``)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from recallery.models import Page
from recallery.requests.subjects import Person
from recallery.wire.envelope import Json
from recallery.wire.subjects import (
    person_dict,
    person_from_dict,
    subjects_page_dict,
    subjects_page_from_dict,
)

warnings.warn(
    "recallery.wire.people moved: the listing's shapes are in recallery.wire.subjects",
    DeprecationWarning,
    stacklevel=2,
)


def people_page_dict(page: Page[Person]) -> Json:
    return subjects_page_dict(page, "people")


def people_page_from_dict(d: Mapping[str, Any]) -> Page[Person]:
    return subjects_page_from_dict(d, "people")


__all__ = ["people_page_dict", "people_page_from_dict", "person_dict", "person_from_dict"]
