"""The slot patterns of each language: how a speaker says where they live, where they work,
their name, age, favourite things and allergies (:mod:`recallery.text.slots` reads them).

One :class:`SlotTable` a language (English, German, French, Spanish, Russian, Arabic,
Chinese, Japanese, Korean, Hindi, Thai), looked up by the language
:func:`recallery.text.cues.language` names, so a turn is read by its own language's patterns
only (a Chinese turn quoting "I live in Berlin" is read as Chinese). Slot names are the same
in every language ("home", "work", "name", "age", "allergy", "favourite {}"), so a speaker
who changes language still restates one slot.

English keeps the patterns the ranking was tuned with. The other tables ask that the speaker
speaks of themselves: a first-person pronoun or a verb form only the first person has (живу,
arbeite, vivo), or in Chinese, Japanese and Korean a sentence that opens with the speaker, time
words or nothing (我姐姐搬到了莫斯科 and 姉はモスクワに引っ越しました fill no slot). Their values
end at a conjunction ("Я живу в Казани и работаю бухгалтером": home is Казани), lose filler
words (теперь, jetzt, 了), and in Russian and Arabic are stemmed, so one city in two grammatical
cases is one value (в Казани, в Казань). Who one lives or works with, and when one moved, are
not part of the value ("Ich wohne in Berlin mit meiner Familie" lives in Berlin, as "Ich wohne
in Berlin" does; "J'ai déménagé à Lille le mois dernier" moved to Lille).
"""

from __future__ import annotations

import re

from recallery.text.slot_base import SlotTable, table
from recallery.text.slot_tables_asia import HI, JA, KO, TH, ZH

# --- English: the patterns the ranking was tuned with -------------------------------------------

#: A value runs to the end of its clause.
_VALUE = r"(?P<value>[^.!?;,\n]{2,60})"
_I = (
    r"\b(?:i|we)(?:'ve|'m| have| am| are|'re)?(?: been)?"
    r"(?: just| finally| recently| now| officially)?"
)
_EN = SlotTable(
    tuple(
        (slot, re.compile(pattern, re.IGNORECASE))
        for slot, pattern in (
            ("home", _I + r" (?:live|living|lived|moved|moving|relocat\w*|settled|based) "
             r"(?:back )?(?:in|to|into)(?: (?:a|an|our|my) new \w+ in)? " + _VALUE),
            ("home", r"\b(?:my|our) new (?:flat|home|house|apartment|place) (?:is )?in " + _VALUE),
            ("work", _I + r" (?:(?:started |starting |start |began |begin )?(?:work|working)|"
             r"started|starting|start) (?:as|at|for) " + _VALUE),
            ("work", r"\b(?:my|the) (?:new )?(?:job|role|position) (?:is )?(?:as|at) " + _VALUE),
            ("work", r"\b(?:start|started|starting|week|job) as an? " + _VALUE),
            ("work", r"\boffered me (?:the|a|an) " + _VALUE + r" (?:role|job|position)"),
            ("work", _I + r" (?:got|took|landed|accepted) (?:a|an|the) (?:new )?(?:job|position|"
             r"role) (?:as|at|with) " + _VALUE),
            ("work", _I + r" (?:got |was |been )?hired (?:as|at|by) " + _VALUE),
            ("favourite {}", r"\bmy (?:favou?rite|fave) (?P<name>\w+) is (?:now )?" + _VALUE),
            ("favourite {}", r"\b(?P<value>\w[\w ]{1,30}) is (?:now )?my (?:new )?"
             r"(?:favou?rite|fave) (?P<name>\w+)"),
            ("name", r"\b(?:my name is|call me|i'm called|i am called) (?P<value>\w+)"),
            ("{} birthday", r"\b(?P<name>\w+)'s birthday is (?:on )?(?:the )?" + _VALUE),
            ("my birthday", r"\bmy birthday is (?:on )?(?:the )?" + _VALUE),
            ("drive", _I + r" (?:drive|driving|own|got) (?:a|an) "
             r"(?!(?:new )?(?:job|position|role)\b)(?:new )?" + _VALUE),
            ("have {}", _I + r" (?:have|got) "
             r"(?P<value>\d+|one|two|three|four|five|six|no) (?P<name>\w+)"),
            ("allergy", _I + r" allergic to " + _VALUE),
            ("my {}", r"\bmy (?P<name>best friend|partner|boyfriend|girlfriend|wife|husband|boss|"
             r"doctor|dog|cat) is (?:called |named )?" + _VALUE),
            ("age", r"\bi(?:'m| am| turned) (?P<value>\d{1,3})(?: years old)?\b"),
        )
    ),
    re.compile(r"\b(?:now|anymore|instead|too|as well|these days|from now on)\b"),
    # when it happened, or for how long, is no part of a value: "I moved to Lisbon yesterday",
    # "I have been living in Lisbon for two years" and "I live in Lisbon" are one home (who
    # with and what else, "and I work as...", stay as tuned)
    re.compile(r"\b(?:yesterday|today|last (?:week|month|year|night|spring|summer|autumn|fall|"
               r"winter|weekend)|this (?:week|month|year|weekend)|\w+ (?:days|weeks|months|years) "
               r"ago|a (?:week|month|year) ago|recently)\b|\bsince (?:last\b|\d)|"
               r"\bfor (?:the (?:past|last) )?(?:a|an|one|two|three|four|five|six|ten|a few|"
               r"several|many|\d+) (?:days?|weeks?|months?|years?)\b"),
)  # fmt: skip

