"""The benchmark of a move and a job change in nine languages (issue 52): its data says what
it means to (each turn fills the slots its mark names, in its own language; a question fills
none), and its entry point runs through REST with a fake embedder in seconds."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.quality import slots_data, slots_every_language

from recallery.testing import DeterministicEmbedder
from recallery.text.cues import language
from recallery.text.slots import slots

FILLS = {"intro": {"home", "work"}, "change": {"work"}, "move": {"home"}}


def test_each_turn_fills_the_slots_its_mark_names_in_its_own_language() -> None:
    for lang in slots_data.LANGUAGES:
        turns, asked = slots_data.conversation(lang)
        assert len({s.user for s in turns}) == 3 and len(asked) == 6
        for s in turns:
            assert language(s.text) == lang, s.text
            assert set(slots(s.text)) == FILLS.get(s.label.rsplit("/", 1)[1], set()), s.text
        for q in asked:
            assert language(q.text) == lang and slots(q.text) == {}, q.text


def test_the_benchmark_runs_through_rest_and_writes_its_results(tmp_path: Path) -> None:
    out = tmp_path / "slots.json"
    argv = ["--languages", "en,zh,ru", "--out", str(out)]
    result = slots_every_language.main(argv, embedder=DeterministicEmbedder(dimension=384))
    assert json.loads(out.read_text("utf-8")) == result
    for by_setting in result["results"].values():
        for measures in by_setting.values():
            assert set(measures) == {"en", "zh", "ru"}
            assert all(0 <= m["R@1"] <= 100 and m["n"] == 6 for m in measures.values())
    assert "| zh |" in slots_every_language.table(result)
