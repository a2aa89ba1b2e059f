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
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SlotTable:
    """A language's patterns: ``(slot, pattern)``, the value in the group ``value`` and
    ``{}`` in a slot name filled by the group ``name``; a value is cut before the first match
    of ``until``, loses each match of ``filler``, and is stemmed by the Snowball stemmer
    ``stem`` ("" for none). Where ``asks`` is given (every language but English), a value
    holding one of its question words, or a statement in a sentence that ends in a question
    mark, is no statement ("我现在住在哪里？" fills no slot)."""

    patterns: tuple[tuple[str, re.Pattern[str]], ...]
    filler: re.Pattern[str]
    until: re.Pattern[str] | None = None
    stem: str = ""
    asks: re.Pattern[str] | None = None
    carried: Carried | None = None
    """Where a clause goes on after a joined one with that clause's subject (Japanese て、,
    Korean -고), how to tell whose it is."""


@dataclass(frozen=True, slots=True)
class Carried:
    """A language whose clauses joined by ``join`` share the first one's subject: a clause
    that names none goes on with the nearest one before it that does, so "姉は大阪に住んでいて、
    銀行で働いています" is the sister's job, not the speaker's. ``mine``: a clause that opens
    with the speaker; ``theirs``: one that opens with someone else."""

    join: re.Pattern[str]
    mine: re.Pattern[str]
    theirs: re.Pattern[str]


