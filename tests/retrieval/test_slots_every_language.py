"""Slots in every language (issue 52): a move and a job change, said in Chinese, Japanese,
Korean, German, Russian, Arabic, French, Spanish, Hindi or Thai, fill the slots an English
one does, so raw-turn supersession and the context block's stale marks work there too: only
between one person's turns (three people in one memory), with the newer turn first for a
question about the slot, and only the statement that changed marked stale. Then the
migration that gives turns stored before their slots, on both stores."""

from __future__ import annotations

import pytest

from recallery import Engine, SearchRequest
from recallery.models import Memory, Principal
from recallery.requests import TurnInput
from recallery.store.base import Store
from recallery.testing import FrozenClock
from recallery.text.cues import language
from recallery.text.slots import slots, statements, superseded

#: Per language: a turn of two facts (home and work), a job change, a move, another person's
#: home, and a question about home. Values in :data:`VALUES`.
CASES: dict[str, tuple[str, str, str, str, str]] = {
    "zh": ("我住在成都，在一家公司当会计。", "我换了工作，现在在腾讯上班。", "我上个月搬到了上海。",
           "我住在西安。", "我住在哪里？"),
    "ja": ("私は大阪に住んでいて、銀行で働いています。", "先月、楽天に転職しました。",
           "先週、東京に引っ越しました。", "私は京都に住んでいます。",
           "私はどこに住んでいますか？"),
    "ko": ("저는 부산에 살고 은행에서 일해요.", "얼마 전에 삼성에 취직했어요.",
           "지난달에 서울로 이사했어요.", "저는 대구에 살아요.", "저는 어디에 살아요?"),
    "de": ("Ich wohne in Köln und arbeite als Lehrerin an einer Schule.",
           "Ich habe jetzt eine neue Stelle als Ärztin in einer Klinik.",
           "Wir sind letzten Monat nach Hamburg gezogen, die Wohnung ist schön.",
           "Ich wohne in Leipzig, das ist eine schöne Stadt.", "Wo wohne ich?"),
    "ru": ("Я живу в Казани и работаю бухгалтером.", "Я теперь работаю учителем в школе.",
           "Я в прошлом месяце переехала в Самару.", "Я живу в Перми.", "Где я живу?"),
    "ar": ("أنا أعيش في القاهرة وأعمل مهندسا.", "أعمل الآن طبيبا في مستشفى.",
           "انتقلت إلى دبي الشهر الماضي.", "أنا أعيش في الإسكندرية.", "أين أعيش؟"),
    "fr": ("J'habite à Lyon et je travaille comme infirmière dans un hôpital.",
           "Je travaille maintenant chez Airbus et je suis très contente de mon poste.",
           "J'ai déménagé à Lille le mois dernier avec ma famille.",
           "J'habite à Nantes avec mon mari et nos enfants.", "Où est-ce que j'habite ?"),
    "es": ("Vivo en Madrid y trabajo como profesora en un colegio.",
           "Desde el lunes trabajo de enfermera en el hospital de la ciudad y estoy muy contenta.",
           "Me he mudado a Sevilla con mi familia el mes pasado.",
           "Vivo en Valencia con mi marido y mis hijos.", "¿Dónde vivo?"),
    "hi": ("मैं दिल्ली में रहती हूँ और एक बैंक में काम करती हूँ।", "मैं अब इंफोसिस में काम करता हूँ।",
           "मैं पिछले महीने पुणे शिफ्ट हो गई।", "मैं लखनऊ में रहता हूँ।", "मैं कहाँ रहती हूँ?"),
    "th": ("ฉันอาศัยอยู่ที่กรุงเทพและทำงานเป็นพนักงานบัญชี", "ตอนนี้ฉันทำงานที่ธนาคารกสิกร",
           "ฉันย้ายไปเชียงใหม่เมื่อเดือนที่แล้ว", "ฉันอยู่ที่ขอนแก่นกับครอบครัว", "ฉันอยู่ที่ไหน"),
}  # fmt: skip
#: The values each turn of :data:`CASES` fills: home, work (intro), work (change), home (move).
VALUES: dict[str, tuple[str, str, str, str]] = {
    "zh": ("成都", "会计", "腾讯", "上海"),
    "ja": ("大阪", "銀行", "楽天", "東京"),
    "ko": ("부산", "은행", "삼성", "서울"),
    "de": ("köln", "lehrerin an einer schule", "ärztin in einer klinik", "hamburg"),
    "ru": ("казан", "бухгалтер", "учител в школ", "самар"),
    "ar": ("قاهر", "مهندس", "طبيب في مستشفي", "دب"),
    "fr": ("lyon", "infirmière dans un hôpital", "airbus", "lille"),
    "es": ("madrid", "profesora en un colegio", "enfermera en el hospital de la ciudad",
           "sevilla"),
    "hi": ("दिल्ली", "बैंक", "इंफोसिस", "पुणे"),
    "th": ("กรุงเทพ", "พนักงานบัญชี", "ธนาคารกสิกร", "เชียงใหม่"),
}  # fmt: skip
LANGUAGES = sorted(CASES)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_language_fills_home_and_work_in_its_own_words(lang: str) -> None:
    intro, change, move, theirs, question = CASES[lang]
    home, work, new_work, new_home = VALUES[lang]
    assert {language(t) for t in CASES[lang]} == {lang}
    assert slots(f"User Input: {intro}\nAgent Response: I live in Paris.") == {
        "home": home,
        "work": work,
    }
    assert slots(change) == {"work": new_work}
    assert slots(move) == {"home": new_home}
    assert set(slots(theirs)) == {"home"}
    assert slots(question) == {}  # a question states nothing


