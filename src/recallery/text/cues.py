"""Time cues in every language the keyword analyzer reads: whether a query asks about the
present ("now", 现在, jetzt, сейчас, الآن), about the beginning ("first", 最初, erste), about a
point in the past ("in 2019", 去年, назад), and whether it is one short question its asker asks
about themselves, in the present tense ("Where do I live?", 我住在哪里？).

Ranking rules read these through :func:`read` (:mod:`recallery.retrieval.recency`), never an
English pattern over any text (STYLE 22). The query's language is named first (:func:`language`:
its script, and for Latin script the analyzer's stop-word vote), and only that language's table
is looked at: the language gate. A language without a table (Greek, Hindi, ...) has no cues, so
its queries are ranked without time. English keeps the patterns the ranking was tuned with on
LoCoMo and the current-fact sets; the other tables are small word lists, matched over the text as
the analyzer normalises it (NFKC, case folded, Latin accents removed, ё as е, Arabic without its
vowel marks): whole words in alphabetic scripts, anywhere in Chinese, Japanese and Korean runs
(no spaces between their words; a Korean ending carries the tense). Tense is read from a few
auxiliaries and endings only: a question it misses as past is treated as present.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from recallery.text.latin import latin_language
from recallery.text.scripts import Script, has_thai, runs, unaccented


@dataclass(frozen=True, slots=True)
class Cues:
    """What a query says about time, in its own language (:attr:`language`, "" for none)."""

    language: str
    now: bool = False
    """Asks for the present ("now", "currently", "still", "latest")."""
    earlier: bool = False
    """Asks for the beginning ("first", "originally", "used to")."""
    past: bool = False
    """Names a point in the past ("back when", "in 2019", "two years ago")."""
    asker: bool = False
    """In the first person singular ("I", "my", 我, 내, مي)."""
    past_tense: bool = False
    """In the past tense ("did", "was", 了, 었, был)."""
    question: bool = False
    """One short question, not a dialogue or a passage."""


#: The most words (a Chinese, Japanese or Korean run: one per two characters) a question runs to.
QUESTION_WORDS = 25

# --- English: the patterns the ranking was tuned with, over the raw text ------------------------

_EN_NOW = re.compile(
    r"\b(now|currently|current|still|these days|nowadays|latest|at the moment|at present|"
    r"today|anymore|any more|most recent|most recently|these days)\b",
    re.IGNORECASE,
)
_EN_EARLIER = re.compile(
    r"\b(first|originally|original|initially|at first|used to|previously|formerly|"
    r"before (?:the|my|i|we|he|she|they)|earliest)\b",
    re.IGNORECASE,
)
_EN_PAST = re.compile(
    r"\b(back when|back in|ago|last (?:year|month|week|summer|winter|spring|autumn|fall)|"
    r"in (?:19|20)\d\d|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* (?:19|20)\d\d)\b",
    re.IGNORECASE,
)
_EN_ASKER = re.compile(r"\b(i|i'm|i've|i'd|me|my|mine|myself)\b", re.IGNORECASE)
_EN_PAST_TENSE = re.compile(r"\b(did|was|were|had|went|used to)\b", re.IGNORECASE)
_EN_QUESTION = re.compile(
    r"^\W*(what|where|which|who|whose|when|how|do|does|am|is|are|have|has|can)\b", re.IGNORECASE
)
_EN_SENTENCES = re.compile(r"[.!?]\s+\S")

# --- every other language: word lists over the normalised text ----------------------------------

_YEAR = r"(?:19|20)\d\d"
#: A Hangul syllable that ends in ㅆ marks the past (했, 았, 었, 갔, 샀), except 있 (there is,
#: to have) and 겠 (the future).
_KO_PAST = (
    "["
    + "".join(
        chr(c) for c in range(0xAC00, 0xD7A4) if (c - 0xAC00) % 28 == 20 and chr(c) not in "있겠"
    )
    + "]"
)

#: Per language and cue: the words or phrases (alternatives of one pattern) that say it; an
#: entry may use a pattern's classes (``\w``) where a language marks the cue by an ending.
#: "open": how a question may start (alphabetic scripts) or a word only questions hold
#: (Chinese, Japanese, Korean).
_WORDS: dict[str, dict[str, str]] = {
    "de": {
        "now": r"jetzt|derzeit|momentan|zurzeit|aktuell|aktuelle[nmrs]?|inzwischen|mittlerweile|"
        r"heute|heutzutage|noch|neueste[nmrs]?|zuletzt",
        "earlier": r"zuerst|ursprunglich|anfangs|anfanglich|fruher|vorher|ehemals|"
        r"ehemalige[nmrs]?|einst|erste[nmrs]?",
        "past": r"damals|gestern|letztes jahr|letzte woche|letzten (?:monat|sommer|winter|herbst)|"
        rf"vor (?:einem|einer|zwei|drei|vier|funf|\d+) \w+|im jahr {_YEAR}|{_YEAR}",
        "asker": r"ich|mich|mir|mein|meine|meinen|meinem|meiner|meines",
        "past_tense": r"war|warst|waren|wart|hatte|hattest|hatten|wurde|wurdest|wurden|ging|"
        # the perfect: an auxiliary, then a participle that ends the question
        r"gingen|(?:habe|hast|hat|haben|habt|bin|bist|ist|sind|seid) .*\w*ge\w+(?:t|en)$",
        "open": r"wo|was|wer|wann|warum|wie|welche[nmrs]?|wohin|woher|habe|hast|hat|bin|bist|"
        r"ist|sind|kann|kannst",
    },
    "fr": {
        "now": r"maintenant|actuellement|aujourd hui|en ce moment|desormais|encore|"
        r"de nos jours|a present",
        "earlier": r"premier|premiere|premiers|premieres|d abord|initialement|au debut|"
        r"auparavant|autrefois|a l origine|avant",
        "past": r"l annee derniere|le mois dernier|la semaine derniere|l ete dernier|il y a|"
        rf"hier|en {_YEAR}|{_YEAR}",
        "asker": r"je|j|moi|me|m|mon|ma|mes",
        "past_tense": r"etait|etais|etaient|avais|avait|avaient|fus|fut|ai eu|ai ete",
        "open": r"ou|que|qu|quel|quelle|quels|quelles|quand|comment|pourquoi|qui|combien|"
        r"est ce que|ai je|suis je",
    },
    "es": {
        "now": r"ahora|actualmente|hoy|todavia|aun|hoy en dia|en este momento",
        "earlier": r"primero|primera|primer|originalmente|inicialmente|al principio|antes|"
        r"antiguamente",
        "past": r"hace|el ano pasado|el mes pasado|la semana pasada|el verano pasado|ayer|"
        rf"en {_YEAR}|{_YEAR}",
        "asker": r"yo|me|mi|mis|mio|mia|conmigo",
        "past_tense": r"era|eras|eran|fue|fui|fueron|tenia|tenias|estaba|estabas|habia|vivia|"
        r"trabajaba",
        "open": r"que|cual|cuales|donde|cuando|quien|quienes|como|por que|cuanto|cuantos|"
        r"tengo|soy|estoy",
    },
    "it": {
        "now": r"ora|adesso|attualmente|oggi|ancora|al momento|in questo momento|oggigiorno",
        "earlier": r"primo|prima|originariamente|inizialmente|all inizio|un tempo|in origine",
        "past": rf"fa|l anno scorso|il mese scorso|la settimana scorsa|ieri|nel {_YEAR}|{_YEAR}",
        "asker": r"io|mi|me|mio|mia|miei|mie",
        "past_tense": r"era|ero|erano|eri|fu|fui|avevo|aveva|avevano|ho avuto|sono stato|"
        r"sono stata",
        "open": r"cosa|che|quale|quali|dove|quando|chi|come|perche|quanto|quanti|ho|sono",
    },
    "pt": {
        "now": r"agora|atualmente|hoje|ainda|no momento|hoje em dia|neste momento",
        "earlier": r"primeiro|primeira|originalmente|inicialmente|no inicio|antes|antigamente",
        "past": r"atras|ano passado|mes passado|semana passada|ontem|"
        rf"em {_YEAR}|{_YEAR}",
        "asker": r"eu|me|mim|meu|minha|meus|minhas|comigo",
        "past_tense": r"era|eram|foi|fui|foram|tinha|tinham|estava|estavam|havia|morava|"
        r"trabalhava",
        "open": r"o que|que|qual|quais|onde|quando|quem|como|porque|por que|quanto|quantos|"
        r"tenho|sou|estou",
    },
    "nl": {
        "now": r"nu|momenteel|tegenwoordig|vandaag|nog|op dit moment|inmiddels|nieuwste",
        "earlier": r"eerst|eerste|oorspronkelijk|aanvankelijk|vroeger|voorheen|in het begin",
        "past": rf"geleden|vorig jaar|vorige maand|vorige week|gisteren|in {_YEAR}|{_YEAR}",
        "asker": r"ik|mij|me|mijn",
        "past_tense": r"was|waren|had|hadden|werd|werden|ging|woonde|werkte",
        "open": r"wat|wie|waar|wanneer|waarom|hoe|welke|welk|heb|ben|is",
    },
    "ru": {
        "now": r"сейчас|теперь|сегодня|все еще|еще|до сих пор|в данный момент|"
        r"на данный момент|ныне|нынче|в настоящее время|текущ\w*",
        "earlier": r"сначала|вначале|в начале|перв\w*|изначально|первоначально|раньше|прежде|"
        r"когда то",
        "past": r"назад|в прошлом году|в прошлом месяце|на прошлой неделе|прошлым летом|вчера|"
        rf"тогда|в {_YEAR}|{_YEAR}",
        "asker": r"я|меня|мне|мной|мой|моя|мое|мои|моего|моей|мою|моих|моим|моими|моем",
        # был, работал, жила, купили: the past ends in л, ла, ло, ли after a vowel
        "past_tense": r"был|была|было|были|\w{2,}[аяиеы](?:л|ла|ло|ли)(?:сь|ся)?",
        "open": r"что|кто|где|когда|как|какой|какая|какое|какие|какую|куда|откуда|почему|"
        r"зачем|сколько|чем|кем",
    },
    "ar": {
        "now": r"الآن|الان|حاليا|اليوم|هذه الأيام|هذه الايام|لا يزال|لا تزال|ما زال|مازال|"
        r"ما زلت|لا زلت|لازلت|ما تزال|أحدث|احدث|الحالي|الحالية",
        "earlier": r"أول|اول|أولا|اولا|الأول|الاول|الأولى|الاولى|سابقا|في البداية|في الأصل|"
        r"أصلا|اصلا|قبل|من قبل",
        "past": r"منذ|العام الماضي|السنة الماضية|الشهر الماضي|الأسبوع الماضي|الاسبوع الماضي|"
        rf"أمس|امس|البارحة|في عام {_YEAR}|{_YEAR}",
        # أنا, لي, and a word that ends in the possessive ي (وظيفتي, my job; اسمي, my name)
        "asker": r"أنا|انا|لي|لدي|عندي|(?!التي|الذي)\w{2,}ي",
        "past_tense": r"كان|كانت|كنت|كانوا|كنا|كنتم",
        "open": r"ما|ماذا|من|أين|اين|متى|كيف|لماذا|كم|هل|أي|اي",
    },
    "zh": {
        "now": r"现在|目前|当前|如今|最近|仍然|依然|至今|今天|最新|眼下",
        "earlier": r"第一|最初|起初|当初|原来|本来|以前|之前|首先|一开始|最早|从前",
        "past": rf"去年|前年|昨天|前天|当时|那时|上个月|上周|上星期|年前|{_YEAR} ?年",
        "asker": r"我(?!们)",
        "past_tense": r"了|过|曾",
        "open": r"什么|哪|谁|几|多少|怎么|为什么|吗|呢",
    },
    "ja": {
        "now": r"今|現在|最近|最新|まだ",
        "earlier": r"最初|初め|はじめ|元々|もともと|以前|当初",
        "past": rf"去年|昨年|昨日|当時|先月|先週|年前|{_YEAR} ?年",
        "asker": r"私|僕|俺|わたし|あたし|ぼく|おれ",
        "past_tense": r"ました|でした|だった|かった|った|んだ",
        "open": r"何|なに|どこ|いつ|誰|だれ|どう|なぜ|どの|どれ|か$",
    },
    "ko": {
        "now": r"지금|현재|요즘|요새|오늘|아직|최근|최신|이제",
        "earlier": r"처음|원래|예전|이전|첫|최초|본래",
        "past": rf"작년|어제|당시|지난|년 전|{_YEAR} ?년",
        "asker": r"(?<!\S)(?:나|내|저|제)(?:가|는|를|의|도|게|한테)?(?!\S)",
        "past_tense": _KO_PAST,
        "open": r"뭐|무엇|무슨|어디|언제|누가|누구|어떤|어느|왜|어떻게|몇|까$",
    },
}

#: Languages written without spaces between words (or with endings that carry the cue):
#: their words are found anywhere in a run.
_UNSPACED = frozenset({"zh", "ja", "ko"})
_QUESTION_MARKS = ("?", "？", "؟")
_SENTENCE_ENDS = re.compile(r"[.!?;]\s+\S|[。！？؟]\s*\S")


def _compiled(lang: str, kind: str, words: str) -> re.Pattern[str]:
    if lang in _UNSPACED:
        return re.compile(words)
    if kind == "open":
        return re.compile(rf"^(?:{words})(?!\S)")
    return re.compile(rf"(?<!\S)(?:{words})(?!\S)")


_TABLES = {
    lang: {kind: _compiled(lang, kind, words) for kind, words in table.items()}
    for lang, table in _WORDS.items()
}

#: Languages with cues: English and each table above.
LANGUAGES = frozenset({"en", *_WORDS})

_KANA = re.compile("[\u3041-\u3096\u30a1-\u30fa]")


def language(text: str) -> str:
    """The language of ``text`` (ISO 639-1): the script most of its letters are written in
    (a Chinese, Japanese or Korean character counts as two letters), Japanese for Han with kana,
    and for Latin script the language the analyzer stems it in; "" for another script."""
    weight: dict[Script, int] = {}
    for script, run in runs(text):
        if run.isdigit():
            continue
        n = 2 * len(run) if script in (Script.CJK, Script.HANGUL) else len(run)
        weight[script] = weight.get(script, 0) + n
    if not weight:
        return "en"
    script = max(weight, key=lambda s: weight[s])
    if script is Script.CJK:
        return "ja" if _KANA.search(text) else "zh"
    if script is Script.UNSPACED:
        return "th" if has_thai(text) else ""
    return _OF_SCRIPT.get(script) or (latin_language(text) if script is Script.LATIN else "")


_OF_SCRIPT = {
    Script.HANGUL: "ko",
    Script.CYRILLIC: "ru",
    Script.ARABIC: "ar",
    Script.DEVANAGARI: "hi",
}


@lru_cache(maxsize=1024)
def read(query: str) -> Cues:
    """The time cues of ``query`` in its language; none where its language has no table."""
    lang = language(query)
    if lang == "en":
        return _english(query)
    table = _TABLES.get(lang)
    if table is None:
        return Cues(lang)
    text = _normalised(query)
    has = {kind: pattern.search(text) is not None for kind, pattern in table.items()}
    return Cues(
        lang,
        now=has["now"],
        earlier=has["earlier"],
        past=has["past"],
        asker=has["asker"],
        past_tense=has["past_tense"],
        question=_one_question(query, text, has["open"]),
    )


def _english(query: str) -> Cues:
    text = query.strip()
    question = (
        len(text.split()) <= QUESTION_WORDS
        and _EN_SENTENCES.search(text) is None
        and (text.endswith("?") or _EN_QUESTION.match(text) is not None)
    )
    return Cues(
        "en",
        now=_EN_NOW.search(query) is not None,
        earlier=_EN_EARLIER.search(query) is not None,
        past=_EN_PAST.search(query) is not None,
        asker=_EN_ASKER.search(query) is not None,
        past_tense=_EN_PAST_TENSE.search(query) is not None,
        question=question,
    )


def _normalised(text: str) -> str:
    """The words of ``text`` as the analyzer folds them, one space between them (Latin words
    without their accents)."""
    return " ".join(unaccented(w) if s is Script.LATIN else w for s, w in runs(text))


def _one_question(raw: str, text: str, opens: bool) -> bool:
    """One short question: at most :data:`QUESTION_WORDS` words, one sentence, and a question
    mark at its end or a question's opening word (in Chinese, Japanese and Korean: a question
    word or particle anywhere)."""
    words = sum((len(w) + 1) // 2 if s in (Script.CJK, Script.HANGUL) else 1 for s, w in runs(raw))
    stripped = raw.strip()
    return (
        0 < words <= QUESTION_WORDS
        and _SENTENCE_ENDS.search(stripped) is None
        and (stripped.endswith(_QUESTION_MARKS) or opens)
    )


__all__ = ["LANGUAGES", "QUESTION_WORDS", "Cues", "language", "read"]
