"""A repeat means the same statement (design invariant 8): near-duplicates that are and are not
the same fact, in several languages. Closeness alone never merges two statements; those that
differ go to the chat model's judgement, or are added where the memory has none."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from tests.support.extraction import judgement, make_memory

from recallery import Engine, Memory, Principal
from recallery.extraction.extractor import Candidate
from recallery.extraction.reconcile import Action, Difference, Neighbour, difference, plan, words
from recallery.models import EntryType
from recallery.testing import FakeLLM

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = datetime(2026, 6, 1, tzinfo=UTC)

#: (what the memory holds, the new statement, their cosine): not the same fact.
NOT_REPEATS = [
    # the two retractions of issue 53, with the cosines a real embedder gave them
    ("The user prefers tea over coffee", "These days the user drinks coffee, not tea", 0.996),
    ("The user is gluten intolerant", "The gluten thing was a misdiagnosis", 0.945),
    ("The user prefers tea over coffee", "The user prefers coffee over tea", 1.0),  # direction
    ("The user has 2 cats", "The user has 3 cats", 0.99),  # quantity
    ("The user lives in Berlin", "The user lived in Berlin", 0.97),  # time
    ("The user lives in Berlin", "The user lives in Berlin now", 0.97),
    ("我喜欢茶", "我不喜欢茶", 0.97),  # Chinese: I like tea / I don't like tea
    ("猫を二匹飼っている", "猫を三匹飼っている", 0.98),  # Japanese: two cats / three cats
    ("Я люблю чай", "Я не люблю чай", 0.96),  # Russian: negation
    ("Он живёт в Москве", "Он жил в Москве", 0.95),  # Russian: lives / lived
    ("Ich trinke gern Tee", "Ich trinke nicht gern Tee", 0.95),  # German: negation
    ("Ich trinke lieber Tee als Kaffee", "Ich trinke lieber Kaffee als Tee", 1.0),
    ("Vive en Madrid", "Ya no vive en Madrid", 0.95),  # Spanish
    ("Cumplió un año", "Cumplió un ano", 0.99),  # an accent is a different word
    ("उसका एक लड़का है", "उसकी एक लड़की है", 0.98),  # Hindi: a son / a daughter (vowel signs)
]

#: The same statement, written again: only case, punctuation, spacing or width differ.
REPEATS = [
    ("The user lives in Berlin", "the user lives in Berlin."),
    ("我喜欢茶", "我喜欢茶。"),
    ("猫を二匹飼っている", "猫を 二匹 飼っている!"),
    ("ユーザーはTokyoに住んでいる", "ユーザーはＴＯＫＹＯに住んでいる"),  # full-width forms
    ("Я люблю чай", "я люблю чай!"),
    ("Er wohnt in der Straße", "ER WOHNT IN DER STRASSE"),
    ("Ya no vive en Madrid", "ya no vive en Madrid..."),
    ("उसका एक लड़का है", "उसका एक लड़का है।"),
]


def cand(text: str) -> Candidate:
    return Candidate(EntryType.SEMANTIC, text, T1)


@pytest.mark.parametrize(("held", "new", "cosine"), NOT_REPEATS)
def test_a_close_statement_that_says_something_else_goes_to_judgement(
    held: str, new: str, cosine: float
) -> None:
    d = plan(cand(new), [Neighbour(7, held, cosine, T0)], [])
    assert (d.action, [o.message_id for o in d.options]) == (Action.JUDGE, [7])
    assert held not in d.reason and new not in d.reason  # ids only in logs
    # nor is it dropped because it resembles a rejected entry
    assert plan(cand(new), [], [Neighbour(9, held, cosine, T0)]).action is Action.ADD


@pytest.mark.parametrize(("held", "new"), REPEATS)
def test_the_same_statement_written_again_is_a_duplicate_whatever_the_vector_says(
    held: str, new: str
) -> None:
    d = plan(cand(new), [Neighbour(7, held, 0.4, T0)], [])
    assert (d.action, d.target) == (Action.DUPLICATE, 7)
    rejected = plan(cand(new), [Neighbour(7, held, 0.4, T0)], [Neighbour(9, held, 0.4, T0)])
    assert (rejected.action, rejected.target) == (Action.SUPPRESS, 9)


def test_what_differs_is_named_without_the_words() -> None:
    assert difference("prefers tea over coffee", "prefers coffee over tea") is Difference.ORDER
    assert difference("has 2 cats", "has 3 cats") is Difference.NUMBERS
    assert difference("我喜欢茶", "我不喜欢茶") is Difference.WORDS
    assert difference("Я люблю чай", "я люблю чай!") is Difference.NONE
    d = plan(cand("The user has 3 cats"), [Neighbour(4, "The user has 2 cats", 0.99, T0)], [])
    assert d.reason == "close to entries 4; entry 4 (cosine 0.990) has other numbers"


def test_words_split_unspaced_scripts_per_character_and_keep_marks() -> None:
    assert words("我不喜欢茶。") == ("我", "不", "喜", "欢", "茶")
    assert words("ＴＯＫＹＯに住む") == ("tokyo", "に", "住", "む")
    assert words("Ich trinke nicht gern Tee!") == ("ich", "trinke", "nicht", "gern", "tee")
    assert words("लड़का") != words("लड़की")  # boy, girl: only a vowel sign apart


def state(engine: Engine, actor: Principal, memory: Memory, *texts: str) -> list[str]:
    result = engine.add_entries(actor, memory.id, [{"content": t} for t in texts])
    return [o.action for o in result.outcomes]


def current_facts(engine: Engine, actor: Principal, memory: Memory) -> list[str]:
    return sorted(e.content for e in engine.facts(actor, memory.id).items)


def test_without_a_chat_model_a_reversed_preference_stays_a_second_entry(
    engine: Engine, alice: Principal
) -> None:
    # the test embedder counts words, so the reversal lies at cosine 1.0 from the original
    memory = make_memory(engine, alice, llm_id="glm-4-flash@ZHIPU-AI")
    assert state(engine, alice, memory, "The user prefers tea over coffee") == ["add"]
    assert state(engine, alice, memory, "The user prefers coffee over tea") == ["add"]
    assert state(engine, alice, memory, "the user prefers coffee over tea.") == ["duplicate"]
    assert state(engine, alice, memory, "我喜欢茶", "我喜欢茶!", "Я люблю чай") == [
        "add",
        "duplicate",
        "add",
    ]
    assert current_facts(engine, alice, memory) == [
        "The user prefers coffee over tea",
        "The user prefers tea over coffee",
        "Я люблю чай",
        "我喜欢茶",
    ]


def test_in_one_call_a_reversed_preference_is_not_a_repeat_of_the_earlier_item(
    engine: Engine, alice: Principal
) -> None:
    memory = make_memory(engine, alice, llm_id="glm-4-flash@ZHIPU-AI")
    said = state(engine, alice, memory, "Ich trinke lieber Tee", "Lieber Tee trinke ich")
    assert said == ["add", "add"]


def test_a_reversed_preference_is_judged_by_the_chat_model(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM
) -> None:
    assert state(engine, alice, mem, "The user prefers tea over coffee") == ["add"]
    llm.push(judgement("supersedes", 1))
    assert state(engine, alice, mem, "The user prefers coffee over tea") == ["supersede"]
    assert current_facts(engine, alice, mem) == ["The user prefers coffee over tea"]
    asked = llm.chat_requests()[-1]["messages"][1]["content"]
    assert "1. (valid from" in asked and "The user prefers tea over coffee" in asked
