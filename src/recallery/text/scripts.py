"""Text split into the runs the keyword analyzer treats alike: Chinese and Japanese
characters, Hangul, runs of the scripts written without spaces between words (Thai, Lao,
Khmer, Myanmar), and words of the alphabetic scripts, each word tagged with its script.

Normalisation keeps the distinctions that change a word: NFKC folds full-width and
half-width forms and composes what can be composed (half-width ﾊﾞｽ is バス), so Japanese
voicing marks stay on their kana (バス, パス and ハス are three words); ``casefold`` lowers
case and writes ß as ss. Only Latin letters lose their accents (as FTS5's ``unicode61
remove_diacritics 2`` does); Cyrillic keeps й and folds ё to е, Arabic loses its vowel marks
and tatweel. Combining marks of other scripts (Devanagari, Thai, Hebrew) stay in their words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from enum import Enum

#: Han ideographs (with 々〆〇〻), Hiragana (with its voicing marks), Katakana (without the
#: middle dot ・): bigrammed together, as Lucene's CJKBigramFilter does.
_CJK = (
    "\u3005-\u3007\u303b\u3041-\u3096\u3099-\u309f\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
)
_HAN = re.compile(
    "[\u3005-\u3007\u303b\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]"
)
_HANGUL = "\uac00-\ud7a3\u1100-\u11ff\u3131-\u318e\ua960-\ua97f\ud7b0-\ud7ff"
#: The letters, marks and digits of Thai, Lao, Myanmar (with its extensions) and Khmer, their
#: sentence marks left out: written without spaces between words, so a run is a phrase or a
#: sentence, bigrammed by letter as CJK text is.
_THAI = "\u0e01-\u0e4e\u0e50-\u0e59"
_UNSPACED = (
    _THAI + "\u0e81-\u0edf\u1000-\u1049\u1050-\u109f"
    "\u1780-\u17d3\u17d7\u17dc\u17dd\u17e0-\u17e9\ua9e0-\ua9fe\uaa60-\uaa7f"
)
_HAS_THAI = re.compile(f"[{_THAI}]")
#: Marks that join the next letter to the one before (Khmer's coeng, Myanmar's stacking
#: virama): the consonant written below belongs to the letter it is written under.
_JOINERS = "\u17d2\u1039"
#: Thai and Lao vowels written before the consonant they follow in speech (เ แ โ ใ ไ), which
#: join the next letter, and vowels written after it as letters of their own (ะ า ำ ๅ),
#: which join the one before: Khmer's and Myanmar's vowels are marks, and join it anyway.
_LEADING = "\u0e40-\u0e44\u0ec0-\u0ec4"
_FOLLOWING = "\u0e30\u0e32\u0e33\u0e45\u0eb0\u0eb2\u0eb3"
_JOINS_NEXT = re.compile(f"[{_JOINERS}{_LEADING}]")
_JOINS_BEFORE = re.compile(f"[{_FOLLOWING}]")
#: Combining marks that belong inside a word (Python's ``\w`` leaves them out): the general
#: combining blocks and the Hebrew, Arabic, Indic and Tibetan blocks whole (their letters are
#: word characters anyway; the danda ends a sentence). Thai, Lao, Myanmar and Khmer marks
#: are in their runs (:data:`_UNSPACED`).
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
    "\u0900-\u0963\u0966-\u0dff\u0f00-\u0fff\u1ab0-\u1aff"
    "\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
)
_TOKEN = re.compile(
    f"(?P<cjk>[{_CJK}]+)|(?P<hangul>[{_HANGUL}]+)|(?P<unspaced>[{_UNSPACED}]+)"
    f"|(?P<word>(?:[^\\W_{_CJK}{_HANGUL}{_UNSPACED}]|[{_MARKS}])+)"
)
_ASCII_WORD = re.compile(r"[a-z0-9]+")
_ARABIC_MARKS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")


class Script(Enum):
    """What the analyzer does with a run: bigrams, Hangul words, or a stemmer's words."""

    CJK = "cjk"
    HANGUL = "hangul"
    UNSPACED = "unspaced"
    DEVANAGARI = "devanagari"
    LATIN = "latin"
    CYRILLIC = "cyrillic"
    GREEK = "greek"
    ARABIC = "arabic"
    OTHER = "other"