# --- German, French, Spanish: a pronoun or a first-person verb, then the value ------------------

_DE_NOW = (
    r"(?: (?:jetzt|nun|gerade|inzwischen|mittlerweile|seit kurzem|endlich|wieder|schon|noch|"
    r"heute|gestern|vorgestern|kürzlich|neulich|vor kurzem|seit gestern|seit heute|"
    r"am wochenende|diese woche|diesen monat|dieses jahr|seit(?: \w+){1,2}?))*"
)
#: German puts the verb second: after a time word the subject follows it ("Jetzt wohne ich in
#: Köln", "Letzte Woche bin ich nach Hamburg gezogen").
_DE_HOME = (
    r"(?:(?:ich|wir|und) (?:wohne|wohnen|lebe|leben)|(?:wohne|lebe) ich|(?:wohnen|leben) wir)"
)
_DE_WORK = r"(?:(?:ich|wir|und) (?:arbeite|arbeiten)|arbeite ich|arbeiten wir)"
_DE = table(
    (
        ("home", r"\b" + _DE_HOME + _DE_NOW + " in " + _VALUE),
        ("home", r"\b(?:ich bin|wir sind|bin ich|sind wir)" + _DE_NOW
         + r"(?: \w+ (?:jahr|monat|woche))? nach (?P<value>[^.!?;,\n]{2,40}?) (?:um)?gezogen"),
        ("home", r"\b(?:ich ziehe|wir ziehen|ziehe ich|ziehen wir)" + _DE_NOW + " nach "
         + _VALUE),
        ("home", r"\b(?:meine|unsere) neue wohnung (?:ist|liegt) in " + _VALUE),
        ("work", r"\b" + _DE_WORK + _DE_NOW + " (?:als|bei|für) " + _VALUE),
        ("work", r"\bich (?:habe|hab)" + _DE_NOW + r" (?:eine neue stelle|einen neuen job) "
         r"(?:als|bei) " + _VALUE),
        ("work", r"\bmein(?:e)? neue[rs]? (?:job|stelle|arbeit) (?:ist )?(?:als|bei) " + _VALUE),
        ("work", r"\bich bin von beruf (?P<value>\w+)"),
        ("name", r"\b(?:ich heiße|ich heisse|mein name ist) (?P<value>\w+)"),
        ("age", r"\bich (?:bin|werde) (?P<value>\d{1,3})(?: jahre alt|(?=\s*(?:[.!?,;]|$)))"),
        ("allergy", r"\bich bin allergisch (?:gegen|auf) " + _VALUE),
        ("allergy", r"\bich habe eine allergie gegen " + _VALUE),
        ("favourite {}", r"\bmein(?:e)? lieblings(?P<name>\w+) (?:ist|sind)(?: jetzt| nun)? "
         + _VALUE),
    ),
    filler=r"jetzt|nun|inzwischen|mittlerweile|um",
    until=r"und|aber|sondern|weil|da|denn|mit|zusammen|letzte[nms]?|vor|seit",
    asks=r"wo|was|wer|welche[mnrs]?|wohin|woher",
)  # fmt: skip

