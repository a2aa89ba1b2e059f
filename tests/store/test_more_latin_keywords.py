"""Eleven more Latin-script languages (issue 52): Swedish, Danish, Norwegian, Finnish, Turkish,
Indonesian, Polish, Czech, Romanian and Hungarian are told apart by their stop words and
letters and stemmed in their own language, so a word is found in another form, on both stores
alike; Vietnamese is told apart by its own letters and function words, which carry no
keyword weight any more; English is read as before; a store written before gets those rows'
keyword documents made again (PostgreSQL migration 31, only those rows; SQLite's keyword
snapshots of format 5 are read from rows)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.keywords import found_after_older_snapshots, found_on_sqlite, remade_by_migration

from recallery.text.analyzer import analyze, query_terms
from recallery.text.latin import latin_language

#: (user, text, language): thirteen people in one memory; the English turn says what the Polish
#: and Czech ones say, and must not be found by their words.
TURNS = [
    ("astrid", "Jag har två katter och en hund hemma i lägenheten.", "sv"),
    ("mikkel", "Vi har købt nye cykler til hele familien, og de er røde.", "da"),
    ("ingrid", "Jeg har spilt fiolin i mange år, og nå spiller jeg hver helg i kirken.", "no"),
    ("aino", "Minä asun Helsingissä ja työskentelen sairaalassa.", "fi"),
    ("elif", "Benim kız kardeşim kitapları çok seviyor ve her gün okuyor.", "tr"),
    ("budi", "Saya suka membaca buku di perpustakaan kota setiap minggu.", "id"),
    ("zofia", "Moja babcia hoduje pomidory w swoim ogrodzie na wsi.", "pl"),
    ("jana", "Můj bratr studuje chemii na univerzitě v Praze.", "cs"),
    ("ioana", "Fratele meu lucrează ca medic la spitalul din oraș.", "ro"),
    ("zsofi", "A nővérem Budapesten él és tanárként dolgozik az iskolában.", "hu"),
    ("minh", "Tôi thích ăn phở bò ở Hà Nội và đi làm bằng xe đạp.", "vi"),
    ("lan", "Em gái tôi sống ở Đà Nẵng với chồng.", "vi"),
    ("anna", "My grandmother grows tomatoes in her garden and my brother studies chemistry.", "en"),
]
#: Two more people in the same memory writing Chinese and Russian: a Danish turn's bicycles
#: and a Romanian turn's hospital collide with theirs, and migration 31 leaves their rows alone.
OTHER_SCRIPTS = [
    ("wang", "我每天骑自行车去医院上班。"),
    ("olga", "Я работаю врачом в городской больнице."),
]
PEOPLE = [(user, text) for user, text, _ in TURNS] + OTHER_SCRIPTS
#: A word in another form than the turn has it (a plural, a case, without a suffix or a
#: prefix), and that turn's place.
FOUND = {
    "katten": 0,
    "cyklen": 1,
    "fiolinen": 2,
    "sairaala": 3,
    "kitap": 4,
    "baca": 5,
    "pomidor": 6,
    "chemie": 7,
    "spital": 8,
    "iskola": 9,
    "phở": 10,  # Vietnamese words are one syllable each, found as written
    "Đà Nẵng": 11,  # Đà is not đã ("already"), a stop word
}


@pytest.mark.parametrize(("text", "lang"), [(t, lang) for _, t, lang in TURNS])
def test_each_language_is_told_apart(text: str, lang: str) -> None:
    assert latin_language(text) == lang


def test_a_stored_text_without_stop_words_is_read_by_its_letters() -> None:
    """Turkish writes its function words as endings: a sentence may hold none of its stop
    words, and more of its letters than any other language has (ü, ç, ş)."""
    text = "Büyükannem bahçesinde domates yetiştiriyor."
    assert latin_language(text) == "tr"
    assert set(query_terms("domatesler")) & set(analyze(text).terms)
    assert latin_language("Grüße aus München") == "de"  # by its stop word, as before
    assert latin_language("Mañana") == "en"  # the languages told apart first: as before
    assert latin_language("I met Łukasz yesterday.") == "en"  # English votes
    assert latin_language("Cumplió un ano") == "en"  # one letter (ó) names no language
    assert latin_language("Geçen bahar iki kedi sahiplendik.") == "en"  # nor ç alone


@pytest.mark.parametrize(
    "text",
    [
        "I want to go on a trip with my men.",  # go, on, my vote Polish too, men Swedish
        "Take care! Keep pushing on.",  # take is také without its accent
        "Ten men went to the dog show.",
        "The van was a rat trap, said the con man.",  # vẫn, rất, còn without their marks
        "u{i}",  # single letters vote for the languages told apart first only
        "CREATE INDEX items_v_hnsw ON items USING hnsw (v vector_cosine_ops)",
    ],
)
def test_english_is_read_as_english(text: str) -> None:
    assert latin_language(text) == "en"


def test_a_vietnamese_function_word_is_no_term() -> None:
    assert query_terms("Em gái tôi sống ở đâu?") == ["em", "gai", "song"]  # tôi, ở, đâu out
    assert "trong" in analyze("Bà tôi trồng cà chua.").terms  # trồng, "grows", is not trong


def test_a_word_is_one_term_in_its_forms() -> None:
    for query, place in FOUND.items():
        assert set(query_terms(query)) & set(analyze(TURNS[place][1]).terms), query
    # the English turn shares no term with the Polish tomatoes or the Czech chemistry
    english = set(analyze(TURNS[-1][1]).terms)
    assert not english & (set(query_terms("pomidor")) | set(query_terms("chemie")))


def test_a_lone_word_asks_for_the_stem_of_the_language_its_letters_name() -> None:
    assert "kitap" in query_terms("kitapları")  # ı is Turkish
    assert query_terms("my running dogs") == ["run", "dog"]  # English's vote as strong
    # another language's stem is asked only where it begins the word
    assert "anuts" not in query_terms("peanuts")  # Indonesian takes pe- off
    assert "it" not in query_terms("item")  # Polish takes -em off
    assert "fıstık" in analyze("Yer fıstığına alerjim var.").terms  # ğ softened, as written
    assert "fıstık" in query_terms("fıstığına")  # the query is stemmed as written too


def test_sqlite_finds_each_word(tmp_path: Path) -> None:
    found_on_sqlite(tmp_path / "latin.db", PEOPLE, FOUND)


def test_sqlite_keywords_of_format_5_are_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store whose keyword snapshots were saved before these languages were told apart
    loads its rows once more, and the words are then found in their other forms."""
    found_after_older_snapshots(tmp_path / "latin.db", PEOPLE, FOUND, 5, monkeypatch)


@pytest.mark.postgres
def test_postgres_agrees_and_migration_31_remakes_only_those_documents(
    postgres_dsn: str,
) -> None:
    remade = {n for n, (_, _, lang) in enumerate(TURNS) if lang != "en"}  # not the others
    remade_by_migration(postgres_dsn, 31, PEOPLE, FOUND, remade)
