"""What extraction did, as the pages say it. Each turn on the Messages page says what became
of what it said (issue 54 item 1): the fact it added (still current, replaced since, erased
since), the entry it repeated, the entry its fact superseded, with links; its summary counts
those outcomes, never "0 extracted" for a turn whose fact was a repeat. The Jobs page counts
each turn once, by its newest job, offers no Retry on a job a retry replaced, and a failed
model call has its real duration (item 3). Real extraction jobs over the fake chat model,
three users in one memory, one of them writing Chinese."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from tests.support.extraction import CONFIG, build_engine, facts, judgement, make_memory, say
from tests.support.web import Login

from recallery import Engine, Memory, Principal
from recallery.errors import ChatError
from recallery.jobs import Worker
from recallery.models import Entry
from recallery.providers.base import ChatReply, ChatRequest
from recallery.providers.usage import Meter
from recallery.store.base import Store
from recallery.testing import DeterministicEmbedder, FakeLLM, FrozenClock, Reply


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


def _row(html: str, turn: Entry) -> str:
    """The Messages page's rows of one turn."""
    return html.split(f'id="turn-{turn.message_id}"')[1].split("</tbody>\n</tbody>")[0]


def _summary(row: str, turn: Entry) -> str:
    found = re.search(rf'id="outcome-{turn.message_id}">([^<]*)<', row)
    assert found, "no outcome summary"
    return found.group(1)


@pytest.fixture
def seeded(
    engine: Engine, alice: Principal, llm: FakeLLM, clock: FrozenClock
) -> tuple[Memory, dict[str, Entry], dict[str, int]]:
    mem = make_memory(engine, alice)
    worker = Worker(engine, config=CONFIG, owner="web-test")
    turns: dict[str, Entry] = {}
    turns["lisbon"] = say(engine, alice, mem, "I live in Lisbon.", user_id="tom")
    llm.push(facts(semantic=["The user lives in Lisbon"]))
    worker.run_once()
    turns["again"] = say(engine, alice, mem, "As I said, I'm in Lisbon.", user_id="tom")
    llm.push(facts(semantic=["The user lives in Lisbon."]))
    worker.run_once()
    clock.advance(days=30)
    turns["moved"] = say(engine, alice, mem, "I moved from Lisbon to Berlin.", user_id="tom")
    llm.push(facts(semantic=["The user lives in Berlin"]), judgement("supersedes", 1))
    worker.run_once()
    turns["ana"] = say(engine, alice, mem, "我住在上海。", user_id="ana")
    llm.push(facts(semantic=["用户住在上海"]))
    worker.run_once()
    turns["li"] = say(engine, alice, mem, "Привет!", user_id="li")
    llm.push(facts())
    worker.run_once()
    by_content = {
        e.content: e.message_id
        for t in engine.list_messages(alice, mem.id).replaced.values()
        for e in t
    }
    current = {
        e.content: e.message_id
        for t in engine.list_messages(alice, mem.id).extracted.values()
        for e in t
    }
    ids = {
        "lisbon": by_content["The user lives in Lisbon"],
        "berlin": current["The user lives in Berlin"],
        "shanghai": current["用户住在上海"],
    }
    engine.erase(alice, mem.id, ids["shanghai"], reason="ana asked")
    return mem, turns, ids


def test_each_turn_says_what_became_of_its_facts(
    login: Login,
    alice_key: str,
    seeded: tuple[Memory, dict[str, Entry], dict[str, int]],
) -> None:
    mem, turns, ids = seeded
    html = login(alice_key).get(f"/memories/{mem.id}/messages").text
    at = f"/memories/{mem.id}/entries/"

    first = _row(html, turns["lisbon"])
    assert _summary(first, turns["lisbon"]) == "1 replaced since"
    assert f'<a href="{at}{ids["lisbon"]}">#{ids["lisbon"]}</a>, replaced since by' in first
    assert f'<a href="{at}{ids["berlin"]}">#{ids["berlin"]}</a>' in first

    repeat = _row(html, turns["again"])  # before: "0 extracted · Nothing extracted"
    assert _summary(repeat, turns["again"]) == "1 repeated"
    assert f'repeated <a href="{at}{ids["lisbon"]}">#{ids["lisbon"]}</a>' in repeat
    assert "Nothing extracted" not in repeat

    moved = _row(html, turns["moved"])
    assert _summary(moved, turns["moved"]) == "1 extracted · 1 superseded"
    assert f'superseded <a href="{at}{ids["lisbon"]}">#{ids["lisbon"]}</a>' in moved

    ana = _row(html, turns["ana"])
    assert _summary(ana, turns["ana"]) == "1 erased since"
    assert "(ana asked)" in ana and "its tombstone and receipt" in ana
    assert "用户住在上海" not in html  # the erased text is nowhere on the page
    assert "我住在上海" in ana  # the turn itself stays

    li = _row(html, turns["li"])
    assert _summary(li, turns["li"]) == "nothing extracted"
    assert "Nothing extracted (outcome: " in li


