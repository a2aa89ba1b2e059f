"""The store conformance suite: every backend runs these tests unchanged.

Subclass :class:`StoreConformance` in a test module and provide a ``store`` fixture that
yields a fresh, migrated, empty store::

    class TestSQLite(StoreConformance):
        @pytest.fixture
        def store(self, tmp_path):
            s = SQLiteStore(tmp_path / "db.sqlite")
            yield s
            s.close()

One module per area (schema, memories, entries and filters, data subjects, search, languages,
lifecycle, jobs, accounts), each a class of tests a backend may also run alone. Every filter
test seeds entries the filter must exclude and checks they are absent.
"""

from __future__ import annotations

import warnings

from recallery.testing.conformance.accounts import AccountConformance
from recallery.testing.conformance.entries import EntryConformance
from recallery.testing.conformance.jobs import JobConformance
from recallery.testing.conformance.languages import LanguageConformance
from recallery.testing.conformance.lifecycle import LifecycleConformance
from recallery.testing.conformance.memories import MemoryConformance
from recallery.testing.conformance.schema import SchemaConformance
from recallery.testing.conformance.search import SearchConformance
from recallery.testing.conformance.subjects import SubjectConformance
from recallery.testing.conformance.support import DIM, T0, make_memory, new_entry, unit


class StoreConformance(
    SchemaConformance,
    MemoryConformance,
    EntryConformance,
    SubjectConformance,
    SearchConformance,
    LanguageConformance,
    LifecycleConformance,
    JobConformance,
    AccountConformance,
):
    """Behaviour every :class:`~recallery.store.base.Store` must have. Needs a ``store``
    fixture."""


__all__ = [
    "DIM",
    "T0",
    "AccountConformance",
    "EntryConformance",
    "JobConformance",
    "LanguageConformance",
    "LifecycleConformance",
    "MemoryConformance",
    "SchemaConformance",
    "SearchConformance",
    "StoreConformance",
    "SubjectConformance",
    "make_memory",
    "new_entry",
    "unit",
]


def __getattr__(name: str) -> object:
    """``PeopleConformance``: the old name of :class:`SubjectConformance`, kept one release
    (issue 56); it warns."""
    if name == "PeopleConformance":
        warnings.warn(
            "PeopleConformance is now SubjectConformance", DeprecationWarning, stacklevel=2
        )
        return SubjectConformance
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
