"""Stored JSON as people read it (issue 54 item 5): a task's result on the Messages and Jobs
pages, and an audit event's before and after on an entry's page and the audit log, are one
``key: value`` row per field (a change ``key: old → new``), never raw JSON. Real extraction
over the fake chat model, three users in one memory, one writing Russian, one Chinese."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from tests.support.extraction import CONFIG, build_engine, facts, make_memory, say
from tests.support.web import Login

from recallery import Engine, Principal
from recallery.jobs import Worker
from recallery.store.base import Store
from recallery.testing import DeterministicEmbedder, FakeLLM, FrozenClock
from recallery.web.fields import Change, changes, fields, text

#: What raw JSON on a page looks like once escaped: a quoted key.
RAW_JSON = re.compile(r"&#34;\w+&#34;:")


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def engine(
    store: Store, embedder: DeterministicEmbedder, clock: FrozenClock, llm: FakeLLM
) -> Iterator[Engine]:
    e = build_engine(store, embedder, clock, llm)
    yield e
    e.usage.close()


def test_a_task_result_reads_as_rows_with_its_entries_linked(
    login: Login, alice_key: str, engine: Engine, alice: Principal, llm: FakeLLM
) -> None:
    mem = make_memory(engine, alice)
    worker = Worker(engine, config=CONFIG, owner="web-test")
    turn = say(engine, alice, mem, "Я живу в Москве.", user_id="ivan")
    say(engine, alice, mem, "我住在上海。", user_id="ana")
    say(engine, alice, mem, "I like tea.", user_id="tom")
    llm.push(
        facts(semantic=["Пользователь живёт в Москве"]),
        facts(semantic=["用户住在上海"]),
        facts(semantic=["The user likes tea"]),
    )
    assert worker.run_until_idle() == 3
    (added,) = engine.list_messages(alice, mem.id).extracted[turn.message_id]
    c = login(alice_key)
    html = c.get(f"/memories/{mem.id}/messages").text
    row = html.split(f'id="turn-{turn.message_id}"')[1].split("</tbody>\n</tbody>")[0]
    result = row.split('<dl class="kv result">')[1].split("</dl>")[0]
    assert "<dt>llm · calls</dt><dd>1</dd>" in result
    link = f'<a href="/memories/{mem.id}/entries/{added.message_id}">#{added.message_id}</a>'
    assert f"<dt>entry_ids · added</dt><dd>{link}</dd>" in result
    assert "<dt>entry_ids · deduped</dt><dd>none</dd>" in result
    assert not RAW_JSON.search(html)  # before: the result as indented JSON
    jobs = c.get(f"/memories/{mem.id}/jobs").text
    assert jobs.count('<dl class="kv result">') == 3 and not RAW_JSON.search(jobs)


def test_an_audit_change_reads_key_old_to_new_on_the_entry_page_and_the_log(
    login: Login, alice_key: str, engine: Engine, alice: Principal
) -> None:
    mem = engine.create_memory(
        alice, name="заметки 笔记", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    (turn,) = engine.add_turn(alice, [mem.id], user_input="Привет", agent_response="ok")
    engine.update_memory(alice, mem.id, {"name": "заметки"})
    engine.forget(alice, mem.id, turn.message_id)
    c = login(alice_key)
    entry = c.get(f"/memories/{mem.id}/entries/{turn.message_id}").text
    assert '<dt>forget_at</dt><dd><span class="was">none</span> → 20' in entry
    log = c.get(f"/audit?memory={mem.id}").text
    renamed = '<dt>name</dt><dd><span class="was">заметки 笔记</span> → заметки</dd>'
    assert renamed in log
    assert "<dt>memory_type</dt><dd>raw</dd>" in log  # the creation: its values, no arrow
    for page in (entry, log):
        assert not RAW_JSON.search(page)  # before: {"name": "..."} → {"name": "..."}


def test_rows_flatten_nested_values_and_a_change_names_each_side() -> None:
    result = {"llm": {"calls": 2, "latency_ms": 1530}, "problems": ["a", "b"], "ok": True}
    assert [(k, str(v)) for k, v in fields(result)] == [
        ("llm · calls", "2"),
        ("llm · latency_ms", "1530"),
        ("problems", "a, b"),
        ("ok", "yes"),
    ]
    assert [str(v) for _, v in fields({"x": "<b>"})] == ["&lt;b&gt;"]  # escaped
    assert text("2025-01-02T03:04:05+00:00") == "2025-01-02 03:04:05"
    assert changes({"trust": "unverified", "gone": 1}, {"trust": "confirmed", "new": None}) == [
        Change("trust", "unverified", "confirmed"),
        Change("gone", "1", None),
        Change("new", None, "none"),
    ]