def test_a_messages_page_carries_the_tombstones_of_facts_erased_since(
    engine: Engine,
    alice: Principal,
    seeded: tuple[Memory, dict[str, Entry], dict[str, int]],
) -> None:
    """Only the tombstones of entries the page's jobs named, read with the page."""
    mem, _, ids = seeded
    found = engine.list_messages(alice, mem.id)
    assert set(found.gone) == {ids["shanghai"]}
    assert found.gone[ids["shanghai"]].reason == "ana asked"


# --- the jobs page ----------------------------------------------------------------------------


def test_jobs_count_each_turn_by_its_newest_job_and_a_replaced_job_has_no_retry(
    login: Login, alice_key: str, engine: Engine, alice: Principal, llm: FakeLLM
) -> None:
    mem = make_memory(engine, alice)
    worker = Worker(engine, config=CONFIG, owner="web-test")
    fine = say(engine, alice, mem, "I like tea.", user_id="tom")
    flaky = say(engine, alice, mem, "我住在上海。", user_id="ana")
    llm.push(facts(semantic=["The user likes tea"]), Reply.text("not json"))
    assert worker.run_until_idle() == 2
    engine.retry_extraction(alice, mem.id, flaky.message_id)
    llm.push(Reply.text("still not json"))
    assert worker.run_once()
    engine.retry_extraction(alice, mem.id, flaky.message_id)
    llm.push(facts(semantic=["用户住在上海"]))
    assert worker.run_once()
    jobs = engine.jobs(alice, mem.id).items
    assert len(jobs) == 4
    newest = max(j.id for j in jobs if j.message_id == flaky.message_id)

    html = login(alice_key).get(f"/memories/{mem.id}/jobs").text
    states = dict(re.findall(r'class="badge job-(\w+)[^"]*">\1 (\d+)</a>', html))
    assert states == {"queued": "0", "running": "0", "done": "2", "failed": "0", "parked": "0"}
    outcomes = dict(re.findall(r'<span class="badge job-(\w+)">\1 (\d+)</span>', html))
    assert outcomes == {"done": "2"}  # before: done 3, unparseable 2... of two turns
    assert "2 earlier jobs replaced by a retry" in html
    retry = f'action="/memories/{mem.id}/entries/{flaky.message_id}/extract"'
    assert retry not in html  # the unparseable attempts were replaced by a successful retry
    assert html.count(f"replaced by job {newest}") == 2
    costs = engine.extraction_costs(alice, mem.id)
    assert (costs.jobs, costs.calls, costs.replaced) == (4, 4, 2)  # every attempt's cost counts
    assert costs.latest == {fine.message_id: min(j.id for j in jobs), flaky.message_id: newest}


def test_a_failed_model_call_counts_the_time_it_took(monkeypatch: pytest.MonkeyPatch) -> None:
    class Down:
        def complete(self, request: ChatRequest) -> ChatReply:
            raise ChatError("connection refused", transient=True)

    ticks = iter([10.0, 10.25])
    monkeypatch.setattr("recallery.providers.usage.perf_counter", lambda: next(ticks))
    usage = Meter()
    with pytest.raises(ChatError):
        usage.call(Down(), ChatRequest(messages=()))  # type: ignore[arg-type]
    assert (usage.calls, usage.latency_ms) == (1, 250)  # before: 1 call, 0 ms


# --- the facts page ---------------------------------------------------------------------------


def _fact_counts(html: str) -> dict[str, str]:
    line = html.split('id="fact-outcomes">')[1].split("</p>")[0]
    return {k: n for k, n in re.findall(r'class="outcome-(\w+)"[^>]*><strong>(\d+)</strong>', line)}


def test_the_facts_page_counts_what_became_of_the_facts(
    login: Login,
    alice_key: str,
    seeded: tuple[Memory, dict[str, Entry], dict[str, int]],
) -> None:
    """The outcomes the turns' rows name, counted over the facts the filters select: one
    current (Berlin), one repeat and one replaced (Lisbon), one erased (ana's); before, the
    page said only "1 fact"."""
    mem, _, _ = seeded
    c = login(alice_key)
    every = c.get(f"/memories/{mem.id}/facts").text
    assert _fact_counts(every) == {"current": "1", "repeated": "1", "replaced": "1", "erased": "1"}
    assert "<strong>1</strong> fact (current versions" in every
    tom = _fact_counts(c.get(f"/memories/{mem.id}/facts?user=tom").text)
    assert tom == {"current": "1", "repeated": "1", "replaced": "1"}  # ana's erasure is not tom's
    ana = _fact_counts(c.get(f"/memories/{mem.id}/facts?user=ana").text)
    assert ana == {"current": "0"}  # nor tom's facts ana's
    semantic = _fact_counts(c.get(f"/memories/{mem.id}/facts?type=semantic").text)
    assert semantic["erased"] == "1"  # a tombstone keeps its type
    assert "erased" not in _fact_counts(c.get(f"/memories/{mem.id}/facts?type=episodic").text)