@pytest.mark.parametrize(
    "text",
    [
        "我姐姐去年搬到了莫斯科。",
        "姉は去年、モスクワに引っ越しました。",
        "언니는 부산에 살아요.",
        "Meine Schwester ist letztes Jahr nach Moskau gezogen.",
        "Sie wohnt in Köln und arbeitet als Lehrerin an einer Schule.",
        "Моя сестра в прошлом году переехала в Москву.",
        "أختي تعيش في موسكو منذ سنتين مع زوجها.",
        "Ma sœur habite à Moscou avec son mari depuis deux ans.",
        "Mi hermana vive en Moscú con su marido desde hace dos años.",
        "我现在住在哪里？我搬家了吗？",
        "私の仕事は何ですか？",
        "Кем я сейчас работаю?",
        "أين أعمل الآن؟",  # the Arabic question mark ends the sentence, and no value holds it
        "मेरी बहन मुंबई में रहती है और बैंक में काम करती हैं।",  # the sister's (है, not हूँ)
        "पिछले साल मेरा भाई पुणे शिफ्ट हो गया।",
        "พี่สาวของฉันย้ายไปมอสโกเมื่อปีที่แล้ว",  # ของฉัน, "my", opens no clause
        "พี่สาวอยู่ที่กรุงเทพและทำงานเป็นพยาบาล",  # the clause after และ is the sister's too
        "ตอนนี้ฉันทำงานที่ไหน",
    ],
)
def test_another_person_or_a_question_fills_no_slot(text: str) -> None:
    assert slots(text) == {}


@pytest.mark.parametrize(
    ("text", "filled"),
    [
        ("姉は大阪に住んでいて、銀行で働いています。", {}),  # the sister's home and job
        ("姉は医者で、母は京都に住んでいて、東京の銀行で働いています。", {}),  # the mother's
        ("姉は大阪に住んでいて、私は銀行で働いています。", {"work": "銀行"}),
        ("大阪に住んでいて、銀行で働いています。", {"home": "大阪", "work": "銀行"}),
        ("언니는 부산에 살고 은행에서 일해요.", {}),
        ("언니는 부산에 살고 저는 은행에서 일해요.", {"work": "은행"}),
        ("지금 저는 부산에 살고 은행에서 일해요.", {"home": "부산", "work": "은행"}),
    ],
)
def test_a_joined_clause_goes_on_with_its_subject(text: str, filled: dict[str, str]) -> None:
    """A Japanese clause after a te-form and a Korean one after -고 that name no subject
    are said of the subject before them: another person's, the speaker's, or nobody named
    (the speaker)."""
    assert slots(text) == filled


@pytest.mark.parametrize(
    ("with_whom", "alone"),
    [
        ("Ich wohne in Berlin mit meiner Familie.", "Ich wohne jetzt in Berlin."),
        ("J'habite à Lyon avec mon mari et nos enfants.", "Moi, j'habite à Lyon."),
        ("Yo vivo en Madrid con mi esposo.", "Yo vivo en Madrid."),
        ("Я живу в Казани с семьёй.", "Я живу в Казани."),
        ("أعيش في القاهرة مع عائلتي.", "أعيش في القاهرة."),
        ("J'ai déménagé à Lille le mois dernier.", "Moi, j'habite à Lille."),
        ("Me mudé a Sevilla el mes pasado.", "Yo vivo en Sevilla."),
        ("Ich bin nach Hamburg letzten Monat gezogen.", "Ich wohne in Hamburg."),
        ("Я переехала в Самару в прошлом месяце.", "Я живу в Самаре."),
    ],
)
def test_company_and_time_are_not_part_of_the_home(with_whom: str, alone: str) -> None:
    """The same home said with and without company, or when one moved there, is one value:
    no move is read."""
    assert slots(with_whom) == slots(alone) and set(slots(alone)) == {"home"}
    assert not superseded(slots(with_whom), slots(alone))