def _table(
    patterns: tuple[tuple[str, str], ...],
    filler: str,
    until: str,
    asks: str,
    stem: str = "",
    words: bool = True,
    carried: Carried | None = None,
) -> SlotTable:
    """Compiled case-blind; ``words``: filler and ``until`` are whole words (alphabetic
    scripts), else found anywhere (Chinese, Japanese)."""
    edge = (r"(?<!\w)(?:", r")(?!\w)") if words else ("(?:", ")")
    return SlotTable(
        tuple((slot, re.compile(p, re.IGNORECASE)) for slot, p in patterns),
        re.compile(edge[0] + filler + edge[1]),
        re.compile(edge[0] + until + edge[1]),
        stem,
        re.compile(edge[0] + asks + edge[1]),
        carried,
    )


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
_DE = _table(
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

_FR = _table(
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

_ES = _table(
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
_RU = _table(
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
_AR = _table(
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

# --- Chinese, Japanese, Korean: the sentence opens with the speaker, time words or nothing --------

_ZH_VALUE = r"(?P<value>[^，。！？、；：,.!?;:\s了]{1,20})"
_ZH_NOW = (
    r"(?:现在|目前|如今|已经|刚刚|刚才|刚|最近|前不久|不久前|前几天|这几天|今天|昨天|前天|去年|"
    r"今年|上个月|这个月|本月|上周|上星期|上礼拜|这周|本周|周末|终于|也|还|一直|自己|就|开始)*"
)
_ZH_OPEN = r"(?:^|(?<=[，。！？、；,.!?;\s]))"
_ZH = _table(
    (
        ("home", r"我们?" + _ZH_NOW + r"(?:住在|住|生活在|定居在|定居于|搬到了?|搬去了?|搬回了?|"
         r"搬家到了?)" + _ZH_VALUE),
        ("home", r"我们?" + _ZH_NOW + r"在(?!家里?(?:生活|居住|住))"
         r"(?P<value>[^，。！？、；,.!?;\s]{1,15}?)(?:生活|居住|住)"),
        ("home", r"我家" + _ZH_NOW + r"在" + _ZH_VALUE),
        ("work", r"(?:(?:我|" + _ZH_OPEN + ")" + _ZH_NOW + r"在[^，。！？、；,.!?;]{1,12}?|我)"
         + _ZH_NOW + r"(?:当|担任)(?!时|然|天|地|初|年|中|前|作|成)了?(?:一名|一位|一个|个|名)?"
         + _ZH_VALUE),
        ("work", r"(?:我|" + _ZH_OPEN + ")" + _ZH_NOW
         + r"在(?!家里?(?:上班|工作))(?P<value>[^，。！？、；,.!?;\s]{1,15}?)(?:上班|工作|任职)"),
        ("work", r"我" + _ZH_NOW + r"是(?:一名|一位|名)" + _ZH_VALUE),
        ("work", r"我的(?:新)?(?:工作|职业)是(?:一名|一位|一个|个|名)?" + _ZH_VALUE),
        ("name", r"我(?:的名字)?叫(?!了)" + _ZH_VALUE),
        ("name", r"我的名字是" + _ZH_VALUE),
        ("age", r"(?:我|" + _ZH_OPEN + ")" + _ZH_NOW + r"(?:今年)?(?P<value>\d{1,3}) ?岁"),
        ("allergy", r"我" + _ZH_NOW + r"对(?P<value>[^，。！？、；,.!?;\s]{1,12}?)过敏"),
        ("favourite {}", r"我最(?:喜欢|爱)的?(?P<name>[^，。！？、；,.!?;\s的是]{1,6})的?是"
         + _ZH_VALUE),
    ),
    filler=r"了|啦|呢|吧|啊",
    until=r"和|跟|并且|而且|但是|但|因为",
    asks=r"哪|什么|谁|多少|几|怎么",
    words=False,
)  # fmt: skip

#: A Japanese sentence about its speaker: it opens with the speaker (私は), time words or
#: nothing, up to the value; a clause after a te-form (住んでいて、) goes on with its subject.
_JA_TIME = (
    r"(?:今日|今週|今月|今朝|今年|今度|今|現在|最近|昨日|一昨日|先日|先月|先週|去年|この前|"
    r"この間|来月|来週|週末|ついに|やっと)"
)
#: Atomic: 今日は is one time word, never 今 and a topic 日は.
_JA_WHEN = r"(?>" + _JA_TIME + r"(?:は|に|、)?)"
_JA_ME = r"(?:私|僕|俺|わたし|あたし|ぼく|おれ)(?:は|も|が)"
_JA_OPEN = r"(?:^|(?<=[。！？!?\n])|(?<=て、))\s*(?:" + _JA_ME + r"、?|" + _JA_WHEN + r")*"
_JA_VALUE = r"(?P<value>[^\s、。！？,.!?はがもをにへでと]{1,20})"
_JA_CARRIED = Carried(
    re.compile(r"て、"),
    re.compile(r"\s*(?:" + _JA_WHEN + r")*" + _JA_ME),
    re.compile(
        r"\s*(?:" + _JA_WHEN + r")*(?!" + _JA_TIME + r"(?:は|が))"
        r"[^\s、。！？,.!?はがもをにへでと]{1,10}(?:は|が)(?!ら)"
    ),
)
_JA = _table(
    (
        ("home", _JA_OPEN + _JA_VALUE + r"(?:に|へ)(?:住んで|住ん|住み|暮らして|暮らし|引っ越し|"
         r"引越し|移り住|移住し|転居し)"),
        ("home", _JA_OPEN + _JA_VALUE + r"在住"),
        ("work", _JA_OPEN + r"(?:[^\s、。！？,.!?]{1,15}?で)?" + _JA_VALUE + r"(?:として|で)"
         r"(?:働いて|働き|働く|勤めて|勤務して)"),
        ("work", _JA_OPEN + _JA_VALUE + r"(?:に|へ)(?:勤めて|勤務|転職|就職)"),
        ("work", r"(?:私|僕|俺)?の?(?:仕事|職業)は" + _JA_VALUE + r"(?:です|だ)"),
        ("name", r"(?:私|僕|俺)?の?名前は" + _JA_VALUE + r"(?:です|だ)"),
        ("name", _JA_OPEN + _JA_VALUE + r"と(?:申します|いいます|言います)"),
        ("age", _JA_OPEN + r"(?P<value>\d{1,3})歳"),
        ("allergy", _JA_OPEN + _JA_VALUE + r"(?:に|の)?アレルギー"),
        ("favourite {}", r"(?:一番)?好きな(?P<name>[^\s、。！？,.!?は]{1,6})は" + _JA_VALUE
         + r"(?:です|だ)"),
    ),
    filler=r"今|現在",
    until=r"そして|けど",
    asks=r"どこ|何|なに|誰|だれ|いくつ|どれ|どの",
    words=False,
    carried=_JA_CARRIED,
)  # fmt: skip

#: The same in Korean; a clause after a -고 clause (살고) goes on with its subject.
_KO_WHEN = (
    r"(?:지금은?|현재|요즘|최근에?|오늘|어제|그저께|작년에|올해|지난\s?달에|지난\s?주에?|"
    r"이번\s?주에?|이번\s?달에|주말에|며칠\s?전에|얼마\s?전에|이번에|드디어|이제|곧)(?:은|는)?"
)
_KO_ME = r"(?:저는|나는|저도|나도|제가|내가|저희는|우리는|저희도|우리도)"
_KO_OPEN = r"(?:^|(?<=[.!?。\n])|(?<=고\s))\s*(?:(?:" + _KO_ME + "|" + _KO_WHEN + r")\s+)*"
#: One or two words (서울 강남구), the first not a topic (언니는 부산에 살아요 is not the speaker).
_KO_VALUE = r"(?P<value>(?:[^\s.,!?]+(?<![은는이가도])\s)??[^\s.,!?]+?)"
_KO_IS = r"(?:이에요|예요|입니다|이야|야|이다|이고|고)?(?=[\s.,!?]|$)"
_KO_CARRIED = Carried(
    re.compile(r"고\s"),
    re.compile(r"\s*(?:" + _KO_WHEN + r"\s+)*" + _KO_ME + r"\s"),
    re.compile(
        r"\s*(?:" + _KO_WHEN + r"\s+)*(?!" + _KO_WHEN + r"\s)"
        r"\S+(?:은|는|이|가)\s"
    ),
)
_KO = _table(
    (
        ("home", _KO_OPEN + _KO_VALUE + r"(?:에서|에)\s+(?:살|삽니다|거주)"),
        ("home", _KO_OPEN + _KO_VALUE + r"(?:으로|로)\s+이사"),
        ("work", _KO_OPEN + r"(?:[^.!?]{1,30}?에서\s+)?" + _KO_VALUE + r"(?:으로|로)\s+"
         r"(?:일하|일해|일합|근무)"),
        ("work", _KO_OPEN + _KO_VALUE + r"에서\s+(?:일하|일해|일합|근무)"),
        ("work", _KO_OPEN + _KO_VALUE + r"(?:에|으로|로)\s+(?:취직|입사|이직)"),
        ("work", r"(?<!\S)(?:제|내)\s+(?:새\s+)?직업은\s+(?P<value>\S+?)" + _KO_IS),
        ("name", r"(?<!\S)(?:제|내)\s+이름은\s+(?P<value>\S+?)" + _KO_IS),
        ("age", _KO_OPEN + r"(?P<value>\d{1,3})\s?살"),
        ("allergy", _KO_OPEN + _KO_VALUE + r"\s?알레르기가\s+있"),
        ("allergy", _KO_OPEN + _KO_VALUE + r"(?:에|에게)\s+알레르기"),
        ("favourite {}", r"(?<!\S)(?:제가|내가)\s+(?:제일|가장)\s+좋아하는\s+"
         r"(?P<name>\S+?)(?:은|는)\s+(?P<value>\S+?)" + _KO_IS),
    ),
    filler=r"지금|이제",
    until=r"그리고|하지만",
    asks=r"어디|무엇|뭐|누구|몇|어느",
    carried=_KO_CARRIED,
)  # fmt: skip

# --- Hindi and Thai: the speaker opens the clause -------------------------------------------------

#: Hindi puts the verb last: the value is the words between the speaker (and when) and the
#: postposition before the verb ("मैं दिल्ली में रहती हूँ"), at most four of them, and the verb
#: ends in the speaker's हूँ (हम's हैं): "मेरी बहन मुंबई में रहती है" is the sister's. A clause
#: after और names no subject and is the speaker's only by its हूँ.
_HI_WHEN = (
    r"(?:अब|आजकल|फिलहाल|फ़िलहाल|हाल ही में|आज|कल|पिछले (?:साल|महीने|हफ्ते|हफ़्ते|सप्ताह)|"
    r"इस (?:साल|महीने|हफ्ते|हफ़्ते|सप्ताह)|भी)"
)
_HI_I = r"(?<!\S)(?:(?P<we>हम)|मैं|और)(?:\s" + _HI_WHEN + r")*\s"
_HI_VALUE = r"(?P<value>[^\s।.!?,]+(?:\s[^\s।.!?,]+){0,3}?)"
_HI_AM = r"\s(?(we)हैं|(?:हूँ|हूं))(?=[\s।.!?,]|$)"
_HI_DO = r"\s(?:काम|नौकरी)\s(?:करता|करती|करते)" + _HI_AM
_HI_MOVED = r"\sहो\s(?:गया|गई|गयी|गए|गये)(?:\s(?:हूँ|हूं|हैं))?(?=[\s।.!?,]|$)"
_HI = _table(
    (
        ("home", _HI_I + _HI_VALUE + r"\sमें\s(?:रहता|रहती|रहते)" + _HI_AM),
        ("home", _HI_I + _HI_VALUE + r"(?:\sमें)?\s(?:शिफ्ट|शिफ़्ट|स्थानांतरित)" + _HI_MOVED),
        ("work", _HI_I + _HI_VALUE + r"\s(?:के\sरूप\sमें|की\sतरह)" + _HI_DO),
        ("work", _HI_I + _HI_VALUE + r"\s(?:में|पर)" + _HI_DO),
        ("work", _HI_I + r"पेशे\sसे\s" + _HI_VALUE + _HI_AM),
        ("name", r"(?<!\S)मेरा\sनाम\s(?P<value>[^\s।.!?,]+)\s(?:है|हैं)"),
        ("age", r"(?<!\S)(?:मेरी\sउम्र|मैं)\s(?P<value>\d{1,3})\s(?:साल|वर्ष)"),
        ("allergy", r"(?<!\S)मुझे(?:\s" + _HI_WHEN + r")*\s" + _HI_VALUE
         + r"\sसे\sएलर्जी"),
        ("favourite {}", r"(?<!\S)(?:मेरा|मेरी|मेरे)\sपसंदीदा\s(?P<name>[^\s।.!?,]+)\s"
         + _HI_VALUE + r"\s(?:है|हैं)(?=[\s।.!?,]|$)"),
    ),
    filler=r"अब|भी|एक",
    until=r"और|लेकिन|क्योंकि",
    asks=r"कहाँ|कहां|क्या|कौन|कौनसा|कब|कैसे|किस|किसी",
)  # fmt: skip

#: Thai writes no spaces between words: the speaker opens a clause (after a space or at the
#: start, time words before it, so ของฉัน, "my", in "พี่สาวของฉันย้ายไป..." opens nothing), and
#: the value runs to the clause's end, cut before when (เมื่อ), with whom (กับ) and since
#: (ตั้งแต่). A clause after และ names no subject and goes on with the one before it.
_TH_WHEN = r"(?:ตอนนี้|เดี๋ยวนี้|ปัจจุบัน|ล่าสุด|วันนี้|เมื่อวาน|(?:ปี|เดือน|อาทิตย์|สัปดาห์)ที่แล้ว)"
_TH_ME = r"(?:ฉัน|ผม|ดิฉัน|เรา|พวกเรา)"
_TH_I = (
    r"(?:(?:^|(?<=\s))(?:" + _TH_WHEN + r"\s?)*" + _TH_ME + r"|(?<=และ))"
    r"(?:ตอนนี้|เพิ่ง|ได้|ก็|ยัง|จะ)*"
)
_TH_VALUE = r"(?P<value>[^\s.!?,;:]{2,40})"
_TH_CARRIED = Carried(
    re.compile(r"และ"),
    re.compile(r"\s*(?:" + _TH_WHEN + r"\s?)*" + _TH_ME),
    re.compile(
        r"\s*(?:" + _TH_WHEN + r"\s?)*(?:พี่|น้อง|แม่|พ่อ|ลูก|สามี|ภรรยา|แฟน|เพื่อน|ยาย|ย่า|"
        r"ตา|ปู่|ป้า|ลุง|น้า|อา|หลาน|เขา|เธอ|หัวหน้า|คุณ)"
    ),
)
_TH = _table(
    (
        ("home", _TH_I + r"(?:อาศัยอยู่|พักอยู่|อยู่)(?:ที่|ใน)" + _TH_VALUE),
        ("home", _TH_I + r"ย้าย(?:บ้าน)?(?:ไป|มา)(?:อยู่)?(?:ที่)?" + _TH_VALUE),
        ("work", _TH_I + r"(?:ทำงาน|มีอาชีพ)เป็น" + _TH_VALUE),
        ("work", _TH_I + r"ทำงาน(?:อยู่)?(?:ที่|ใน|กับ|ให้)" + _TH_VALUE),
        ("work", _TH_I + r"(?:ได้งานใหม่|เปลี่ยนงานไป|ย้ายงานไป)(?:ที่|เป็น)?" + _TH_VALUE),
        ("name", _TH_I + r"ชื่อ(?P<value>[^\s.!?,;:]{2,20})"),
        ("age", _TH_I + r"อายุ\s?(?P<value>\d{1,3})\s?ปี"),
        ("allergy", _TH_I + r"แพ้" + _TH_VALUE),
    ),
    filler=r"ตอนนี้|แล้ว|ค่ะ|ครับ|คะ|นะ",
    until=r"เมื่อ|กับ|ตั้งแต่|และ|แต่|เพราะ",
    asks=r"ที่ไหน|อะไร|ใคร|เท่าไร|เท่าไหร่|ยังไง|อย่างไร|ไหน",
    words=False,
    carried=_TH_CARRIED,
)  # fmt: skip

#: Each language's table, by the code :func:`recallery.text.cues.language` names.
TABLES: dict[str, SlotTable] = {
    "en": _EN,
    "de": _DE,
    "fr": _FR,
    "es": _ES,
    "ru": _RU,
    "ar": _AR,
    "zh": _ZH,
    "ja": _JA,
    "ko": _KO,
    "hi": _HI,
    "th": _TH,
}

__all__ = ["TABLES", "Carried", "SlotTable"]
