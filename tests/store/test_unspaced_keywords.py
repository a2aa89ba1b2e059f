"""Scripts written without spaces between words (Thai, Lao, Khmer, Myanmar) and Devanagari
(issue 52): a word is found inside a sentence, a Hindi word in another form, on both stores
alike; a store written before gets those rows' keyword documents made again (PostgreSQL
migration 28, only those rows; SQLite's keyword snapshots of format 4 are read from rows)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.keywords import found_after_older_snapshots, found_on_sqlite, remade_by_migration

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
    found_on_sqlite(tmp_path / "scripts.db", TURNS, FOUND)


def test_sqlite_keywords_of_format_4_are_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store whose keyword snapshots were saved before the unspaced scripts were bigrammed
    loads its rows once more, and the Thai word is then found inside its sentence."""
    found_after_older_snapshots(tmp_path / "scripts.db", TURNS, FOUND, 4, monkeypatch)


@pytest.mark.postgres
def test_postgres_agrees_and_migration_28_remakes_only_those_documents(
    postgres_dsn: str,
) -> None:
    english = 2
    remade = set(range(len(TURNS))) - {english}
    remade_by_migration(postgres_dsn, 28, TURNS, FOUND, remade)
