"""Turns stored before a change of the slot patterns get today's slots and supersession links
from that change's migration of each store (SQLite 16 to 20; PostgreSQL 23, 25 to 27, 30: one
``reslot``, run once for a store several changes behind): the same rows writing them today
gives, keyed per user (several people in one memory, Chinese, Russian, German, Japanese,
Korean, Spanish and English turns, one person changing language), turns read as before left
as they were."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from recallery import Engine, Memory
from recallery.providers.registry import ModelRegistry
from recallery.requests import TurnInput
from recallery.store import supersession
from recallery.store.base import Store
from recallery.store.sqlite import SQLiteStore
from recallery.store.supersession import reslot
from recallery.testing import DeterministicEmbedder, FrozenClock

#: (user, text) in the order said, a day apart.
TURNS = [
    ("u1", "我住在成都，在一家公司当会计。"),
    ("u2", "Я живу в Казани и работаю бухгалтером."),
    ("u3", "I live in Lisbon and I work as a nurse."),
    ("u1", "我换了工作，现在在腾讯上班。"),
    ("u2", "Я в прошлом месяце переехала в Самару."),
    ("u3", "我上个月搬到了上海。"),  # u3 moves, now in Chinese: it supersedes the English turn
    ("u1", "Ich wohne jetzt in Wien, die Stadt ist schön."),
    ("u2", "Я живу в Самаре."),  # the same city in another case: no new value
]
Rows = tuple[set[tuple[int, str, str, str]], set[tuple[int, int]]]
Execute = Callable[[str, list[object]], object]
Pair = tuple[int, int]


def write(store: Store, turns: list[tuple[str, str]] = TURNS) -> tuple[list[int], Memory]:
    """``turns`` written into one memory through the engine, a day apart."""
    clock = FrozenClock()
    embedder = DeterministicEmbedder()
    engine = Engine(store, models=ModelRegistry(builtin=lambda: embedder), clock=clock)
    owner = engine.principal(engine.create_user("owner").id)
    memory = engine.create_memory(
        owner, name="team", memory_type=["raw"], embd_id="x@Builtin", llm_id="x@Y"
    )
    ids = []
    for user, text in turns:
        turn = TurnInput(f"User Input: {text}\nAgent Response: Noted.", user_id=user)
        (e,) = engine.add_messages(owner, [memory.id], [turn])
        ids.append(int(e.message_id))
        clock.advance(days=1)
    engine.usage.close()
    engine.request_recorder.close()
    return ids, memory


def rows(store: Store) -> Rows:
    with store.read() as r:
        slots = r.conn.execute("SELECT message_id, user_id, slot, value FROM turn_slots")
        links = r.conn.execute("SELECT older, newer FROM supersessions")
    return {(int(i), str(u), str(s), str(v)) for i, u, s, v in slots}, {
        (int(a), int(b)) for a, b in links
    }


def expected(ids: list[int]) -> Rows:
    by = dict(enumerate(ids))
    slots = {
        (by[0], "u1", "home", "成都"),
        (by[0], "u1", "work", "会计"),
        (by[1], "u2", "home", "казан"),
        (by[1], "u2", "work", "бухгалтер"),
        (by[2], "u3", "home", "lisbon and i work as a nurse"),
        (by[2], "u3", "work", "a nurse"),
        (by[3], "u1", "work", "腾讯"),
        (by[4], "u2", "home", "самар"),
        (by[5], "u3", "home", "上海"),
        (by[6], "u1", "home", "wien"),
        (by[7], "u2", "home", "самар"),
    }
    links = {(by[0], by[3]), (by[0], by[6]), (by[1], by[4]), (by[1], by[7]), (by[2], by[5])}
    return slots, links


def unread(execute: Execute, ids: list[int]) -> None:
    """``ids`` as turns the patterns before read nothing in: no slots, no links."""
    marks = ",".join("?" * len(ids))
    execute(f"DELETE FROM turn_slots WHERE message_id IN ({marks})", ids)
    execute(f"DELETE FROM supersessions WHERE older IN ({marks}) OR newer IN ({marks})", ids * 2)


def misread(execute: Execute, memory: Memory, values: dict[int, str], links: list[Pair]) -> None:
    """The value the patterns before read in each turn of ``values``, and the links
    (older, newer) that reading made."""
    for message_id, value in values.items():
        execute("UPDATE turn_slots SET value = ? WHERE message_id = ?", [value, message_id])
    for older, newer in links:
        execute(
            "INSERT INTO supersessions (tenant_id, older, newer, memory_id) VALUES (?, ?, ?, ?)",
            [memory.tenant_id, older, newer, memory.id],
        )


def as_stored_before(ids: list[int], memory: Memory, execute: Execute) -> None:
    """What the store held before: slots and links of the English turn only."""
    unread(
        execute, [i for i, (_, text) in zip(ids, TURNS, strict=True) if not text.startswith("I ")]
    )


#: Japanese and Korean turns whose joined clause speaks of someone else (issue 52): u1's
#: sister's home and job, then u1's own job; u2's own home and job, then u2's sister's.
JOINED = [
    ("u1", "姉は大阪に住んでいて、銀行で働いています。"),
    ("u2", "저는 부산에 살고 은행에서 일해요."),
    ("u1", "私はパン屋で働いています。"),
    ("u2", "언니는 서울에 살고 병원에서 일해요."),
    ("u3", "I live in Lisbon and I work as a nurse."),
    ("u4", "Ich wohne in Berlin mit meiner Familie."),  # u4 lives in Berlin, with company
    ("u4", "Ich wohne jetzt in Berlin."),  # still Berlin: no move
]


def joined_today(ids: list[int]) -> Rows:
    slots = {
        (ids[1], "u2", "home", "부산"),
        (ids[1], "u2", "work", "은행"),
        (ids[2], "u1", "work", "パン屋"),
        (ids[4], "u3", "home", "lisbon and i work as a nurse"),
        (ids[4], "u3", "work", "a nurse"),
        (ids[5], "u4", "home", "berlin"),
        (ids[6], "u4", "home", "berlin"),
    }
    return slots, set()  # nobody changed their own home or job


def joined_as_read_before(ids: list[int], memory: Memory, execute: Execute) -> None:
    """What the patterns before gave: the joined clause as the speaker's (u1's sister's
    bank, u2's sister's hospital), u4's company as part of the home, and the links those
    made with each speaker's own job and home."""
    for message_id, user, slot, value in [
        (ids[0], "u1", "home", "大阪"),
        (ids[0], "u1", "work", "銀行"),
        (ids[3], "u2", "work", "병원"),
    ]:
        execute(
            "INSERT INTO turn_slots (tenant_id, message_id, memory_id, user_id, slot, value) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [memory.tenant_id, message_id, memory.id, user, slot, value],
        )
    # u4's company read as part of the home: a move to the same city
    links = [(ids[0], ids[2]), (ids[1], ids[3]), (ids[5], ids[6])]
    misread(execute, memory, {ids[5]: "berlin mit meiner familie"}, links)


