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
- **Latin script**: the language of the text (:mod:`recallery.text.latin`: voted by its stop
  words and letters, English when nothing votes); then that language's Snowball stemmer
  (Vietnamese: none). English keeps exactly what the index has always done (accents removed,
  then the original Porter stemmer), other languages are stemmed with their accents, which are
  removed after. A query too short to name its language asks for each word's stem in the
  languages its letters vote for ("kitapları"), or in every Latin language ("Schwestern").
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
from recallery.text.latin import (
    MIN_VOTES,
    STOPS,
    VOTES,
    guessed,
    language_of,
    vote_counts,
)
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
    others, voted = guessed(text) if any(p[0] == "porter" for p in distinct) else ([], True)
    # another language stems a word as written, then takes its accents off (fıstığına)
    written = {unaccented(w): w for s, w in runs(text) if s is Script.LATIN} if others else {}
    groups = [[p, *((s, written.get(p[1], p[1]), True) for s in others)]
              if p[0] == "porter" else [p] for p in distinct]  # fmt: skip
    stem = _stems(p for g in groups for p in g)
    first = {stem[g[0]] for g in groups}  # another word's own stem is not asked twice
    asked = [[stem[p] for p in g if p is g[0] or voted or _kept(stem[p], p[1])] for g in groups]
    terms = [t for g, a in zip(groups, asked, strict=True) for t in dict.fromkeys(a)
             if t == stem[g[0]] or t not in first]  # fmt: skip
    return [t for t in terms if len(t) <= MAX_TERM_CHARS][:MAX_TERMS]


def _kept(stem: str, word: str) -> bool:
    """Whether a stem of a language nothing voted for is asked for: one that keeps
    :data:`STEM_MIN` letters and, but for its last letter (*hôpitaux* is *hôpital*), begins
    the word. A stemmer takes endings off the words of its language; of a word of another
    it makes what no text holds ("peanuts" in Indonesian is "anuts", "item" in Polish "it")."""
    return len(stem) >= STEM_MIN and unaccented(word).startswith(stem[:-1])


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
    votes = vote_counts(text, latin) if latin & VOTES.keys() else [0]
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
    return any(i in unsure for w in {word, unaccented(word)} for i in VOTES.get(w, ()))


def _kana_seam(gram: str) -> bool:
    """Whether a bigram pairs a katakana with a hiragana: where a katakana word meets the
    particle after it or the word before it (ペット|を, どんな|ペ), nearly always two words."""
    if len(gram) != 2:
        return False
    a, b = gram[0], gram[1]
    return (is_katakana(a) and is_hiragana(b)) or (is_hiragana(a) and is_katakana(b))


def _pieces(text: str, query: bool) -> tuple[list[_Piece], int]:
    """The words of ``text`` ready to stem, in order, and its length."""
    if text.isascii():  # the common case, fast
        latin = ascii_words(text)
        lang = language_of(text, latin)
        if lang == "en":
            stops = STOPS["en"]
            return [("porter", w, False) for w in latin if w not in stops], len(latin)
        parts = [(Script.LATIN, w) for w in latin]
    else:
        parts = list(runs(text))
        latin = [w for s, w in parts if s is Script.LATIN]
        lang = language_of(text, latin, not query) if latin else "en"
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
    stops = STOPS[lang]
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
    "MAX_TERMS",
    "MAX_TF",
    "Analyzed",
    "analyze",
    "analyze_all",
    "query_terms",
    "stemmer",
]
