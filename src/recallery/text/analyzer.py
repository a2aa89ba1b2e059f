"""The keyword analyzer: text to the terms every store indexes and every query matches.

One analyzer for SQLite and PostgreSQL alike (both store what it returns), so both give the
same keyword results in every language. Per run of text (:mod:`recallery.text.scripts`):

- **Chinese and Japanese**: overlapping character bigrams, as Lucene's ``CJKBigramFilter``
  (a run of one character is that character), so ``机器学习`` inside ``我喜欢机器学习`` is
  found. A stored text also indexes each Han character alone (not counted in its length), so
  a one-character query (``猫``) finds it inside a sentence; a query of two characters or
  more asks for bigrams only.
- **Korean**: one trailing particle stripped from each word (``이름은`` is ``이름``, ``차를``
  is ``차``), then bigrams of what is left: a word is found with or without its particle.
- **Thai, Lao, Khmer and Myanmar**, written without spaces between words: bigrams of letters
  (a letter with its vowel signs and tone marks, :func:`~recallery.text.scripts.letters`), so
  ``จักรยาน`` inside ``ฉันปั่นจักรยานไปทำงาน`` is found as ``机器学习`` is in Chinese.
- **Latin script**: the language of the text is voted by its stop words (and ß, ñ, ã), English
  when nothing votes; then that language's Snowball stemmer. English keeps exactly what the
  index has always done (accents removed, then the original Porter stemmer), other languages
  are stemmed with their accents, which are removed after. A query too short to name its
  language ("Schwestern") asks for each word's stem in every Latin language.
- **Cyrillic**: the Russian stemmer; **Arabic**: Lucene's light stemming
  (:mod:`recallery.text.arabic`: the article, و and the commonest suffixes taken off, so
  الكمان and كمان are one term); **Greek**: the Greek stemmer; **Devanagari**: the Hindi
  stemmer (किताबें and किताब are one term). Other scripts: words as they are.

Words of 3 to 64 characters are stemmed (FTS5's porter bounds). Stop words
(:mod:`recallery.text.stopwords`) count in a text's length but are never terms. A query's
terms are its distinct words (bigrams) before stemming, at most :data:`MAX_TERMS`; two words
with one stem count twice, as FTS5 counts them.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import Stemmer

from recallery.text import arabic, stopwords
from recallery.text.scripts import (
    Script,
    ascii_words,
    has_batchim,
    is_han,
    is_hiragana,
    is_katakana,
    letters,
    runs,
    unaccented,
)

#: Most terms a query asks for.
MAX_TERMS = 64
#: Word lengths that are stemmed (others pass unchanged, as in FTS5's porter tokenizer).
STEM_MIN, STEM_MAX = 3, 64
#: Longest term indexed, in characters (PostgreSQL refuses lexemes over 2047 bytes); a longer
#: word still counts in the length.
MAX_TERM_CHARS = 500
#: Most times a term counts in one text (PostgreSQL's ``tsvector`` keeps 256 positions of a
#: lexeme; both stores stop counting there).
MAX_TF = 256
#: Stop words (or telling letters) a text needs for its Latin words to be stemmed in another
#: language than English.
MIN_VOTES = 2

_LATIN_ORDER = tuple(stopwords.LATIN_STEMMERS)
#: The Latin-script languages the analyzer tells apart (ISO 639-1).
LATIN_LANGUAGES = frozenset(_LATIN_ORDER)


def _vote_table() -> dict[str, list[int]]:
    """Each Latin stop word (also written without its accents) to the languages listing it;
    a word of one letter only where :data:`~recallery.text.stopwords.ONE_LETTER_VOTES` says,
    without its accents only where ``VOTES_AS_WRITTEN`` does not."""
    table: dict[str, list[int]] = {}
    as_written = stopwords.VOTES_AS_WRITTEN
    for i, lang in enumerate(_LATIN_ORDER):
        for word in stopwords.LATIN_STOP_WORDS[lang]:
            if len(word) == 1 and lang not in stopwords.ONE_LETTER_VOTES:
                continue
            for form in {word, word if lang in as_written else unaccented(word)}:
                table.setdefault(form, []).append(i)
    return table


_VOTES = _vote_table()
_LATIN_STOPS = {
    lang: words if lang in stopwords.VOTES_AS_WRITTEN else words | {unaccented(w) for w in words}
    for lang, words in stopwords.LATIN_STOP_WORDS.items()
}
_STEMMER_OF = [stopwords.LATIN_STEMMERS[lang] for lang in _LATIN_ORDER]
_OTHER_STEMMERS = _STEMMER_OF[1:]
#: The stemmer of Arabic words: ours (:mod:`recallery.text.arabic`), every length.
ARABIC = "light-arabic"
_STEMMER_OF_SCRIPT = {
    Script.CYRILLIC: "russian",
    Script.ARABIC: ARABIC,
    Script.GREEK: "greek",
    Script.DEVANAGARI: "hindi",
}
_STOPS_OF_SCRIPT = {
    Script.CYRILLIC: stopwords.RUSSIAN,
    Script.ARABIC: stopwords.ARABIC,
    Script.DEVANAGARI: stopwords.HINDI,
}
_local = threading.local()  # a Stemmer is not safe to share between threads


@dataclass(frozen=True, slots=True)
class Analyzed:
    """A stored text's terms in order (repeats kept: their count is the term frequency) and
    its length, every word counted (stop words too; a CJK run counts its bigrams)."""

    terms: list[str]
    length: int


# A word waiting for its stemmer: (stemmer name or "" for none, word, accents removed after).
_Piece = tuple[str, str, bool]


def analyze(text: str) -> Analyzed:
    """The terms and length of one stored text."""
    return analyze_all([text])[0]


def analyze_all(texts: Sequence[str]) -> list[Analyzed]:
    """The terms and length of each of ``texts``; the words of all of them stemmed together
    (each distinct word once per language)."""
    pieces: list[list[_Piece]] = []
    lengths: list[int] = []
    for text in texts:
        found, length = _pieces(text, query=False)
        pieces.append(found)
        lengths.append(length)
    stem = _stems(p for found in pieces for p in found)
    return [
        Analyzed([t for t in (stem[p] for p in found) if len(t) <= MAX_TERM_CHARS], n)
        for found, n in zip(pieces, lengths, strict=True)
    ]


def query_terms(text: str) -> list[str]:
    """The terms a query matches: its distinct words and bigrams (stop words left out), at most
    :data:`MAX_TERMS`, each stemmed as a stored text's would be. A query whose Latin words
    name no language (no stop word of any: "Schwestern", "running dogs") asks for each word's
    stem in every Latin language, each distinct stem once, English's first (a stem that is
    another word's English stem is left out: "teachers teaching" asks for "teach" once)."""
    found, _ = _pieces(text, query=True)
    distinct = list(dict.fromkeys(_content(text, found)))[:MAX_TERMS]
    others = _guessed(text) if any(p[0] == "porter" for p in distinct) else []
    groups = [[p, *((s, p[1], True) for s in others)] if p[0] == "porter" else [p]
              for p in distinct]  # fmt: skip
    stem = _stems(p for g in groups for p in g)
    first = {stem[g[0]] for g in groups}  # another word's own stem is not asked twice
    asked = [[stem[p] for p in g if p is g[0] or _kept(stem[p], p[1])] for g in groups]
    terms = [t for g, a in zip(groups, asked, strict=True) for t in dict.fromkeys(a)
             if t == stem[g[0]] or t not in first]  # fmt: skip
    return [t for t in terms if len(t) <= MAX_TERM_CHARS][:MAX_TERMS]


