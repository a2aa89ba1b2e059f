"""Arabic keywords light-stemmed (issue 52): a word is one term with and without its article,
fused preposition or common suffix, on both stores alike; a PostgreSQL database written before
gets its Arabic rows' documents made again by migration 24, and only those rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.keywords import found_on_sqlite, remade_by_migration

from recallery.text.analyzer import query_terms
from recallery.text.arabic import stem

#: (user, text): three people in one memory, two writing Arabic, one English and Russian.
TURNS = [
    ("layla", "أعزف على الكمان كل عطلة نهاية أسبوع"),
    ("omar", "طعامي المفضل هو الفطائر"),
    ("anna", "I play the violin in an orchestra."),
    ("layla", "أحب تعلم الآلة كثيرا"),
    ("omar", "ذهب المعلمون إلى المدرسة بالسيارة"),
    ("anna", "Я играю на скрипке."),
]
#: A query in another form than the text holds, and the turn it must find first.
FORMS = {"كمان": 0, "فطائر": 1, "آلة": 3, "معلمين": 4, "السيارات": 4}


@pytest.mark.parametrize(
    ("forms", "term"),
    [
        (["كتاب", "الكتاب", "والكتاب", "بالكتاب", "كتابه", "كتابها", "للكتاب"], "كتاب"),
        (["معلم", "المعلم", "المعلمون", "المعلمين", "معلمات"], "معلم"),
        (["كمان", "الكمان"], "كم"),
        (["فطائر", "الفطائر"], "فطاير"),
        (["مستشفى", "المستشفى"], "مستشف"),
        (["وعد"], "وعد"),  # three letters: و is part of the word
        (["ال"], "ال"),  # never fewer than two letters
    ],
)
def test_an_arabic_word_is_one_term_in_its_forms(forms: list[str], term: str) -> None:
    assert {stem(f) for f in forms} == {term}
    assert {t for f in forms for t in query_terms(f)} == {term}


def test_sqlite_finds_each_arabic_word_in_another_form(tmp_path: Path) -> None:
    found_on_sqlite(tmp_path / "ar.db", TURNS, FORMS)


@pytest.mark.postgres
def test_postgres_agrees_and_migration_24_remakes_only_the_arabic_documents(
    postgres_dsn: str,
) -> None:
    arabic = {n for n, (_, text) in enumerate(TURNS) if "\u0621" <= text[0] <= "\u064a"}
    remade_by_migration(postgres_dsn, 24, TURNS, FORMS, arabic)
