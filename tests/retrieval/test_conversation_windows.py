"""Conversation windows and balanced fusion: a raw turn is also found through the turns it
answers, never through turns that are hidden or erased, never across conversations; the
fusion's balance follows the embedding model, and the caller's weight is a bounded hint."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from recallery import Engine, Fusion, Memory, Principal, SearchRequest, TurnInput
from recallery.models import Scope
from recallery.providers.registry import (
    BUILTIN_KEYWORD_BALANCE,
    REMOTE_KEYWORD_BALANCE,
    ModelRegistry,
)
from recallery.retrieval.fusion import fuse, hinted_weight, rank, score
from recallery.settings import ProviderConfig, providers_from_env
from recallery.store.filters import EntryFilter
from recallery.store.sqlite import SQLiteStore

#: Turns of other conversations, so that the words below are rare in the memory.
FILLER = [
    "the bus was late again this morning",
    "I am reading a novel about sailors",
    "we painted the kitchen a pale green",
    "my sister adopted a grey cat",
    "the concert on friday was loud",
    "I bake bread every weekend",
    "our team lost the football match",
    "the garden needs more water",
]
QUESTION = "Did you ever visit the zanzibar spice market?"
REPLY = "Yes, last July, and I loved it!"


Say = Callable[..., int]


@pytest.fixture
def say(engine: Engine, alice: Principal, memory: Memory) -> Say:
    def write(text: str, session: str = "s1", user: str = "") -> int:
        turn = TurnInput(text, session_id=session, user_id=user)
        (entry,) = engine.add_messages(alice, [memory.id], [turn])
        return int(entry.message_id)

    for n, text in enumerate(FILLER):
        write(text, session=f"filler-{n % 3}")
    return write


def windows(engine: Engine, memory: Memory, query: str, f: EntryFilter | None = None) -> list[int]:
    """The best windows, asked alone and together with the keyword leg (as a search asks)."""
    scope, f = Scope.of(memory.id), f or EntryFilter()
    with engine.store.read() as r:
        found = r.window_candidates(scope, query, f, 20)
        both = r.keyword_and_windows(scope, query, f, 20, 20)
        assert (both.keyword, both.windows) == (r.keyword_candidates(scope, query, f, 20), found)
    return [i for i, _ in found]


def keywords(engine: Engine, memory: Memory, query: str) -> list[int]:
    scope = Scope.of(memory.id)
    with engine.store.read() as r:
        found = r.keyword_candidates(scope, query, EntryFilter(), 20)
        alone = r.keyword_and_windows(scope, query, EntryFilter(), 20, 0)
        assert (alone.keyword, alone.windows) == (found, [])
    return [i for i, _ in found]


def ranking(
    engine: Engine, actor: Principal, memory: Memory, query: str, **kw: object
) -> list[int]:
    fields: dict[str, object] = {"top_n": 20, "similarity_threshold": 0.0, "neighbour_span": 0}
    request = SearchRequest(query, (memory.id,), **(fields | kw))  # type: ignore[arg-type]
    return [h.entry.message_id for h in engine.search(actor, request)]


def needs_windows(engine: Engine) -> None:
    if not engine.store.keyword_windows:
        pytest.skip(f"the {engine.store.name} store keeps no conversation windows")


def test_a_reply_is_found_through_the_turn_it_answers(
    engine: Engine, alice: Principal, memory: Memory, say: Say
) -> None:
    needs_windows(engine)
    question, reply = say(QUESTION), say(REPLY)
    later = say("Anyway, how is work?")
    say(" ".join(["Meetings, reports and more meetings all week long."] * 10))
    third = say("Busy, as always.")
    assert keywords(engine, memory, "zanzibar spice") == [question]
    # the reply's window holds the question, and so does the next short turn's; a window
    # reaches past two turns only while it holds few words, so past the long turn the
    # question is out of reach
    assert set(windows(engine, memory, "zanzibar spice")) == {question, reply, later}
    assert third not in windows(engine, memory, "zanzibar spice")
    with_windows = ranking(engine, alice, memory, "zanzibar spice", fusion=Fusion.WEIGHTED)
    without = ranking(
        engine, alice, memory, "zanzibar spice", fusion=Fusion.WEIGHTED, context_weight=0.0
    )
    assert with_windows.index(reply) < with_windows.index(third)
    fillers = [i for i in without if i < question]  # written before it (ids: not from 1)
    assert without.index(reply) > min(without.index(f) for f in fillers)
    assert with_windows[0] == question


def test_a_window_of_short_turns_reaches_further_back(
    engine: Engine, alice: Principal, memory: Memory, say: Say
) -> None:
    """Sent a sentence a message, the question is several turns back: the window counts
    words, not turns, so it still reaches it (up to REACH turns back)."""
    needs_windows(engine)
    question = say(QUESTION)
    replies = [say(t) for t in ("Yes!", "Last July.", "I loved it.", "So much colour.")]
    beyond = [say(t) for t in ("Wow.", "Really?", "Tell me more.")]
    found = set(windows(engine, memory, "zanzibar spice"))
    assert found == {question, *replies, *beyond[:2]}
    assert beyond[2] not in found  # seven turns on: past REACH


def test_windows_stay_inside_one_conversation(engine: Engine, memory: Memory, say: Say) -> None:
    say(QUESTION, session="s1")
    other_session = say(REPLY, session="s2")
    other_user = say(REPLY, session="s1", user="bob")
    found = windows(engine, memory, "zanzibar")
    assert other_session not in found and other_user not in found
    only_s2 = windows(engine, memory, "zanzibar", EntryFilter(session_id="s2"))
    assert only_s2 == []


def test_windows_stay_inside_one_memory_when_several_are_searched(
    engine: Engine, alice: Principal, memory: Memory, say: Say
) -> None:
    """The same session name in two memories is two conversations: searched together, a
    window of one memory holds none of the other's turns."""
    other = engine.create_memory(
        alice,
        name="other notes",
        memory_type=["raw"],
        embd_id=memory.embd_id,
        llm_id="glm-4-flash@ZHIPU-AI",
    )
    question = say(QUESTION, session="s1")
    (reply,) = engine.add_messages(alice, [other.id], [TurnInput(REPLY, session_id="s1")])
    own_reply = say(REPLY, session="s1")
    scope, f = Scope.of(memory.id, other.id), EntryFilter()
    with engine.store.read() as r:
        found = [i for i, _ in r.window_candidates(scope, "zanzibar", f, 20)]
    assert set(found) == {question, own_reply}
    assert reply.message_id not in found


