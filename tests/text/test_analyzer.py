"""The keyword analyzer, language by language: a word is found inside a sentence, other
forms of a word are found where the language inflects, function words are never terms, and
normalisation keeps the distinctions that change a word."""

from __future__ import annotations

import pytest

from recallery.text.analyzer import (
    MAX_TERMS,
    analyze,
    analyze_all,
    query_terms,
)
from recallery.text.latin import latin_language


def found(query: str, text: str) -> bool:
    """Whether a term of ``query`` is a term of ``text``."""
    return bool(set(query_terms(query)) & set(analyze(text).terms))


# (language, stored sentence, the word as written in it, another form of it or None)
SENTENCES = [
    ("en", "My sister adopted two dogs last spring", "dogs", "dog"),
    ("zh", "我喜欢机器学习和自然语言处理", "机器学习", None),
    ("ja", "私は毎朝バスで学校に行きます", "学校", None),
    ("ko", "내 여동생의 이름은 지수입니다", "여동생의", "여동생"),
    ("de", "Meine Schwester wohnt seit Jahren in Berlin und hat zwei Hunde", "Hunde", "Hund"),
    ("ru", "Моя сестра живёт в Москве и работает врачом", "Москве", "Москва"),
    ("ar", "تعمل أختي في المدرسة الكبيرة", "المدرسة", "مدرسة"),
]


@pytest.mark.parametrize(("lang", "text", "word", "other"), SENTENCES)
def test_a_word_is_found_inside_a_sentence(lang: str, text: str, word: str, other: str) -> None:
    assert found(word, text), lang


@pytest.mark.parametrize(
    ("lang", "text", "word", "other"), [s for s in SENTENCES if s[3] is not None]
)
def test_another_form_of_the_word_is_found(lang: str, text: str, word: str, other: str) -> None:
    assert found(other, text), lang


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("сестры", "Моя сестра живёт в Москве"),  # genitive against nominative
        ("сестрой", "Моя сестра живёт в Москве"),  # instrumental
        ("Schwestern", "Meine Schwester wohnt in Berlin und arbeitet dort"),  # plural
        ("كتاب", "قرأت الكتاب أمس"),  # without ال
        ("차", "어제 새 차를 샀어요"),  # a one-syllable Korean noun without its particle
        ("이름", "제 이름은 민수입니다"),
        ("猫", "我家有一只很可爱的猫"),  # one Chinese character inside a sentence
        ("Straße", "Die Strasse ist lang und wir sind da"),  # ß and ss are one letter
        ("ﾊﾞｽ", "バスに乗ります"),  # half-width katakana is the full-width word
    ],
)
def test_other_forms_and_spellings(query: str, text: str) -> None:
    assert found(query, text)


def test_every_bigram_of_a_chinese_word_is_in_the_sentence() -> None:
    terms = set(analyze("我喜欢机器学习").terms)
    assert query_terms("机器学习") == ["机器", "器学", "学习"]
    assert set(query_terms("机器学习")) <= terms


def test_a_latin_query_without_a_language_asks_every_language() -> None:
    assert query_terms("Schwestern") == ["schwestern", "schwest", "schwester"]
    assert query_terms("die Schwestern und Brüder") == ["schwest", "brud"]  # German: one stem
    assert query_terms("my running dogs") == ["run", "dog"]  # English: Porter only


def test_japanese_voicing_marks_keep_words_apart() -> None:
    terms = {q: query_terms(q) for q in ("バス", "パス", "ハス")}
    assert len({tuple(t) for t in terms.values()}) == 3
    assert not found("パス", "私は毎朝バスに乗ります")
    assert not found("ハス", "私は毎朝バスに乗ります")


def test_accents_of_latin_letters_are_folded_not_cyrillic_letters() -> None:
    assert query_terms("Café") == query_terms("cafe")
    assert query_terms("мой") != query_terms("мои") or query_terms("мой") == []
    assert query_terms("ёлка") == query_terms("елка")
    assert not found("мой", "Моя мойка сломалась")  # й is a letter, not an accent


@pytest.mark.parametrize(
    "query",
    [
        "the",
        "내",
        "나는",
        "das ist mein",
        "ich und meine",
        "هي",
        "в",
        "моя",
        "的",
        "は",
        "私",
        "我们",
    ],
)
def test_function_words_are_never_terms(query: str) -> None:
    assert query_terms(query) == []


def test_a_shared_function_word_does_not_match() -> None:
    assert not found("내 고양이", "내 자동차는 빨간색이다")  # only 내 is shared
    assert not found("mein Auto", "mein Fahrrad ist rot und mein Hund ist braun")
    assert not found("هي طبيبة", "هي معلمة في مدرسة")


def test_stop_words_count_in_the_length() -> None:
    assert analyze("the dogs and the cats").length == 5
    assert analyze("我喜欢机器学习").length == 6  # bigrams
    assert analyze("내 이름은 민수").length == 3