#: How people also say where they live and work, and what each fills: a time word before the
#: statement (or German's verb before its subject after one) leaves it the speaker's and no part
#: of its value; other common forms; a sentence too short to name its language by stop words is
#: read as English first and, where English fills nothing, by the table of a language it votes
#: for as often (an English sentence quoting German votes English first and fills nothing).
READINGS: dict[str, list[tuple[str, dict[str, str]]]] = {
    "a time word or the verb first": [
        ("我今天搬到了上海。", {"home": "上海"}),
        ("我上星期搬到了深圳。", {"home": "深圳"}),
        ("我昨天开始在银行工作。", {"work": "银行"}),
        ("今日は東京に引っ越しました。", {"home": "東京"}),
        ("私は今日東京に引っ越しました。", {"home": "東京"}),  # not 今 and "日東京"
        ("今日は東京に引っ越して、銀行で働いています。", {"home": "東京", "work": "銀行"}),
        ("先日、銀行に転職しました。", {"work": "銀行"}),
        ("오늘 부산으로 이사했어요.", {"home": "부산"}),  # not "오늘 부산"
        ("지난주에 부산으로 이사했어요.", {"home": "부산"}),
        ("오늘은 부산에 살고 은행에서 일해요.", {"home": "부산", "work": "은행"}),
        ("Jetzt wohne ich in Köln.", {"home": "köln"}),
        ("Letzte Woche bin ich nach Hamburg gezogen.", {"home": "hamburg"}),
        ("Ich bin heute nach Berlin gezogen.", {"home": "berlin"}),
        ("Heute arbeite ich als Kellnerin.", {"work": "kellnerin"}),
        ("أمس انتقلت إلى دبي.", {"home": "دب"}),
        ("انتقلت اليوم إلى دبي.", {"home": "دب"}),
    ],
    "other common forms": [
        ("我在上海生活。", {"home": "上海"}),
        ("我在上海住了三年。", {"home": "上海"}),
        ("我家在北京。", {"home": "北京"}),
        ("我在家生活。", {}),
        ("我姐姐在上海生活。", {}),
        ("東京在住です。", {"home": "東京"}),
        ("姉は東京在住です。", {}),
        ("Ich lebe seit zwei Jahren in Berlin.", {"home": "berlin"}),
        ("Ich arbeite seit Januar als Lehrerin.", {"work": "lehrerin"}),
        ("Meine Schwester lebt seit zwei Jahren in Berlin.", {}),
        ("أعيش في دبي منذ سنتين.", {"home": "دب"}),  # since when is no part of where
    ],
    "a short sentence": [
        ("J'habite à Lyon.", {"home": "lyon"}),
        ("Vivo en Madrid.", {"home": "madrid"}),
        ("Me mudé a Valencia.", {"home": "valencia"}),
        ("Trabajo como enfermera.", {"work": "enfermera"}),
        ("My friend always says 'ich wohne in Berlin' when he is drunk.", {}),
        ("Mi hermano vive en Roma.", {}),
        ("Ma sœur habite à Moscou.", {}),
    ],
    "English, begun, going on or hired": [
        ("I started working at Google.", {"work": "google"}),
        ("I began working for Siemens last week.", {"work": "siemens"}),
        ("I started work at the bank.", {"work": "the bank"}),
        ("I've been working as a nurse since 2019.", {"work": "a nurse"}),
        ("I have been living in Berlin for two years.", {"home": "berlin"}),
        ("We've been living in Porto for the past 3 years.", {"home": "porto"}),
        ("I live in Lisbon.", {"home": "lisbon"}),
        ("I work for a bank.", {"work": "a bank"}),
        ("I have been to Paris.", {}),
        ("I started working out at the gym.", {}),
        ("My sister has been living in Berlin for years.", {}),
        ("I got a job at Google.", {"work": "google"}),  # a job, not a car
        ("I got a new job as a nurse.", {"work": "nurse"}),
        ("I was hired by Siemens last week.", {"work": "siemens"}),
        ("I took a position with the city council.", {"work": "the city council"}),
        ("My brother got a job at Google.", {}),
        ("I got a new Tesla.", {"drive": "tesla"}),
    ],
}


