"""The PostgreSQL store against the conformance suite, plus what only PostgreSQL has to show."""

from __future__ import annotations

import pytest

from memstrata.store.postgres import PostgresStore
from memstrata.store.postgres.conn import translate
from memstrata.testing.conformance import StoreConformance

pytestmark = pytest.mark.postgres


class TestPostgresConformance(StoreConformance):
    @pytest.fixture
    def store(self, postgres_store: PostgresStore) -> PostgresStore:
        return postgres_store


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT ? WHERE a = ?", "SELECT %s WHERE a = %s"),
        ("SELECT '?' , ?", "SELECT '?' , %s"),
        ("x LIKE ? ESCAPE '!'", "x LIKE %s ESCAPE '!'"),
        ("SELECT 'it''s ?', \"we?ird\", ?", "SELECT 'it''s ?', \"we?ird\", %s"),
        ("SELECT $$ ? $$, $tag$ ?'$tag$, ?", "SELECT $$ ? $$, $tag$ ?'$tag$, %s"),
        ("SELECT 1 -- ?\n, ? /* ? */", "SELECT 1 -- ?\n, %s /* ? */"),
        ("SELECT 5 % ?, '50%'", "SELECT 5 %% %s, '50%%'"),
        ("SELECT $1", "SELECT $1"),
    ],
)
def test_placeholders_translate_only_outside_literals(sql: str, expected: str) -> None:
    assert translate(sql) == expected
