"""The support set (issue 53 item 5) and its benchmark on a tiny slice: the set is whole and
the same for a seed, and the benchmark runs through REST with a fake embedder in seconds,
writing what the README's tables are made from."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from benchmarks.quality import support_data, support_memory

from recallery.testing import DeterministicEmbedder


def test_the_set_is_the_same_for_a_seed_and_another_for_another_seed() -> None:
    assert support_data.generate(5, 2) == support_data.generate(5, 2)
    assert support_data.generate(5, 2) != support_data.generate(6, 2)


def test_every_question_names_turns_of_its_memory_and_of_the_customer_it_filters_by() -> None:
    for memory in support_data.generate(support_data.DEV_SEED):
        owner = {t.label: t.user for t in memory.turns}
        assert len(set(owner.values())) == 4  # four customers in one memory
        for q in memory.questions:
            assert q.gold and all(g in owner for g in (*q.gold, *q.stale)), q
            if q.user is not None:
                assert {owner[g] for g in (*q.gold, *q.stale)} == {q.user}, q
        texts = " ".join(t.text for t in memory.turns)
        assert re.search("[а-яё]", texts) or re.search("[\u4e00-\u9fff]", texts)


def test_the_set_holds_what_the_tuning_sets_did_not() -> None:
    memories = support_data.generate(support_data.DEV_SEED)
    kinds = Counter(q.kind for m in memories for q in m.questions)
    for kind in ("retraction", "reversal", "other slot changed", "multi-fact", "short answer"):
        assert kinds[kind] >= 4, kinds
    assert kinds["unfiltered"] >= 8
    assert sum(q.user is not None for m in memories for q in m.questions) > 100
    lengths = [len(t.text) for m in memories for t in m.turns]
    assert min(lengths) < 12 and max(lengths) > 300  # "PayPal." and a long complaint
    turns = {t.label: t.text for m in memories for t in m.turns}
    other_slot = [q for m in memories for q in m.questions if q.kind == "other slot changed"]
    assert all(" and I work as " in turns[q.gold[0]] or " based in " in turns[q.gold[0]]
               for q in other_slot)  # fmt: skip


def test_the_benchmark_runs_through_rest_and_writes_its_results(tmp_path: Path) -> None:
    out = tmp_path / "support.json"
    line = "- supersession (supersession 0)"
    argv = ["--no-locomo", "--no-madial", "--count", "1", "--memories", "1", "--only", line]
    result = support_memory.main(
        [*argv, "--out", str(out)], embedder=DeterministicEmbedder(dimension=384)
    )
    assert json.loads(out.read_text("utf-8")) == result
    systems = {support_memory.DEFAULTS, line, "BM25", "dense MiniLM", "naive min-max hybrid"}
    assert set(result["recall"]) == systems
    sets = {"support dev", "support held-out", "support all", "current facts dev"}
    assert sets <= set(result["recall"][support_memory.DEFAULTS])
    for found in result["recall"].values():
        for metrics in found.values():
            assert 0 <= metrics["R@1"] <= metrics["R@5"] <= metrics["R@10"] <= 100
    assert set(support_memory.shares(result)) == {line}
    assert "| retraction (" in support_memory.kind_table(result, [support_memory.DEFAULTS])