@pytest.mark.parametrize(
    ("text", "filled"),
    [pytest.param(t, f, id=f"{kind}: {t}") for kind, cases in READINGS.items() for t, f in cases],
)
def test_how_people_also_say_it(text: str, filled: dict[str, str]) -> None:
    assert slots(text) == filled


def test_a_time_word_is_nobodys_subject_and_home_is_no_workplace() -> None:
    assert slots("今日は姉が大阪に引っ越しました。") == {}  # the sister moved, today
    assert slots("오늘은 언니가 부산에 살아요.") == {}
    assert slots("我今天在家工作。") == slots("我在家里工作。") == {}
    assert slots("我现在在家具店工作。") == {"work": "家具店"}


def test_one_city_in_two_grammatical_cases_is_one_value() -> None:
    assert slots("Я живу в Казани.") == slots("Мы переехали в Казань.") == {"home": "казан"}
    assert slots("أعيش في القاهرة") == slots("انتقلت إلى القاهرة") == {"home": "قاهر"}
    # an Arabic comma ends the value, as a comma does
    assert slots("انتقلت إلى القاهرة، والشقة جميلة.") == {"home": "قاهر"}


@pytest.mark.parametrize(
    ("said", "again"),
    [
        ("I moved to Lisbon yesterday.", "I live in Lisbon."),
        ("We moved to Bristol last month, the flat is lovely.", "We live in Bristol."),
        ("I started as a nurse two weeks ago.", "I work as a nurse."),
        ("I work as a nurse since 2019.", "I work as a nurse."),
    ],
)
def test_when_it_happened_is_no_part_of_an_english_value(said: str, again: str) -> None:
    """ "I moved to Lisbon yesterday" and "I live in Lisbon" are one home: no move."""
    assert slots(said) == slots(again) and not superseded(slots(said), slots(again))


def test_english_reads_as_it_always_did() -> None:
    """English values still run to the end of their clause (the patterns ranking was tuned
    with), while the other languages end a value at a conjunction."""
    text = "User Input: I live in Lisbon and I work as a UX designer"
    assert slots(text) == {"home": "lisbon and i work as a ux designer", "work": "a ux designer"}
    assert statements(text) == {
        "home": "I live in Lisbon and I work as a UX designer",
        "work": "I work as a UX designer",
    }


# --- the engine and both stores: three people in one memory -----------------------------------


def said(engine: Engine, actor: Principal, memory: Memory, text: str, user: str) -> int:
    turn = TurnInput(f"User Input: {text}\nAgent Response: Noted, thanks.", user_id=user)
    (e,) = engine.add_messages(actor, [memory.id], [turn])
    return int(e.message_id)


def pairs(store: Store) -> set[tuple[int, int]]:
    with store.read() as r:
        rows = r.conn.execute("SELECT older, newer FROM supersessions")
    return {(int(a), int(b)) for a, b in rows}


def seeded(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock, lang: str
) -> tuple[int, int, int, int]:
    """u1's two-fact turn, u2's home in the same language and u3's home in English (each a
    slot u1 restates, with another value), then u1's job change: their ids."""
    intro, change, _, theirs, _ = CASES[lang]
    first = said(engine, alice, memory, intro, "u1")
    clock.advance(days=1)
    other = said(engine, alice, memory, theirs, "u2")
    english = said(engine, alice, memory, "I live in Lisbon and I work as a nurse.", "u3")
    clock.advance(days=1)
    job = said(engine, alice, memory, change, "u1")
    return first, other, english, job


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_job_change_marks_only_the_job_of_the_same_person_stale(
    engine: Engine, store: Store, alice: Principal, memory: Memory, clock: FrozenClock, lang: str
) -> None:
    first, other, english, job = seeded(engine, alice, memory, clock, lang)
    assert pairs(store) == {(first, job)}
    request = SearchRequest(CASES[lang][0], (memory.id,), top_n=10, similarity_threshold=0.0)
    block = engine.context(alice, request).text
    assert f"id:{first} type:raw" in block and f"id:{job} type:raw" in block
    assert f"older-than:id:{job} stale:work]" in block  # the job, not the home it states too
    assert block.count("older-than:") == 1  # u2's and u3's turns are nobody's older turn
    assert f"id:{other} type:raw" in block and f"id:{english} type:raw" in block


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_move_supersedes_the_same_persons_home_and_comes_first(
    engine: Engine, store: Store, alice: Principal, memory: Memory, clock: FrozenClock, lang: str
) -> None:
    """u1 states a home alone, u2 a home and a job, u3 a home in English; u1 moves. The
    question about home (u1's, in u1's words) finds the move first; nobody else's turn moves."""
    intro, _, move, home, question = CASES[lang]
    old = said(engine, alice, memory, home, "u1")
    clock.advance(days=1)
    other = said(engine, alice, memory, intro, "u2")
    english = said(engine, alice, memory, "I live in Lisbon and I work as a nurse.", "u3")
    clock.advance(days=1)
    new = said(engine, alice, memory, move, "u1")
    assert pairs(store) == {(old, new)}
    with store.read() as r:
        assert r.superseding([old, other, english, new]) == {old: new}
    mine = SearchRequest(question, (memory.id,), top_n=10, similarity_threshold=0.0, user_id="u1")
    got = [h.entry.message_id for h in engine.search(alice, mine)]
    assert got[:2] == [new, old]
    off = SearchRequest(
        question, (memory.id,), top_n=10, similarity_threshold=0.0, user_id="u1", supersession=0.0
    )
    assert engine.search(alice, off)[0].entry.message_id == old


