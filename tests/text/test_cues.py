"""Time cues in every language the analyzer reads, behind a language gate: a query's language
is named first and only its own words are looked for (issue 52 item 3)."""

from __future__ import annotations

import pytest

from recallery.retrieval.recency import asks_state, band_lean, is_question, time_lean
from recallery.text.cues import LANGUAGES, language, read


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Where do I live now?", "en"),
        ("Wo wohne ich jetzt?", "de"),
        ("Où est-ce que j'habite maintenant ?", "fr"),
        ("我现在住在哪里？", "zh"),
        ("私は今どこに住んでいますか？", "ja"),
        ("지금 저는 어디에 살아요?", "ko"),
        ("Где я сейчас живу?", "ru"),
        ("أين أسكن الآن؟", "ar"),
        ("Where does 王芳 live now?", "en"),  # a name in another script
        ("我现在用iPhone吗？", "zh"),
        ("Πού μένω τώρα;", ""),  # a script without a table
    ],
)
def test_the_language_of_a_query(text: str, lang: str) -> None:
    assert language(text) == lang


@pytest.mark.parametrize(
    ("query", "lean"),
    [
        ("Wo wohne ich jetzt?", 2.0),
        ("Was war mein erster Job?", -1.0),
        ("Wo habe ich vor zwei Jahren gewohnt?", 0.0),
        ("¿Dónde vivo ahora?", 2.0),
        ("我现在住在哪里？", 2.0),
        ("我以前住在哪里？", -1.0),
        ("我去年住在哪里？", 0.0),
        ("私は今どこに住んでいますか？", 2.0),
        ("最初の仕事は何でしたか？", -1.0),
        ("지금 저는 어디에 살아요?", 2.0),
        ("예전에 제 차는 뭐였어요?", -1.0),
        ("Где я сейчас живу?", 2.0),
        ("Где я жил раньше?", -1.0),
        ("Где я жил три года назад?", 0.0),
        ("أين أسكن الآن؟", 2.0),
        ("أين كنت أسكن العام الماضي؟", 0.0),
        ("Πού μένω τώρα;", 1.0),  # no table: the plain lean
    ],
)
def test_the_query_leans_the_prior_in_its_language(query: str, lean: float) -> None:
    assert time_lean(query) == lean


@pytest.mark.parametrize(
    ("query", "state"),
    [
        ("Was ist mein Beruf?", True),  # "was" is German "what", not the English past
        ("Wohin ist meine Schwester umgezogen?", False),  # the perfect
        ("我是做什么工作的？", True),
        ("我们家养了什么宠物？", False),  # 了: the past; 我们: not the asker alone
        ("私の仕事は何ですか？", True),
        ("私の仕事は何でしたか？", False),
        ("제 직업이 뭐예요?", True),
        ("제 직업이 뭐였어요?", False),  # 였: the past
        ("저는 차가 있어요?", True),  # 있: to have, not the past
        ("Кем я работаю?", True),
        ("Кем я работал?", False),
        ("ما هي وظيفتي؟", True),
        ("Où est mon vélo ?", True),
        ("Où était mon vélo ?", False),
        ("Tom, wo wohnst du? Ich ziehe bald um.", False),  # two sentences: a dialogue
        ("Πού μένω;", False),  # no table: never a question about the asker's state
    ],
)
def test_a_question_about_the_askers_state_in_every_language(query: str, state: bool) -> None:
    assert asks_state(query) is state


def test_the_gate_reads_only_the_querys_own_language() -> None:
    # English patterns over other languages: "me" and "was" are French and German words
    assert read("Où me trouves-tu maintenant ?").language == "fr"
    assert band_lean("Was ist mein Beruf?") == 1.0  # English "was" would have said the past
    assert band_lean("Was hast du heute gegessen? Ich hatte Hunger.") == 0.0  # a dialogue
    # a Chinese question holding an English word is read in Chinese
    assert read("我现在用的iPhone是哪一款？").now and read("我现在用的iPhone是哪一款？").asker


def test_every_language_the_analyzer_segments_has_cues() -> None:
    assert {"en", "zh", "ja", "ko", "de", "ru", "ar", "fr", "es", "it", "pt", "nl"} <= LANGUAGES


@pytest.mark.parametrize(
    "text",
    [
        "我现在住在哪里？我搬家了。你知道吗",
        "Ich bin gestern umgezogen. Jetzt wohne ich in Köln. Wo wohnst du?",
        "지금 어디 살아요 " + "정말 " * 30 + "?",
    ],
)
def test_a_dialogue_or_a_passage_is_not_one_question(text: str) -> None:
    assert not is_question(text)