@pytest.mark.parametrize("hide", ["forget", "disable", "reject"])
def test_a_hidden_turn_lends_its_words_to_no_window(
    engine: Engine, alice: Principal, memory: Memory, say: Say, hide: str
) -> None:
    question, reply = say(QUESTION), say(REPLY)
    say("Tell me more about the spices.")
    if engine.store.keyword_windows:
        assert reply in windows(engine, memory, "zanzibar")
    if hide == "forget":
        engine.forget(alice, memory.id, question)
    elif hide == "disable":
        engine.set_status(alice, memory.id, question, False)
    else:
        engine.review(alice, memory.id, question, "rejected")
    f = EntryFilter.retrieval(valid_on=engine.clock.now())
    assert windows(engine, memory, "zanzibar", f) == []
    found = ranking(engine, alice, memory, "zanzibar")
    assert question not in found
    assert found == ranking(engine, alice, memory, "zanzibar", context_weight=0.0)


def test_a_hidden_turn_inside_a_window_adds_neither_words_nor_length(
    engine: Engine, alice: Principal, memory: Memory, say: Say
) -> None:
    """Two conversations whose visible turns are the same; in one, a forgotten turn between
    them says what the query asks for. Both replies' windows score alike."""
    say(QUESTION, session="s1")
    hidden = say("the spice spice spice market of stone town", session="s1")
    reply = say(REPLY, session="s1")
    say(QUESTION, session="s2")
    twin = say(REPLY, session="s2")
    engine.forget(alice, memory.id, hidden)
    f = EntryFilter.retrieval(valid_on=engine.clock.now())
    scope = Scope.of(memory.id)
    with engine.store.read() as r:
        found = dict(r.window_candidates(scope, "zanzibar spice market", f, 20))
    assert hidden not in found
    assert found[reply] == pytest.approx(found[twin])


def test_an_erased_turn_leaves_no_trace_in_any_window(
    engine: Engine, alice: Principal, memory: Memory, say: Say, tmp_path: Path
) -> None:
    question, reply = say(QUESTION), say(REPLY)
    say("Tell me more about the trip.")
    if engine.store.keyword_windows:
        assert reply in windows(engine, memory, "zanzibar")
    engine.erase(alice, memory.id, question)
    for query in ("zanzibar", "zanzibar spice market", "visit"):
        assert windows(engine, memory, query) == []
        assert keywords(engine, memory, query) == []
        found = ranking(engine, alice, memory, query)
        assert question not in found
        assert found == ranking(engine, alice, memory, query, context_weight=0.0)
    # the windows around it are those a rebuild from the file gives: the reply's window now
    # reaches back to the turn before the erased one
    if isinstance(engine.store, SQLiteStore):
        live = sorted(
            engine.store._indexes.keywords.scores([memory.id], "trip loved", windows=True)[1]
        )
        fresh = SQLiteStore(engine.store.path)
        try:
            fresh.warm()
            rebuilt = sorted(
                fresh._indexes.keywords.scores([memory.id], "trip loved", windows=True)[1]
            )
        finally:
            fresh.close()
        assert live == pytest.approx(rebuilt)