_FR = table(
    (
        ("home", r"\b(?:j['’]habite|je vis|nous habitons|nous vivons|j['’]ai déménagé|"
         r"je déménage|nous avons déménagé)(?: maintenant| désormais)? "
         r"(?:à|a|en|au|aux|dans) " + _VALUE),
        ("work", r"\b(?:je travaille|nous travaillons)(?: maintenant| désormais)? "
         r"(?:comme|chez|pour|en tant que) " + _VALUE),
        ("name", r"\b(?:je m['’]appelle|mon nom est|mon prénom est) (?P<value>\w+)"),
        ("age", r"\bj['’]ai (?P<value>\d{1,3}) ans\b"),
        ("allergy", r"\bje suis allergique (?:à|a|au|aux) " + _VALUE),
        ("favourite {}", r"\bm(?:on|a) (?P<name>\w+) préférée? est (?:maintenant )?" + _VALUE),
    ),
    filler=r"maintenant|désormais",
    until=r"et|mais|car|parce que|avec|le mois dernier|l'année dernière|l'an dernier|"
    r"la semaine dernière|il y a|depuis",
    asks=r"où|ou|quoi|quel|quelle|qui",
)  # fmt: skip

_ES = table(
    (
        ("home", r"\b(?:vivo|vivimos)(?: ahora)? en " + _VALUE),
        ("home", r"\b(?:me mudé|me he mudado|nos mudamos|nos hemos mudado|me mudo)"
         r"(?: ahora)? (?:a|al) " + _VALUE),
        ("work", r"\b(?:trabajo|trabajamos)(?: ahora)? (?:como|de|en|para) " + _VALUE),
        ("name", r"\b(?:me llamo|mi nombre es) (?P<value>\w+)"),
        ("age", r"\btengo (?P<value>\d{1,3}) años\b"),
        ("allergy", r"\bsoy alérgic[oa] (?:a|al) " + _VALUE),
        ("favourite {}", r"\bmi (?P<name>\w+) favorit[oa] es (?:ahora )?" + _VALUE),
    ),
    filler=r"ahora|ya",
    until=r"y|e|pero|porque|con|junto|el mes pasado|el año pasado|la semana pasada|hace|desde",
    asks=r"dónde|donde|qué|que|cuál|cual|quién|quien",
)  # fmt: skip

# --- Russian and Arabic: values stemmed, so a city in two cases is one value ---------------------

