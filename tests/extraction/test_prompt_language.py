"""Extraction keeps the language of the conversation: the default prompt says so, the model is
asked for it on every turn, and facts written in the turn's language are stored as written and
found by a keyword search in that language."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from tests.support.extraction import extracted, facts, say

from recallery import Engine, EntryType, Memory, Principal, SearchRequest
from recallery.extraction import prompts, prompts_reconcile
from recallery.jobs import Worker
from recallery.models import Memory as MemoryModel
from recallery.testing import FakeLLM

S, E, P = EntryType.SEMANTIC, EntryType.EPISODIC, EntryType.PROCEDURAL


def test_the_default_prompt_says_to_keep_the_conversations_language() -> None:
    prompt = prompts.default_system_prompt([S, E, P])
    assert prompts.KEEP_LANGUAGE in prompt
    assert "Do not translate" in prompt
    assert "in any language" in prompts_reconcile.SYSTEM


def test_a_default_stored_before_the_language_rule_is_still_a_default() -> None:
    """Memories created before the rule stored the old default: it is recognised and
    regenerated with the rule, not kept as a custom prompt."""
    before = "\n\n".join(
        [
            prompts.ROLE,
            prompts.INSTRUCTIONS[S],
            prompts.requirements([S], 5, keep_language=False),
            prompts.output_format([S]),
            prompts.examples([S]),
        ]
    )
    assert prompts.KEEP_LANGUAGE not in before
    stored = MemoryModel(
        id="m",
        tenant_id="t",
        name="n",
        memory_types=(EntryType.RAW, S),
        embd_id="e",
        llm_id="l",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        updated_at=datetime(2026, 1, 1, tzinfo=UTC),
        system_prompt=before,
    )
    assert prompts.is_default_prompt(before, [S])
    assert prompts.KEEP_LANGUAGE in prompts.system_prompt(stored, 5)


def test_a_chinese_turn_is_extracted_in_chinese_and_found_by_its_words(
    engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM, worker: Worker
) -> None:
    say(engine, alice, mem, "我去年搬到了上海，现在在一家医院当护士。", user_id="li")
    say(engine, alice, mem, "I moved to Lisbon and I work as a pilot.", user_id="bob")
    llm.push(facts(semantic=["用户住在上海", "用户在医院当护士"]))
    llm.push(facts(semantic=["The user lives in Lisbon", "The user works as a pilot"]))
    assert worker.run_once() and worker.run_once()
    for body in llm.chat_requests()[:2]:
        system = next(m["content"] for m in body["messages"] if m["role"] == "system")
        assert prompts.KEEP_LANGUAGE in system
    asked = json.dumps(llm.chat_requests()[0], ensure_ascii=False)
    assert "我去年搬到了上海" in asked
    contents = {(e.user_id, e.content) for e in extracted(engine, mem)}
    assert ("li", "用户住在上海") in contents and ("bob", "The user lives in Lisbon") in contents
    hits = engine.search(
        alice,
        SearchRequest(
            "护士",
            (mem.id,),
            types=frozenset({S}),
            keywords_similarity_weight=1.0,
            similarity_threshold=0.0,
        ),
    )
    assert [h.entry.content for h in hits][:1] == ["用户在医院当护士"]