def test_window_words_reorder_but_never_admit(
    engine: Engine, alice: Principal, memory: Memory, say: Say
) -> None:
    say(QUESTION)
    reply = say(REPLY)
    request = SearchRequest("zanzibar", (memory.id,), similarity_threshold=0.3, neighbour_span=0)
    assert reply not in [h.entry.message_id for h in engine.search(alice, request)]


# --- pure parts --------------------------------------------------------------------------------


def test_the_callers_weight_is_a_bounded_hint_around_the_models_balance() -> None:
    assert hinted_weight(0.5, 0.5) == pytest.approx(0.5)
    assert hinted_weight(0.7, 0.5) == pytest.approx(0.55)  # RAGFlow's default
    assert hinted_weight(0.0, 0.5) == 0.0 and hinted_weight(1.0, 0.5) == 1.0
    hints = [hinted_weight(w / 10, 0.5) for w in range(1, 10)]
    assert hints == sorted(hints) and len(set(hints)) == len(hints)
    assert min(hints) == pytest.approx(0.4) and max(hints) == pytest.approx(0.6)


def test_balanced_fusion_does_not_depend_on_the_models_similarity_scale() -> None:
    keyword = [(1, 9.0), (2, 3.0)]
    cosines = {1: 0.2, 2: 0.5, 3: 0.9, 4: 0.1, 5: 0.3}
    squeezed = {i: 0.8 + 0.1 * c for i, c in cosines.items()}  # a model whose scores bunch up

    def order(vector: dict[int, float], method: Fusion) -> list[int]:
        return [
            s.message_id for s in rank(score(keyword, vector, keyword_weight=0.5, method=method))
        ]

    assert order(cosines, Fusion.BALANCED) == order(squeezed, Fusion.BALANCED)
    assert order(cosines, Fusion.WEIGHTED) != order(squeezed, Fusion.WEIGHTED)


def test_balanced_fusion_thresholds_as_weighted_fusion_does() -> None:
    keyword = [(1, 4.0)]
    vector = {1: 0.3, 2: 0.5}
    strict = fuse(keyword, vector, keyword_weight=0.7, method=Fusion.WEIGHTED, threshold=0.2)
    fused = score(
        keyword, vector, keyword_weight=0.55, method=Fusion.BALANCED, threshold_weight=0.7
    )
    assert [s.message_id for s in rank(fused, threshold=0.2)] == [s.message_id for s in strict]


def test_a_window_lifts_the_ranking_not_the_threshold() -> None:
    keyword = [(1, 4.0), (2, 1.0)]
    vector = {1: 0.1, 2: 0.1, 3: 0.1}
    windows = [(3, 6.0), (1, 4.0)]
    fused = score(
        keyword,
        vector,
        keyword_weight=0.9,
        method=Fusion.WEIGHTED,
        windows=windows,
        window_weight=1.0,
    )
    assert [s.message_id for s in rank(fused)][:2] == [1, 3]
    assert 3 not in [s.message_id for s in rank(fused, threshold=0.2)]


def test_the_keyword_balance_follows_the_embedding_model() -> None:
    providers = providers_from_env(
        {
            "RECALLERY_PROVIDER_TEI_BASE_URL": "http://tei",
            "RECALLERY_PROVIDER_TEI_KEYWORD_BALANCE": "0.2",
            "RECALLERY_PROVIDER_OPENAI_BASE_URL": "http://openai",
        }
    )
    assert providers["tei"] == ProviderConfig("http://tei", "", 0.2)
    models = ModelRegistry(providers)
    assert models.keyword_balance("all-MiniLM-L6-v2@Builtin") == BUILTIN_KEYWORD_BALANCE
    assert models.keyword_balance("text-embedding-3-small@OpenAI") == REMOTE_KEYWORD_BALANCE
    assert models.keyword_balance("bge-large@TEI") == 0.2
    assert REMOTE_KEYWORD_BALANCE < BUILTIN_KEYWORD_BALANCE


def test_one_search_checks_an_id_against_its_filter_once(
    engine: Engine, alice: Principal, memory: Memory, say: Say, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SQL check (PostgreSQL's, and SQLite's inside a write transaction) remembers ids."""
    monkeypatch.setattr(engine.store, "held_filter", lambda *_: None)
    question, reply, other = say(QUESTION), say(REPLY), say("Another turn.", session="s9")
    engine.forget(alice, memory.id, reply)
    f = EntryFilter.retrieval(valid_on=engine.clock.now())
    scope = Scope.of(memory.id)
    with engine.store.read() as r:
        asked: list[list[int]] = []
        plain = r.passing

        def counted(s: Scope, flt: EntryFilter, ids: Iterable[int]) -> set[int]:
            wanted = sorted(ids)
            asked.append(wanted)
            allowed: set[int] = plain(s, flt, wanted)
            return allowed

        r.passing = counted  # type: ignore[method-assign]
        r.remember_checks()
        check = r._passing(scope, f)
        assert check([question, reply]) == {question}
        assert check([reply, question, other]) == {question, other}
    assert asked == [sorted([question, reply]), [other]]