_RU_WHEN = (
    r"(?:теперь|сейчас|уже|вс[её] ещ[её]|пока|недавно|наконец|только что|вчера|"
    r"в прошлом (?:году|месяце)|на прошлой неделе|летом|весной|осенью|зимой)"
)
_RU_NOW = rf"(?: {_RU_WHEN})*"
_RU = table(
    (
        # живу, работаю: only the first person has these forms
        ("home", rf"(?<!\w)(?:(?:я|мы) )?(?:{_RU_WHEN} )*(?:живу|жив[её]м|проживаю|проживаем)"
         + _RU_NOW + r" (?:в|во|на) " + _VALUE),
        ("home", r"(?<!\w)(?:я|мы)" + _RU_NOW + r" (?:переехал|переехала|переехали|перебрался|"
         r"перебралась|перебрались|переезжаю|переезжаем|поселился|поселилась|поселились)"
         + _RU_NOW + r" (?:в|во|на) " + _VALUE),
        ("work", r"(?<!\w)(?:(?:я|мы) )?(?:работаю|работаем)" + _RU_NOW
         + r" (?!над |с |со |из |по |до |дома|удал[её]нно)" + _VALUE),
        ("work", r"(?<!\w)(?:я|мы)" + _RU_NOW + r" (?:устроился|устроилась|устроились|перешла|"
         r"перешел|перешёл)(?: на работу)? (?:в|во|на) " + _VALUE),
        ("work", r"(?<!\w)(?:по профессии я|моя профессия(?: —| -|:)?) " + _VALUE),
        ("name", r"(?<!\w)(?:меня зовут|мо[её] имя) (?P<value>\w+)"),
        ("age", r"(?<!\w)мне (?P<value>\d{1,3}) (?:год|года|лет)(?!\w)"),
        ("allergy", r"(?<!\w)у меня(?: теперь| сейчас)? аллергия на " + _VALUE),
        ("favourite {}", r"(?<!\w)(?:мой|моя|мо[её]|мои) любим(?:ый|ая|ое|ые) (?P<name>\w+)"
         r"(?: —| -|:| это)?(?: теперь| сейчас)? " + _VALUE),
    ),
    filler=r"теперь|сейчас|уже|тоже|также",
    until=r"и|а|но|потому|так как|с|со|вместе|в прошлом|на прошлой|в этом|недавно",
    asks=r"где|что|кто|кем|куда|откуда|как\w*|чем",
    stem="russian",
)  # fmt: skip

#: A value in Arabic runs to the end of its clause (Arabic comma, question mark, semicolon).
_AR_VALUE = r"(?P<value>[^.!?;,\n،؟؛]{2,60})"
_AR_WHEN = (
    r"(?:الآن|الان|حاليا|حالياً|مؤخرا|مؤخراً|للتو|أخيرا|أخيراً|اليوم|أمس|امس|البارحة|"
    r"(?:الأسبوع|الاسبوع|الشهر|العام) الماضي|السنة الماضية)"
)
_AR_OPEN = (
    r"(?:^|(?<=[.!?؟،,\n])\s*|(?<!\S)(?:أنا|انا|نحن|لقد|وقد|قد|ثم|و)\s|(?<!\S)" + _AR_WHEN + r"\s)"
)
_AR_NOW = r"(?:\s" + _AR_WHEN + r")*"
_AR = table(
    (
        ("home", r"(?<!\S)و?(?:أعيش|اعيش|أسكن|اسكن|نعيش|نسكن|أقيم|اقيم)" + _AR_NOW
         + r"\s(?:في\s|ب)" + _AR_VALUE),
        ("home", _AR_OPEN + r"(?:انتقلت|انتقلنا)" + _AR_NOW + r"\s(?:إلى|الى)\s" + _AR_VALUE),
        ("work", r"(?<!\S)و?(?:أعمل|اعمل|نعمل)" + _AR_NOW + r"\s(?:في\s|لدى\s|مع\s)?" + _AR_VALUE),
        ("name", r"(?<!\S)(?:اسمي|إسمي)\s(?P<value>\S+)"),
        ("age", r"(?<!\S)عمري\s(?P<value>\d{1,3})"),
        ("allergy", r"(?<!\S)(?:لدي|عندي)\sحساسية\s(?:من|ضد|تجاه)\s" + _AR_VALUE),
    ),
    filler=r"الآن|الان|حاليا|حالياً|مؤخرا|مؤخراً|(?:الشهر|العام|الأسبوع|الاسبوع) الماضي|"
    r"السنة الماضية",
    until=r"و|وأ\w*|لكن|ولكن|لأن|مع|منذ",
    asks=r"أين|اين|ماذا|كم|متى",
    stem="arabic",
)  # fmt: skip

#: Each language's table, by the code :func:`recallery.text.cues.language` names.
TABLES: dict[str, SlotTable] = {
    "en": _EN,
    "de": _DE,
    "fr": _FR,
    "es": _ES,
    "ru": _RU,
    "ar": _AR,
    "zh": ZH,
    "ja": JA,
    "ko": KO,
    "hi": HI,
    "th": TH,
}

__all__ = ["TABLES"]