def _script_of(word: str) -> Script:
    """The script of the first letter of ``word`` (a word without letters counts as Latin,
    so numbers are stemmed as English text stems them: "1990s" is "1990")."""
    for ch in word:
        if not ch.isalpha():
            continue
        c = ord(ch)
        if c <= 0x024F or 0x1E00 <= c <= 0x1EFF or 0x2C60 <= c <= 0x2C7F or 0xA720 <= c <= 0xA7FF:
            return Script.LATIN
        if 0x0400 <= c <= 0x052F or 0x1C80 <= c <= 0x1C8F or 0xA640 <= c <= 0xA69F:
            return Script.CYRILLIC
        if 0x0370 <= c <= 0x03FF or 0x1F00 <= c <= 0x1FFF:
            return Script.GREEK
        if 0x0600 <= c <= 0x08FF or 0xFB50 <= c <= 0xFDFF or 0xFE70 <= c <= 0xFEFF:
            return Script.ARABIC
        if 0x0900 <= c <= 0x097F or 0xA8E0 <= c <= 0xA8FF:
            return Script.DEVANAGARI
        return Script.OTHER
    return Script.LATIN


def ascii_words(text: str) -> list[str]:
    """The words of an ASCII ``text``, lower-cased (what :func:`runs` finds, faster)."""
    return _ASCII_WORD.findall(text.lower())


def runs(text: str) -> Iterator[tuple[Script, str]]:
    """The runs of ``text``, normalised and case-folded, each with its script."""
    if text.isascii():
        for word in ascii_words(text):
            yield Script.LATIN, word
        return
    for m in _TOKEN.finditer(unicodedata.normalize("NFKC", text).casefold()):
        kind, run = m.lastgroup, m.group()
        if kind == "cjk":
            yield Script.CJK, run
        elif kind == "hangul":
            yield Script.HANGUL, run
        elif kind == "unspaced":
            yield Script.UNSPACED, run
        else:
            yield _folded(run)


def _folded(word: str) -> tuple[Script, str]:
    script = _script_of(word)
    if script is Script.CYRILLIC:
        word = "".join(c for c in word if not unicodedata.combining(c)).replace("ё", "е")
    elif script is Script.ARABIC:
        word = _ARABIC_MARKS.sub("", word)
    elif script is Script.GREEK:
        word = "".join(
            c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c)
        )
    return script, word


def unaccented(word: str) -> str:
    """A Latin word without its accents (é is e, ü is u); other letters as they are."""
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def letters(run: str) -> list[str]:
    """The syllable pieces of a run of Thai, Lao, Khmer or Myanmar text: each consonant with
    its vowels (before, above, below and after it), its tone marks and a consonant stacked
    under it, so a bigram is two pieces of syllables (อาหาร is อา หา ร, อาชีพ is อา ชี พ:
    they share no bigram), not a consonant and its vowel sign."""
    out: list[str] = []
    for ch in run:
        if out and (is_mark(ch) or _JOINS_BEFORE.match(ch) or _JOINS_NEXT.match(out[-1][-1])):
            out[-1] += ch
        else:
            out.append(ch)
    return out


def is_han(ch: str) -> bool:
    """Whether ``ch`` is a Han ideograph (kanji, hanzi)."""
    return _HAN.match(ch) is not None


def is_hiragana(ch: str) -> bool:
    """Whether ``ch`` is a hiragana letter (ぁ to ゖ, and ゝ ゞ)."""
    return "\u3041" <= ch <= "\u3096" or ch in "\u309d\u309e"


def is_mark(ch: str) -> bool:
    """Whether ``ch`` is a combining mark (a vowel sign, a tone mark, an accent)."""
    return unicodedata.category(ch)[0] == "M"


def has_thai(text: str) -> bool:
    """Whether ``text`` holds Thai letters (not Lao, Khmer or Myanmar, also written unspaced)."""
    return _HAS_THAI.search(text) is not None


def is_katakana(ch: str) -> bool:
    """Whether ``ch`` is a katakana letter or the long vowel mark (ァ to ヺ, ー, ヽ ヾ)."""
    return "\u30a1" <= ch <= "\u30fa" or ch in "\u30fc\u30fd\u30fe" or "\u31f0" <= ch <= "\u31ff"


def has_batchim(syllable: str) -> bool:
    """Whether a Hangul syllable ends in a consonant (a final jamo)."""
    c = ord(syllable) - 0xAC00
    return 0 <= c < 11172 and c % 28 != 0


__all__ = [
    "Script",
    "ascii_words",
    "has_batchim",
    "has_thai",
    "is_han",
    "is_hiragana",
    "is_katakana",
    "is_mark",
    "letters",
    "runs",
    "unaccented",
]