#: Statements opened by a time word, or too short to name their language (issue 52): three
#: people who each move, and an English turn the patterns read as they always did.
TIMED = [
    ("u1", "Vivo en Madrid."),
    ("u2", "저는 서울에 살아요."),
    ("u3", "私は京都に住んでいます。"),
    ("u1", "Ayer me mudé a Valencia."),
    ("u2", "오늘 부산으로 이사했어요."),
    ("u3", "今日は東京に引っ越しました。"),
    ("u4", "I live in Lisbon and I work as a nurse."),
    ("u5", "I moved to Porto yesterday."),
    ("u5", "I live in Porto."),  # the same home: no move
]


def timed_today(ids: list[int]) -> Rows:
    slots = {
        (ids[0], "u1", "home", "madrid"),
        (ids[1], "u2", "home", "서울"),
        (ids[2], "u3", "home", "京都"),
        (ids[3], "u1", "home", "valencia"),
        (ids[4], "u2", "home", "부산"),
        (ids[5], "u3", "home", "東京"),
        (ids[6], "u4", "home", "lisbon and i work as a nurse"),
        (ids[6], "u4", "work", "a nurse"),
        (ids[7], "u5", "home", "porto"),
        (ids[8], "u5", "home", "porto"),
    }
    return slots, {(ids[0], ids[3]), (ids[1], ids[4]), (ids[2], ids[5])}


