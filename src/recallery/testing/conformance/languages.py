"""Conformance: keyword search in seven languages, the same on every backend.

Each language's memory holds facts of two end users and distractors that share a function
word or a near spelling with the query; a keyword-only search must find the fact (a word
inside a sentence, another form of the word) and leave every distractor out. Scores are
compared with BM25 computed here from the analyzer's own terms, so every backend that passes
gives the same scores as every other.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

from recallery.models import Scope
from recallery.store.base import Store
from recallery.store.filters import EntryFilter
from recallery.testing.conformance.support import Conformance, make_memory, unit
from recallery.text.analyzer import analyze_all, query_terms

#: language: (facts, distractors, words that find the first fact and no distractor, and
#: questions that find the first fact first; a distractor may share another word)
CASES: dict[str, tuple[list[str], list[str], list[str], list[str]]] = {
    "en": (
        ["My sister adopted two dogs last spring", "Bob plays the violin"],
        ["We are going home", "The dogma of the church"],
        ["dog", "dogs"],
        ["Which dogs did she adopt?"],
    ),
    "zh": (
        ["我喜欢机器学习和自然语言处理", "他住在上海"],
        ["我喜欢吃苹果", "机场很远", "学校很大"],
        ["机器学习", "学习"],
        ["谁喜欢机器学习？"],
    ),
    "ja": (
        ["私は毎朝バスで学校に行きます", "兄は東京に住んでいます"],
        ["パスポートを忘れました", "ハスの花がきれいです", "私はコーヒーが好きです"],
        ["バス", "学校"],
        ["バスで行きますか"],
    ),
    "ko": (
        ["내 여동생의 이름은 지수입니다", "어제 새 차를 샀어요"],
        ["내 고양이는 귀엽다", "나는 학교에 간다"],
        ["여동생", "여동생은", "내 여동생은"],
        ["내 여동생의 이름은 무엇입니까?"],
    ),
    "de": (
        ["Meine Schwester wohnt seit Jahren in Berlin und hat zwei Hunde", "Ich trinke Tee"],
        ["Mein Auto ist rot und mein Fahrrad ist blau", "Die Hundertjahrfeier war schön"],
        ["Hund", "Hunde", "Schwestern"],
        ["Wo wohnt meine Schwester?"],
    ),
    "ru": (
        ["Моя сестра живёт в Москве и работает врачом", "Я люблю чай"],
        ["Моя машина стоит в гараже", "Мой брат живёт в деревне"],
        ["Москва", "в Москве", "сестры"],
        ["Кто живёт в Москве?"],
    ),
    "ar": (
        ["تعمل أختي في المدرسة الكبيرة", "أحب الشاي"],
        ["هي تحب القهوة", "ذهب أخي إلى السوق"],
        ["مدرسة", "المدرسة"],
        ["من يعمل في المدرسة؟"],
    ),
}


def expected_bm25(texts: list[str], query: str) -> dict[int, float]:
    """BM25 (FTS5's: k1 1.2, b 0.75, idf at least 1e-6) of ``query`` over ``texts`` from the
    analyzer's terms: what every backend's keyword search must score, by position."""
    docs = analyze_all(texts)
    n, average = len(docs), sum(d.length for d in docs) / len(docs)
    counts = [Counter(d.terms) for d in docs]
    scores: dict[int, float] = {}
    for term in query_terms(query):
        holding = sum(1 for c in counts if term in c)
        if not holding:
            continue
        idf = max(math.log((n - holding + 0.5) / (holding + 0.5)), 1e-6)
        for i, (d, c) in enumerate(zip(docs, counts, strict=True)):
            if term in c:
                tf = c[term]
                norm = tf + 1.2 * (0.25 + 0.75 * d.length / average)
                scores[i] = scores.get(i, 0.0) + idf * tf * 2.2 / norm
    return scores


class LanguageConformance(Conformance):
    @pytest.mark.parametrize("language", sorted(CASES))
    def test_keyword_search_finds_the_word_in_every_language(
        self, store: Store, language: str
    ) -> None:
        facts, distractors, words, questions = CASES[language]
        memory = make_memory()
        users = [{"user_id": "ana"}, {"user_id": "bo"}]
        rows = [(t, unit(1), users[i % 2]) for i, t in enumerate(facts + distractors)]
        ids = self.seed(store, memory, rows)
        texts = facts + distractors
        for query in words + questions:
            with store.read() as r:
                hits = r.keyword_candidates(Scope.of(memory.id), query, EntryFilter(), 10)
            found = {ids.index(i): score for i, score in hits}
            assert hits and ids.index(hits[0][0]) == 0, (language, query)
            if query in words:
                assert set(found) == {0}, (language, query)
            assert found == pytest.approx(expected_bm25(texts, query), rel=1e-9), query

    def test_japanese_voicing_marks_tell_words_apart(self, store: Store) -> None:
        memory = make_memory()
        bus, passport, lotus = self.seed(
            store,
            memory,
            [
                ("バスに乗る", unit(1), {}),
                ("パスを見せる", unit(1), {}),
                ("ハスが咲く", unit(1), {}),
            ],
        )
        for query, want in (("バス", bus), ("パス", passport), ("ハス", lotus)):
            with store.read() as r:
                hits = r.keyword_candidates(Scope.of(memory.id), query, EntryFilter(), 10)
            assert [i for i, _ in hits] == [want], query