Said = tuple[str, str]
"""(user, text) of a turn."""

#: Three people in one memory, each saying where they live in a few words and later moving
#: (u1 in Spanish, u3 in Japanese, opening with 今日は), while u2 says where she lives in
#: French and later where her sister moved: (user, text) in order.
SHORT: list[Said] = [
    ("u1", "Vivo en Madrid."),
    ("u2", "J'habite à Lyon."),
    ("u3", "私は京都に住んでいます。"),
    ("u1", "Ayer me mudé a Valencia."),
    ("u2", "Ma sœur habite à Moscou."),
    ("u3", "今日は東京に引っ越して、銀行で働いています。"),
]


def conversation(
    engine: Engine, alice: Principal, memory: Memory, clock: FrozenClock, turns: list[Said]
) -> list[int]:
    """``turns`` said in order, a day apart: their ids."""
    ids = []
    for user, text in turns:
        ids.append(said(engine, alice, memory, text, user))
        clock.advance(days=1)
    return ids


def first_two_and_labels(
    engine: Engine, alice: Principal, memory: Memory, question: str, user: str, word: str
) -> tuple[list[int], dict[int, str]]:
    """The first two hits of ``user``'s ``question``, and the context block's label of each
    turn found by ``word``, by id."""
    mine = SearchRequest(question, (memory.id,), top_n=10, similarity_threshold=0.0, user_id=user)
    first = [h.entry.message_id for h in engine.search(alice, mine)][:2]
    found = SearchRequest(word, (memory.id,), top_n=10, similarity_threshold=0.0)
    block = engine.context(alice, found).text
    lines = [line for line in block.splitlines() if " id:" in line]
    return first, {int(line.split(" id:")[1].split()[0]): line for line in lines}


def test_short_and_time_opened_moves_supersede_only_their_speakers_home(
    engine: Engine, store: Store, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    ids = conversation(engine, alice, memory, clock, SHORT)
    assert pairs(store) == {(ids[0], ids[3]), (ids[2], ids[5])}
    first, labels = first_two_and_labels(engine, alice, memory, "¿Dónde vivo?", "u1", "Lyon")
    assert first == [ids[3], ids[0]]
    assert f"older-than:id:{ids[3]}" in labels[ids[0]]
    assert f"older-than:id:{ids[5]}" in labels[ids[2]]
    assert "older-than" not in labels[ids[1]]  # u2's home: her sister's move is not hers
    assert sum("older-than:" in line for line in labels.values()) == 2


#: Three people in one memory: u1 has been living in Berlin and moves, u2 lives in Berlin too
#: and starts a new job, u3 lives in Berlin, said in Chinese: (user, text) in order.
BEGUN: list[Said] = [
    ("u1", "I have been living in Berlin for two years."),
    ("u2", "I live in Berlin too, and I work at a bakery."),
    ("u3", "我住在柏林。"),
    ("u1", "I moved to Hamburg."),
    ("u2", "I started working at Google."),
]


def test_what_one_has_been_doing_or_started_is_superseded_for_its_speaker_only(
    engine: Engine, store: Store, alice: Principal, memory: Memory, clock: FrozenClock
) -> None:
    ids = conversation(engine, alice, memory, clock, BEGUN)
    assert pairs(store) == {(ids[0], ids[3]), (ids[1], ids[4])}
    question = "Where do I live now?"
    first, labels = first_two_and_labels(engine, alice, memory, question, "u1", "Berlin")
    assert first == [ids[3], ids[0]]
    assert labels[ids[0]].endswith(f"older-than:id:{ids[3]}]")
    assert f"older-than:id:{ids[4]} stale:work]" in labels[ids[1]]  # the job, not the home
    assert "older-than" not in labels[ids[2]]