def timed_as_read_before(ids: list[int], memory: Memory, execute: Execute) -> None:
    """What the patterns before gave: the Spanish turns read as English (no slot), the
    Japanese move opened by 今日は none, the Korean and English ones' time word part of their
    value (and so u5's later "I live in Porto" a move)."""
    unread(execute, [ids[0], ids[3], ids[5]])
    misread(execute, memory, {ids[4]: "오늘 부산", ids[7]: "porto yesterday"}, [(ids[7], ids[8])])


BEGUN = [
    ("u6", "I have been living in Berlin for two years."),
    ("u7", "I work at a bakery."),
    ("u8", "我住在成都。"),
    ("u6", "I moved to Hamburg."),
    ("u7", "I started working at Google."),
    ("u8", "I've been working as a nurse since 2019."),
    ("u8", "My sister has been living in Berlin for years."),
    ("u8", "I was hired by the hospital."),
]


def begun_today(ids: list[int]) -> Rows:
    slots = {
        (ids[0], "u6", "home", "berlin"),
        (ids[1], "u7", "work", "a bakery"),
        (ids[2], "u8", "home", "成都"),
        (ids[3], "u6", "home", "hamburg"),
        (ids[4], "u7", "work", "google"),
        (ids[5], "u8", "work", "a nurse"),
        (ids[7], "u8", "work", "the hospital"),
    }
    return slots, {(ids[0], ids[3]), (ids[1], ids[4]), (ids[5], ids[7])}


def begun_as_read_before(ids: list[int], memory: Memory, execute: Execute) -> None:
    """What the patterns before gave: nothing in what one has been doing, started doing or
    was hired for, so neither u6's move nor u7's and u8's new jobs superseded anything."""
    unread(execute, [ids[0], ids[4], ids[5], ids[7]])


#: Hindi and Thai beside English and Chinese: u9 lives in Delhi and moves to Pune, u10 works
#: as an accountant in Thai and then at a bank, u11's sister moves (nobody's slot).
HINDI_THAI = [
    ("u9", "मैं दिल्ली में रहती हूँ।"),
    ("u10", "ฉันทำงานเป็นพนักงานบัญชี"),
    ("u11", "I live in Lisbon."),
    ("u9", "मैं पिछले महीने पुणे शिफ्ट हो गई।"),
    ("u10", "ตอนนี้ฉันทำงานที่ธนาคารกสิกร"),
    ("u11", "พี่สาวของฉันย้ายไปมอสโกเมื่อปีที่แล้ว"),
]


def hindi_thai_today(ids: list[int]) -> Rows:
    slots = {
        (ids[0], "u9", "home", "दिल्ली"),
        (ids[1], "u10", "work", "พนักงานบัญชี"),
        (ids[2], "u11", "home", "lisbon"),
        (ids[3], "u9", "home", "पुणे"),
        (ids[4], "u10", "work", "ธนาคารกสิกร"),
    }
    return slots, {(ids[0], ids[3]), (ids[1], ids[4])}


def hindi_thai_as_read_before(ids: list[int], memory: Memory, execute: Execute) -> None:
    """What the patterns before gave: nothing in Hindi or Thai, so no move or new job there
    superseded anything."""
    unread(execute, [ids[0], ids[1], ids[3], ids[4]])


