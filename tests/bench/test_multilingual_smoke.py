"""The multilingual benchmark (issue 52 item 5) on a tiny slice: its set is whole, and its
entry point runs through REST with a fake embedder in seconds, writing what the README's
table is made from."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.quality import multilingual

from recallery.testing import DeterministicEmbedder


def test_the_set_has_twelve_languages_of_ten_facts_and_ten_distractors_by_three_users() -> None:
    languages = multilingual.load()
    assert [lang.code for lang in languages] == list(multilingual.LANGUAGES)
    for lang in languages:
        assert (len(lang.facts), len(lang.distractors), len(set(lang.users))) == (10, 10, 3)
        assert len({u for u, _ in lang.turns()}) == 3
        for fact in lang.facts:
            assert fact.word in fact.text, (lang.code, fact.word)
            assert all(fact.word not in d for d in lang.distractors), (lang.code, fact.word)
            assert fact.question != fact.question_en or lang.code == "en"


def test_the_benchmark_runs_through_rest_and_writes_its_results(tmp_path: Path) -> None:
    out = tmp_path / "multilingual.json"
    argv = ["--languages", "en,zh,ru,th", "--facts", "3", "--out", str(out)]
    result = multilingual.main(argv, embedder=DeterministicEmbedder(dimension=384))
    assert json.loads(out.read_text("utf-8")) == result
    assert set(result["results"]) == {"minilm", "e5", "bm25"}
    for system in result["results"].values():
        for counts in system.values():
            assert set(counts) == set(multilingual.METRICS)
            assert all(0 <= found <= asked <= 3 for found, asked in counts.values())
    # the keyword side finds a Chinese or Thai word inside a sentence; FTS5's unicode61 does
    # not (it splits Thai text only where a vowel sign or tone mark falls)
    for code in ("zh", "th"):
        assert result["results"]["minilm"][code]["keyword_exact"] == [3, 3]
    assert result["results"]["bm25"]["zh"]["keyword_exact"] == [0, 3]
    assert result["results"]["bm25"]["th"]["keyword_exact"][0] < 3
    # Chinese, Russian and Thai turns into the English-only model's memories were warned of
    assert result["write_warnings"] == {"minilm": 18, "e5": 0}  # 6 turns each
    assert "| zh | bm25 | 0 / 3 |" in multilingual.table(result)