def test_english_stays_what_the_index_did() -> None:
    """FTS5's porter unicode61 remove_diacritics 2: accents off, then the Porter stemmer
    for words of 3 to 64 characters; stop words dropped before stemming."""
    assert query_terms("The Cafés of RUNNING runners!") == ["cafe", "run", "runner"]
    assert query_terms("a snake_case name") == ["snake", "case", "name"]
    assert query_terms("used by us") == ["us", "us"]  # "us" is too short to stem
    assert analyze("ecology of the 1990s").terms == ["ecologi", "1990"]
    assert latin_language("See ya, Calvin! Catch ya later.") == "en"  # one Spanish word


def test_the_latin_language_is_voted_by_stop_words() -> None:
    assert latin_language("Ich habe meine Schwester in Berlin besucht") == "de"
    assert latin_language("Je suis allé à la plage avec mon frère") == "fr"
    assert latin_language("Mi hermana vive en Madrid con su familia") == "es"
    assert latin_language("running dogs") == "en"


def test_mixed_scripts_in_one_text() -> None:
    text = "I use Python for 机器学习 and ride the バス with Алиса"
    for word in ("python", "机器学习", "バス", "Алиса"):
        assert found(word, text), word


def test_a_query_has_at_most_max_terms() -> None:
    words = " ".join(f"word{i}" for i in range(MAX_TERMS + 10))
    assert len(query_terms(words)) == MAX_TERMS


def test_analyzing_together_equals_one_by_one() -> None:
    texts = [s[1] for s in SENTENCES] + ["", "!!!", "The Cafés"]
    assert analyze_all(texts) == [analyze(t) for t in texts]


# --- the query side: a function word never carries full keyword weight (issue 52 item 3) -----


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("mein Beruf", ["beruf"]),  # one German stop word: stemmed as English, mein still out
        ("mon travail", ["travail"]),
        ("mi casa", ["casa", "cas"]),  # and the stem of each language voted for
        ("the man", ["man"]),  # English has as many: "man" is a word here, not German "man"
        ("die", ["die"]),  # nothing else to ask for: kept
        ("제 직업이 뭐예요?", ["직업"]),  # 제 and the question word 뭐
        ("Какая у меня работа?", ["работ"]),
        ("ما هي وظيفتي الآن؟", ["ظيفت"]),
    ],
)
def test_a_querys_function_words_are_left_out_in_every_language(
    query: str, terms: list[str]
) -> None:
    assert query_terms(query) == terms


def test_a_bigram_of_two_function_characters_is_never_asked_for() -> None:
    assert "我的" not in query_terms("我的工作是什么？")
    assert "工作" in query_terms("我的工作是什么？")
    assert not {"私の", "は何", "何で"} & set(query_terms("私の仕事は何ですか？"))
    assert "仕事" in query_terms("私の仕事は何ですか？")


def test_a_function_word_shared_with_a_text_of_another_guess_does_not_match() -> None:
    # the stored text has one German stop word too, so both are stemmed as English
    assert not found("mein Auto", "mein Hund bellt")
    assert not found("我的车", "我的猫很可爱")
    assert not found("什么工作", "什么时候下雨")
    assert found("mein Hund", "mein Hund bellt")


def test_a_japanese_ending_in_hiragana_is_never_asked_for() -> None:
    """Japanese writes verb endings and particles in hiragana: 練習していますか asks for the
    bigrams that hold a kanji, and a sentence that shares only its ending does not match."""
    terms = query_terms("私はどんな楽器を練習していますか？")
    assert "楽器" in terms and "練習" in terms
    assert not {"して", "てい", "いま", "ます", "すか"} & set(terms)
    assert not found("私はどんな楽器を練習していますか？", "祖母は庭でトマトを育てています。")
    assert found("私はどんな楽器を練習していますか？", "毎晩ピアノを練習しています。")
    assert found("楽器", "新しい楽器を買いました")
    assert query_terms("りんご") == ["りん", "んご"]  # hiragana alone: nothing else to ask for


def test_a_bigram_across_a_katakana_words_edge_is_never_asked_for() -> None:
    """A katakana word meets the particle after it (ペット|を) or the word before it (どんな|ペ)
    in a bigram of katakana and hiragana: two words, which トマトを shares with ペットを."""
    terms = query_terms("うちではどんなペットを飼っていますか？")
    assert {"ペッ", "ット", "飼っ"} <= set(terms)
    assert not {"トを", "なペ"} & set(terms)
    assert not found("うちではどんなペットを飼っていますか？", "祖母は庭でトマトを育てています。")
    assert found("ペットを飼っていますか？", "うちでは猫をペットとして飼っています。")
    assert query_terms("コーヒー") == ["コー", "ーヒ", "ヒー"]  # the long vowel mark is katakana


def test_a_korean_verb_ending_is_never_asked_for() -> None:
    """살아요 asks for 살아, 전공해요 for 전공 and 공해: a text that shares only the polite
    ending (닫아요, 일해요) does not match."""
    assert query_terms("제 자매는 지금 어디에 살아요?") == ["자매", "살아"]
    assert "해요" not in query_terms("우리 아이는 대학에서 무엇을 전공해요?")
    assert not found("저는 어떻게 출근해요?", "저는 시립 병원에서 간호사로 일해요.")
    assert found("언니는 어디에 살아요?", "언니는 서울에 살아요.")