#: Each pattern change's migration (SQLite, PostgreSQL): the turns, what the patterns before
#: made of them, how many slots or links that left, and what writing them today gives.
Scenario = tuple[
    list[tuple[str, str]],
    Callable[[list[int], Memory, Execute], None],
    str,
    int,
    Callable[[list[int]], Rows],
]
SCENARIOS: dict[str, tuple[int, int, Scenario]] = {
    "other languages gained slots": (16, 23, (TURNS, as_stored_before, "turn_slots", 2, expected)),
    "a joined clause keeps its subject": (
        17, 25, (JOINED, joined_as_read_before, "supersessions", 3, joined_today)
    ),
    "time words and short sentences": (
        18, 26, (TIMED, timed_as_read_before, "supersessions", 2, timed_today)
    ),
    "English begun and going on": (
        19, 27, (BEGUN, begun_as_read_before, "supersessions", 0, begun_today)
    ),
    "Hindi and Thai gained slots": (
        20, 30, (HINDI_THAI, hindi_thai_as_read_before, "supersessions", 0, hindi_thai_today)
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", SCENARIOS)
def test_written_today_every_turn_has_todays_slots_and_links(tmp_path: Path, name: str) -> None:
    turns, _, _, _, today = SCENARIOS[name][2]
    store = SQLiteStore(tmp_path / "today.db")
    try:
        ids, _ = write(store, turns)
        assert rows(store) == today(ids)
    finally:
        store.close()


@pytest.mark.parametrize("name", SCENARIOS)
def test_sqlite_turns_read_before_come_out_of_their_migration_as_written_today(
    tmp_path: Path, name: str
) -> None:
    version, _, (turns, read_before, table, held, today) = SCENARIOS[name]
    path = tmp_path / "db.sqlite"
    store = SQLiteStore(path)
    ids, memory = write(store, turns)
    store.close()
    conn = sqlite3.connect(path)
    read_before(ids, memory, conn.execute)
    conn.execute("DELETE FROM schema_migrations WHERE version = ?", [version])
    conn.commit()
    assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == held
    conn.close()
    store = SQLiteStore(path)
    try:
        assert rows(store) == today(ids)
        with store.write() as w:  # every turn read as today: nothing is made again
            assert reslot(w.conn) == 0
        assert rows(store) == today(ids)
    finally:
        store.close()


@pytest.mark.postgres
@pytest.mark.parametrize("name", SCENARIOS)
def test_postgres_turns_read_before_come_out_of_their_migration_as_written_today(
    postgres_dsn: str, name: str
) -> None:
    from recallery.store.postgres import PostgresStore
    from recallery.testing.postgres import truncate_all

    _, version, (turns, read_before, table, held, today) = SCENARIOS[name]
    truncate_all(postgres_dsn)
    store = PostgresStore(postgres_dsn, pool_size=1)
    ids, memory = write(store, turns)
    with store.write() as w:
        read_before(ids, memory, w.conn.execute)
        w.conn.execute("DELETE FROM schema_migrations WHERE version = ?", [version])
        assert w.conn.execute(f"SELECT count(*) FROM {table}")[0][0] == held
    store.close()
    store = PostgresStore(postgres_dsn, pool_size=1)
    try:
        assert rows(store) == today(ids)
    finally:
        store.close()


def test_a_store_several_pattern_changes_behind_reads_its_turns_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Missing migrations 16 to 19, the store runs ``reslot`` for the last only (each run
    reads every stored turn with today's patterns), records all four, and holds today's
    slots and links for the turns of two pattern changes."""
    path = tmp_path / "db.sqlite"
    store = SQLiteStore(path)
    ids, memory = write(store, TIMED + BEGUN)
    store.close()
    conn = sqlite3.connect(path)
    timed_as_read_before(ids[: len(TIMED)], memory, conn.execute)
    begun_as_read_before(ids[len(TIMED) :], memory, conn.execute)
    conn.execute("DELETE FROM schema_migrations WHERE version BETWEEN 16 AND 19")
    conn.commit()
    conn.close()
    runs = []
    read = supersession._raw_turns
    monkeypatch.setattr(supersession, "_raw_turns", lambda c: runs.append(1) or read(c))
    store = SQLiteStore(path)
    try:
        timed, begun = timed_today(ids[: len(TIMED)]), begun_today(ids[len(TIMED) :])
        assert rows(store) == (timed[0] | begun[0], timed[1] | begun[1])
        assert runs == [1]
        with store.read() as r:
            done = {v for (v,) in r.conn.execute("SELECT version FROM schema_migrations")}
        assert {16, 17, 18, 19} <= done
    finally:
        store.close()