def _guessed(text: str) -> list[str]:
    """The stemmers of the other Latin languages a query read as English may be written in:
    every one where nothing votes for any language ("Schwestern"), else those voted for more
    often than English (a letter: "kitapları", "Brüder"). "my running dogs" has a vote for
    English and as many for Polish and Czech (*my*, "we"): English alone."""
    votes = _votes(text, [w for s, w in runs(text) if s is Script.LATIN])
    if not any(votes):
        return _OTHER_STEMMERS
    return [_STEMMER_OF[i] for i in range(1, len(votes)) if votes[i] > votes[0]]


def _kept(stem: str, word: str) -> bool:
    """Whether another language's stem of an undecided query's word is asked for: only one
    that begins the word and keeps :data:`STEM_MIN` letters. A stemmer takes endings off the
    words of its language; of a word of another one it makes what no text holds ("peanuts" in
    Indonesian is "anuts", "running" in Turkish "runningi", "item" in Polish "it")."""
    return len(stem) >= STEM_MIN and unaccented(word).startswith(stem)


def _content(text: str, found: list[_Piece]) -> list[_Piece]:
    """A query's pieces without the function words its language left in: where no Latin
    language has :data:`MIN_VOTES` of its stop words in the query, its words are stemmed as
    English, so a stop word of a language with more of them than English has ("mein" in "mein
    Beruf", "mon" in "mon travail") is left out; a Chinese or Japanese bigram of two function
    characters (我的, 私の) is left out always. Kept where nothing else would remain (a query
    of function words only: "die"). So is a Japanese bigram of hiragana alone (てい, ます,
    けれ): Japanese writes its particles, verb endings and auxiliaries in hiragana, and its
    content words mostly in kanji or katakana, so ``練習していますか`` asks for 練習 and the
    bigrams that hold a kanji, not for the ending every other sentence shares; a Korean verb
    ending (:data:`~recallery.text.stopwords.KOREAN_ENDINGS`) likewise, and a bigram across
    the seam of a katakana word and hiragana (``トを`` of ペットを, which トマトを shares)."""
    latin = {w for s, w in runs(text) if s is Script.LATIN}
    votes = _votes(text, latin) if latin & _VOTES.keys() else [0]
    unsure = {i for i, n in enumerate(votes) if n > votes[0]} if max(votes) < MIN_VOTES else set()
    kept = [p for p in found if not _function(p, unsure)]
    return kept or found


