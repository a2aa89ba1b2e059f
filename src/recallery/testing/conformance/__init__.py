"""The store conformance suite: every backend runs these tests unchanged.

Subclass :class:`StoreConformance` in a test module and provide a ``store`` fixture that
yields a fresh, migrated, empty store::

    class TestSQLite(StoreConformance):
        @pytest.fixture
        def store(self, tmp_path):
            s = SQLiteStore(tmp_path / "db.sqlite")
            yield s
            s.close()

One module per area (schema, memories, entries and filters, people, search, languages,
lifecycle, jobs, accounts), each a class of tests a backend may also run alone. Every filter
test seeds entries the filter must exclude and checks they are absent.
"""

from __future__ import annotations

from recallery.testing.conformance.accounts import AccountConformance
from recallery.testing.conformance.entries import EntryConformance
from recallery.testing.conformance.jobs import JobConformance
from recallery.testing.conformance.languages import LanguageConformance
from recallery.testing.conformance.lifecycle import LifecycleConformance
from recallery.testing.conformance.memories import MemoryConformance
from recallery.testing.conformance.people import PeopleConformance
from recallery.testing.conformance.schema import SchemaConformance
from recallery.testing.conformance.search import SearchConformance
from recallery.testing.conformance.support import DIM, T0, make_memory, new_entry, unit


class StoreConformance(
    SchemaConformance,
    MemoryConformance,
    EntryConformance,
    PeopleConformance,
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
    "PeopleConformance",
    "SchemaConformance",
    "SearchConformance",
    "StoreConformance",
    "make_memory",
    "new_entry",
    "unit",
]
