"""Scripts written without spaces between words (Thai, Lao, Khmer, Myanmar) and Devanagari
(issue 52): a word is found inside a sentence, a Hindi word in another form, on both stores
alike; a store written before gets those rows' keyword documents made again (PostgreSQL
migration 28, only those rows; SQLite's keyword snapshots of format 4 are read from rows)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.keywords import documents, firsts, made, migrated_again, write

from recallery.store.sqlite import SQLiteStore
from recallery.store.sqlite import snapshots as snapshots_module
from recallery.text.analyzer import analyze, query_terms
from recallery.text.scripts import letters

#: (user, text): four people in one memory, writing Thai, Hindi, English, Khmer and Myanmar;
#: the English turn says what the Thai one says, and must not be found by the Thai word.
TURNS = [
    ("somchai", "ฉันปั่นจักรยานไปออฟฟิศทุกวัน"),
    ("priya", "हमने पिछले वसंत में दो बिल्लियाँ गोद लीं।"),
    ("anna", "I ride my bike to the office every day."),
    ("malee", "คุณยายของฉันปลูกมะเขือเทศในสวน"),
    ("priya", "मेरी दादी अपने बगीचे में टमाटर उगाती हैं।"),
    ("dara", "ខ្ញុំចូលចិត្តរៀនភាសាខ្មែរ"),
    ("aung", "ကျွန်တော် ရန်ကုန်မှာ နေတယ်။"),
]
#: A word inside one turn's sentence (or a Hindi word in another form than the turn has)
#: and that turn's place.
FOUND = {
    "จักรยาน": 0,
    "มะเขือเทศ": 3,
    "बिल्ली": 1,
    "टमाटरों": 4,
    "ភាសាខ្មែរ": 5,
    "ရန်ကုန်": 6,
}


def test_a_syllable_piece_keeps_its_vowels_and_tone_marks() -> None:
    assert letters("ข้าวผัด") == ["ข้า", "ว", "ผั", "ด"]
    assert letters("ไวโอลิน") == ["ไว", "โอ", "ลิ", "น"]  # a vowel written before its consonant
    assert letters("ខ្មែរ") == ["ខ្មែ", "រ"]  # the consonant stacked under ខ is in its piece
    # "food" and "job" begin alike and share no bigram
    assert not set(analyze("อาหาร").terms) & set(analyze("อาชีพ").terms)


def test_an_unspaced_word_is_found_inside_its_sentence() -> None:
    sentence = set(analyze(TURNS[0][1]).terms)
    assert set(query_terms("จักรยาน")) <= sentence
    assert not set(query_terms("มะเขือเทศ")) & sentence
    assert analyze("ไป").terms == ["ไป"]  # two letters, one bigram
    assert analyze("ฉันปั่นจักรยาน").length == 8  # a run counts its bigrams, as CJK does


def test_a_hindi_word_is_one_term_in_its_forms_and_function_words_are_none() -> None:
    assert {t for f in ("बिल्ली", "बिल्लियाँ", "बिल्लियों") for t in query_terms(f)} == {"बिल्ल"}
    assert query_terms("मेरी बहन अब कहाँ रहती है?") == ["बहन", "रह"]


def test_sqlite_finds_each_word(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "scripts.db")
    try:
        ids, memory = write(store, TURNS)
        assert firsts(store, memory, FOUND) == {q: ids[i] for q, i in FOUND.items()}
    finally:
        store.close()


def test_sqlite_keywords_of_format_4_are_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store whose keyword snapshots were saved before the unspaced scripts were bigrammed
    loads its rows once more, and the Thai word is then found inside its sentence."""
    path = tmp_path / "scripts.db"
    store = SQLiteStore(path)
    ids, memory = write(store, TURNS)
    with monkeypatch.context() as m:
        m.setattr(snapshots_module, "FORMATS", {**snapshots_module.FORMATS, "keywords": 4})
        assert store.save_indexes() > 0
    store.close()
    restored = SQLiteStore(path)
    try:
        assert firsts(restored, memory, FOUND) == {q: ids[i] for q, i in FOUND.items()}
        assert restored._indexes.rows_loaded == len(TURNS)
    finally:
        restored.close()


@pytest.mark.postgres
def test_postgres_agrees_and_migration_28_remakes_only_those_documents(
    tmp_path: Path, postgres_dsn: str
) -> None:
    from recallery.store.postgres import PostgresStore
    from recallery.testing.postgres import truncate_all

    truncate_all(postgres_dsn)
    store = PostgresStore(postgres_dsn, pool_size=1)
    ids, memory = write(store, TURNS)
    assert firsts(store, memory, FOUND) == {q: ids[i] for q, i in FOUND.items()}
    store.close()
    migrated_again(postgres_dsn, 28)
    store = PostgresStore(postgres_dsn, pool_size=1)
    try:
        after, today = documents(store), made(ids, TURNS)
        english = ids[2]
        assert after[english] == ["older"]
        assert {i: after[i] for i in ids if i != english} == {
            i: today[i] for i in ids if i != english
        }
        assert firsts(store, memory, FOUND) == {q: ids[i] for q, i in FOUND.items()}
    finally:
        store.close()
