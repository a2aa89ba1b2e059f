"""A move and a job change in nine languages (issue 52): the data of
:mod:`benchmarks.quality.slots_every_language`. Written for this project; CC0.

Per language three people share one memory. Each says where they live and what they do in one
turn, chats, changes job, chats, moves, chats (their own values, in their own language); then
each asks, in that language, where they live now and where they work now. The gold of a
question is the later turn (the move, the job change); the turn of two facts is stale.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Language:
    """Sentences with ``{city}``, ``{job}``, ``{company}`` and ``{new_city}``, and the values
    of three people (city, job, company, new city)."""

    intro: str
    change: str
    move: str
    chat: tuple[str, str, str]
    home_question: str
    work_question: str
    people: tuple[tuple[str, str, str, str], ...]


LANGUAGES: dict[str, Language] = {
    "en": Language(
        "I live in {city} and I work as a {job}.",
        "Big news: I work at {company} now, I started on Monday.",
        "We moved to {new_city} last month, the flat is lovely.",
        ("The pasta last week was great.", "Can you skip the plastic cutlery?",
         "Thanks, that's all for today."),
        "Where do I live now?", "Where do I work now?",
        (("Leeds", "nurse", "Siemens", "Bristol"), ("Cork", "teacher", "Oracle", "Dublin"),
         ("Perth", "plumber", "Canva", "Sydney")),
    ),
    "zh": Language(
        "我住在{city}，在一家公司当{job}。", "我换了工作，现在在{company}上班。",
        "我上个月搬到了{new_city}，新家很不错。",
        ("上周的千层面特别好吃。", "以后请不要放塑料餐具。", "好的，谢谢。"),
        "我现在住在哪里？", "我现在在哪里上班？",
        (("成都", "会计", "腾讯", "上海"), ("西安", "老师", "华为", "深圳"),
         ("青岛", "护士", "阿里巴巴", "杭州")),
    ),
    "ja": Language(
        "私は{city}に住んでいて、{job}として働いています。", "先月、{company}に転職しました。",
        "先週、{new_city}に引っ越しました。新しい部屋は広いです。",
        ("先週のラザニアはとてもおいしかったです。", "プラスチックのカトラリーは要りません。",
         "ありがとうございました。"),
        "私は今どこに住んでいますか？", "私は今どこで働いていますか？",
        (("大阪", "看護師", "楽天", "東京"), ("京都", "教師", "ソニー", "横浜"),
         ("札幌", "会計士", "トヨタ", "名古屋")),
    ),
    "ko": Language(
        "저는 {city}에 살고 {job}로 일해요.", "얼마 전에 {company}에 취직했어요.",
        "지난달에 {new_city}로 이사했어요. 새 집이 넓어요.",
        ("지난주 라자냐가 정말 맛있었어요.", "플라스틱 수저는 빼 주세요.", "감사합니다."),
        "저는 지금 어디에 살아요?", "저는 지금 어디에서 일해요?",
        (("부산", "간호사", "삼성", "서울"), ("대구", "교사", "현대", "인천"),
         ("광주", "회계사", "네이버", "대전")),
    ),
    "de": Language(
        "Ich wohne in {city} und arbeite als {job}.",
        "Ich habe jetzt eine neue Stelle bei {company}, seit Montag.",
        "Wir sind letzten Monat nach {new_city} gezogen, die Wohnung ist schön.",
        ("Die Lasagne letzte Woche war super.", "Bitte kein Plastikbesteck mehr in die Box.",
         "Danke, das ist alles für heute."),
        "Wo wohne ich jetzt?", "Wo arbeite ich jetzt?",
        (("Köln", "Lehrerin", "Siemens", "Hamburg"), ("Leipzig", "Krankenpfleger", "SAP", "Berlin"),
         ("Graz", "Buchhalterin", "Bosch", "Wien")),
    ),
    "ru": Language(
        "Я живу в {city} и работаю {job}.", "Я теперь работаю в {company}, с понедельника.",
        "Я в прошлом месяце переехала в {new_city}, квартира отличная.",
        ("Лазанья на прошлой неделе была отличная.", "Уберите, пожалуйста, пластиковые приборы.",
         "Спасибо, всё понятно."),
        "Где я сейчас живу?", "Где я сейчас работаю?",
        (("Казани", "бухгалтером", "Яндексе", "Самару"),
         ("Перми", "учителем", "Сбербанке", "Москву"), ("Твери", "инженером", "Газпроме", "Тулу")),
    ),
    "ar": Language(
        "أنا أعيش في {city} وأعمل {job}.", "أعمل الآن في {company} منذ يوم الاثنين.",
        "انتقلت إلى {new_city} الشهر الماضي، والشقة جميلة.",
        ("كانت اللازانيا الأسبوع الماضي رائعة.", "من فضلك لا تضع أدوات بلاستيكية في الصندوق.",
         "شكرا، هذا كل شيء اليوم."),
        "أين أعيش الآن؟", "أين أعمل الآن؟",
        (("القاهرة", "مهندسا", "أرامكو", "دبي"), ("عمان", "معلما", "زين", "الرياض"),
         ("تونس", "طبيبا", "اتصالات", "الدوحة")),
    ),
    "fr": Language(
        "J'habite à {city} et je travaille comme {job}.",
        "Je travaille maintenant chez {company}, j'ai commencé lundi et je suis contente.",
        "J'ai déménagé à {new_city} le mois dernier, l'appartement est très beau.",
        ("Les lasagnes de la semaine dernière étaient très bonnes.",
         "Est-ce que vous pouvez retirer les couverts en plastique ?",
         "Merci, c'est tout pour aujourd'hui."),
        "Où est-ce que j'habite maintenant ?", "Où est-ce que je travaille maintenant ?",
        (("Lyon", "infirmière", "Airbus", "Lille"), ("Nantes", "professeur", "Renault", "Paris"),
         ("Toulouse", "comptable", "Michelin", "Bordeaux")),
    ),
    "es": Language(
        "Vivo en {city} y trabajo como {job} en un colegio.",
        "Desde el lunes trabajo en {company} y estoy muy contenta con el cambio.",
        "Me he mudado a {new_city} con mi familia el mes pasado.",
        ("La lasaña de la semana pasada estaba muy buena.",
         "¿Pueden quitar los cubiertos de plástico de la caja?",
         "Gracias, eso es todo por hoy."),
        "¿Dónde vivo ahora?", "¿Dónde trabajo ahora?",
        (("Madrid", "profesora", "Telefónica", "Sevilla"),
         ("Valencia", "enfermera", "Inditex", "Bilbao"),
         ("Málaga", "contable", "Repsol", "Granada")),
    ),
}  # fmt: skip


#: The same three statements said otherwise (intro, change, move), as people also say them:
#: opened by a time word (今天, 昨日, 어제, أمس, letzte Woche), German with its verb second, and
#: French and Spanish in a few words ("Me mudé a Sevilla."). ``--wording otherwise``.
OTHERWISE: dict[str, tuple[str, str, str]] = {
    "en": ("I live in {city} and I work as a {job}.", "Now I work at {company}.",
           "Last week I moved to {new_city}."),
    "zh": ("我在{city}生活，在一家公司当{job}。", "我昨天开始在{company}上班。",
           "我今天搬到了{new_city}。"),
    "ja": ("私は{city}在住です。{job}として働いています。", "今日は{company}に転職しました。",
           "昨日、{new_city}に引っ越しました。"),
    "ko": ("저는 {city}에 살고 {job}로 일해요.", "오늘 {company}에 입사했어요.",
           "어제 {new_city}로 이사했어요."),
    "de": ("Ich wohne in {city} und arbeite als {job}.", "Seit Montag arbeite ich bei {company}.",
           "Letzte Woche bin ich nach {new_city} gezogen."),
    "ru": ("Я живу в {city} и работаю {job}.", "Теперь я работаю в {company}.",
           "Вчера я переехала в {new_city}."),
    "ar": ("أعيش في {city} وأعمل {job}.", "اليوم أعمل في {company}.", "أمس انتقلت إلى {new_city}."),
    "fr": ("J'habite à {city} et je travaille comme {job}.", "Je travaille chez {company}.",
           "J'ai déménagé à {new_city}."),
    "es": ("Vivo en {city} y trabajo como {job}.", "Trabajo en {company}.",
           "Me mudé a {new_city}."),
}  # fmt: skip
WORDINGS = ("first", "otherwise")


@dataclass(frozen=True)
class Said:
    label: str
    user: str
    text: str


@dataclass(frozen=True)
class Asked:
    text: str
    user: str
    gold: str
    stale: str
    kind: str


def conversation(lang: str, wording: str = "first") -> tuple[list[Said], list[Asked]]:
    """One memory's turns in order (the three people's phases interleaved) and questions;
    ``wording``: the statements as first written, or :data:`OTHERWISE`."""
    t = LANGUAGES[lang]
    if wording == "otherwise":
        intro, change, move = OTHERWISE[lang]
        t = replace(t, intro=intro, change=change, move=move)
    phases: list[list[Said]] = [[], [], []]
    asked = []
    for n, (city, job, company, new_city) in enumerate(t.people):
        user = f"{lang}-person-{n}"
        said = {
            "intro": t.intro.format(city=city, job=job),
            "change": t.change.format(company=company),
            "move": t.move.format(new_city=new_city),
        }
        for phase, (mark, chat) in enumerate(zip(said, t.chat, strict=True)):
            phases[phase] += [
                Said(f"{user}/{mark}", user, said[mark]),
                Said(f"{user}/chat-{phase}", user, chat),
            ]
        asked += [
            Asked(t.home_question, user, f"{user}/move", f"{user}/intro", "home"),
            Asked(t.work_question, user, f"{user}/change", f"{user}/intro", "work"),
        ]
    return [s for phase in phases for s in phase], asked


__all__ = ["LANGUAGES", "OTHERWISE", "WORDINGS", "Asked", "Language", "Said", "conversation"]
