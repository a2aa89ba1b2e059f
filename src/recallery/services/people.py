"""Deprecated: the People listing's old service module, kept as an alias for one release
(issue 56). The listing is :meth:`recallery.services.subjects.SubjectService.list_subjects`
(one name for the feature: subjects, the people entries are about). Importing this module
warns (``DeprecationWarning``); it will be removed in the next release."""

from __future__ import annotations

import warnings

from recallery.clock import SystemClock
from recallery.models import Page, Principal
from recallery.requests.subjects import Person
from recallery.services.subjects import MAX_PAGE_SIZE, SubjectService
from recallery.store.base import Store

warnings.warn(
    "recallery.services.people moved: the listing is SubjectService.list_subjects in "
    "recallery.services.subjects",
    DeprecationWarning,
    stacklevel=2,
)


class PeopleService:
    """The old listing service: :meth:`SubjectService.list_subjects` under its old name."""

    def __init__(self, store: Store) -> None:
        self._subjects = SubjectService(store, SystemClock())

    def people(
        self,
        actor: Principal,
        kind: object = "user",
        *,
        keywords: object = None,
        page: object = 1,
        page_size: object = 30,
    ) -> Page[Person]:
        return self._subjects.list_subjects(
            actor, kind, keywords=keywords, page=page, page_size=page_size
        )


__all__ = ["MAX_PAGE_SIZE", "PeopleService"]