def _function(piece: _Piece, unsure: set[int]) -> bool:
    """Whether ``piece`` is a CJK bigram of two function characters, or a stop word of one of
    the ``unsure`` Latin languages (their places in the vote)."""
    name, word, _ = piece
    if not name:
        if len(word) == 2 and word[0] in stopwords.CJK and word[1] in stopwords.CJK:
            return True
        return (
            word in stopwords.KOREAN_ENDINGS
            or all(is_hiragana(c) for c in word)
            or _kana_seam(word)
        )
    if not unsure:
        return False
    return any(i in unsure for w in {word, unaccented(word)} for i in _VOTES.get(w, ()))


def _kana_seam(gram: str) -> bool:
    """Whether a bigram pairs a katakana with a hiragana: where a katakana word meets the
    particle after it or the word before it (ペット|を, どんな|ペ), nearly always two words."""
    if len(gram) != 2:
        return False
    a, b = gram[0], gram[1]
    return (is_katakana(a) and is_hiragana(b)) or (is_hiragana(a) and is_katakana(b))


def latin_language(text: str) -> str:
    """The language (ISO 639-1) that Latin-script words of ``text`` are stemmed in."""
    return _latin_language(text, [w for s, w in runs(text) if s is Script.LATIN])


def latin_rivals(text: str) -> list[str]:
    """The Latin-script languages other than English that the words of ``text`` vote for
    at least as often as for English (and at least once), most votes first: what a short
    "J'habite à Lyon." or "Vivo en Madrid.", which :func:`latin_language` leaves English
    for want of :data:`MIN_VOTES`, may be written in."""
    votes = _votes(text, [w for s, w in runs(text) if s is Script.LATIN])
    rivals = [i for i in range(1, len(votes)) if votes[i] >= max(votes[0], 1)]
    return [_LATIN_ORDER[i] for i in sorted(rivals, key=lambda i: (-votes[i], i))]


def _latin_language(text: str, words: Iterable[str]) -> str:
    """Most distinct stop words win; another language than English needs :data:`MIN_VOTES`
    and more than English has (a short "see ya" stays English)."""
    votes = _votes(text, words)
    best = max(range(len(votes)), key=lambda i: (votes[i], -i))
    return _LATIN_ORDER[best] if votes[best] >= max(MIN_VOTES, votes[0] + 1) else "en"


def _votes(text: str, words: Iterable[str]) -> list[int]:
    """Each Latin language's distinct stop words among ``words``, and a vote for each language
    whose own letters ``text`` holds."""
    votes = [0] * len(_LATIN_ORDER)
    for word in _VOTES.keys() & set(words):
        for i in _VOTES[word]:
            votes[i] += 1
    if not text.isascii():
        for lang, letters in stopwords.LATIN_LETTERS:
            if any(c in text for c in letters):
                votes[_LATIN_ORDER.index(lang)] += 1
    return votes


def _pieces(text: str, query: bool) -> tuple[list[_Piece], int]:
    """The words of ``text`` ready to stem, in order, and its length."""
    if text.isascii():  # the common case, fast
        latin = ascii_words(text)
        lang = _latin_language(text, latin)
        if lang == "en":
            stops = _LATIN_STOPS["en"]
            return [("porter", w, False) for w in latin if w not in stops], len(latin)
        parts = [(Script.LATIN, w) for w in latin]
    else:
        parts = list(runs(text))
        latin = [w for s, w in parts if s is Script.LATIN]
        lang = _latin_language(text, latin) if latin else "en"
    found: list[_Piece] = []
    length = 0
    for script, run in parts:
        if script is Script.CJK:
            grams, n = _cjk(run, query)
        elif script is Script.HANGUL:
            grams, n = _hangul(run)
        elif script is Script.UNSPACED:
            grams, n = _bigrams(letters(run))
        else:
            found.extend(_word(script, run, lang))
            length += 1
            continue
        found.extend(("", g, False) for g in grams)
        length += n
    return found, length


def _word(script: Script, run: str, lang: str) -> list[_Piece]:
    """A word of an alphabetic script ready to stem, or nothing for a stop word."""
    if script is not Script.LATIN:
        if run in _STOPS_OF_SCRIPT.get(script, ()):
            return []
        return [(_STEMMER_OF_SCRIPT.get(script, ""), run, False)]
    stops = _LATIN_STOPS[lang]
    if lang == "en":  # accents removed before the stemmer, as FTS5's porter tokenizer does
        word = unaccented(run)
        return [] if word in stops else [("porter", word, False)]
    if run in stops or (lang not in stopwords.VOTES_AS_WRITTEN and unaccented(run) in stops):
        return []
    return [(stopwords.LATIN_STEMMERS[lang], run, True)]


def _cjk(run: str, query: bool) -> tuple[list[str], int]:
    """Bigrams of a Chinese or Japanese run (the character itself for a run of one), and for
    a stored text its Han characters alone too; the run's length is its bigram count."""
    if len(run) == 1:
        return ([] if run in stopwords.CJK else [run]), 1
    grams, n = _bigrams(list(run))
    terms = [g for g in grams if g not in stopwords.CJK]
    if not query:
        terms += [c for c in run if is_han(c) and c not in stopwords.CJK]
    return terms, n


def _hangul(word: str) -> tuple[list[str], int]:
    """A Korean word without its trailing particle, as bigrams (one syllable: itself)."""
    word = _without_particle(word)
    if word in stopwords.KOREAN:
        return [], 1
    return _bigrams(list(word))


def _bigrams(units: list[str]) -> tuple[list[str], int]:
    """Overlapping pairs of ``units`` (one unit: itself) and their count."""
    if len(units) == 1:
        return units, 1
    grams = [a + b for a, b in itertools.pairwise(units)]
    return grams, len(grams)


def _without_particle(word: str) -> str:
    for particle, after in stopwords.KOREAN_PARTICLES:
        if len(word) > len(particle) and word.endswith(particle):
            before = word[-len(particle) - 1]
            if after == "" or (after == "C") == has_batchim(before):
                return word[: -len(particle)]
    return word


def stemmer(name: str) -> Any:
    """This thread's Snowball stemmer ``name`` (PyStemmer's; one per thread, as a stemmer is not
    safe to share)."""
    held: dict[str, Any] | None = getattr(_local, "stemmers", None)
    if held is None:
        held = _local.stemmers = {}
    if name not in held:
        held[name] = Stemmer.Stemmer(name)
    return held[name]


def _stems(pieces: Iterable[_Piece]) -> dict[_Piece, str]:
    """Each distinct piece to its term: stemmed by its language's stemmer where its length is
    within the bounds, accents removed after where it asks."""
    by_stemmer: dict[str, list[_Piece]] = {}
    for p in set(pieces):
        by_stemmer.setdefault(p[0], []).append(p)
    out: dict[_Piece, str] = {}
    for name, group in by_stemmer.items():
        if not name:  # kept as written (Vietnamese: without its accents, as it was read)
            out.update((p, unaccented(p[1]) if p[2] else p[1]) for p in group)
            continue
        if name == ARABIC:
            out.update((p, arabic.stem(p[1])) for p in group)
            continue
        stemmed = [p for p in group if STEM_MIN <= len(p[1]) <= STEM_MAX]
        out.update((p, unaccented(p[1]) if p[2] else p[1]) for p in group)
        stems: list[str] = stemmer(name).stemWords([p[1] for p in stemmed])
        out.update((p, unaccented(s) if p[2] else s) for p, s in zip(stemmed, stems, strict=True))
    return out


__all__ = [
    "LATIN_LANGUAGES",
    "MAX_TERMS",
    "MAX_TF",
    "Analyzed",
    "analyze",
    "analyze_all",
    "latin_language",
    "latin_rivals",
    "query_terms",
    "stemmer",
]
