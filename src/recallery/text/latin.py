"""Which Latin-script language a text is written in, told by its stop words and letters:
the one decision the keyword analyzer (:mod:`recallery.text.analyzer`) stems by, that the time
cues and slot tables read their language by, and that a migration finds changed rows by.

Each language's distinct stop words among a text's words vote for it, and a letter only some
languages write (ß, ñ, å, ı, ł, ř, ő, ơ) is one vote more for each of them; another language
than English needs :data:`MIN_VOTES` and more votes than English. The lists and letters are
declared in :mod:`recallery.text.stopwords`.
"""

from __future__ import annotations

from collections.abc import Iterable

from recallery.text import stopwords
from recallery.text.scripts import Script, runs, unaccented

#: Stop words (or telling letters) a text needs for its Latin words to be stemmed in another
#: language than English.
MIN_VOTES = 2

ORDER = tuple(stopwords.LATIN_STEMMERS)
#: The Latin-script languages the analyzer tells apart (ISO 639-1).
LATIN_LANGUAGES = frozenset(ORDER)


def _vote_table() -> dict[str, list[int]]:
    """Each Latin stop word (also written without its accents) to the languages listing it;
    without its accents only where ``VOTES_AS_WRITTEN`` does not. The languages told apart
    first (:data:`~recallery.text.stopwords.FIRST_LATIN`) keep what they had: a vote for a
    word of one letter, and two for a form two of their words share (*var* and *vår*)."""
    table: dict[str, list[int]] = {}
    as_written = stopwords.VOTES_AS_WRITTEN
    for i, lang in enumerate(ORDER):
        for word in stopwords.LATIN_STOP_WORDS[lang]:
            if len(word) == 1 and lang not in stopwords.FIRST_LATIN:
                continue
            for form in {word, word if lang in as_written else unaccented(word)}:
                voters = table.setdefault(form, [])
                if lang in stopwords.FIRST_LATIN or i not in voters:
                    voters.append(i)
    return table


VOTES = _vote_table()
STOPS = {
    lang: words if lang in stopwords.VOTES_AS_WRITTEN else words | {unaccented(w) for w in words}
    for lang, words in stopwords.LATIN_STOP_WORDS.items()
}
STEMMER_OF = [stopwords.LATIN_STEMMERS[lang] for lang in ORDER]
OTHER_STEMMERS = STEMMER_OF[1:]


def latin_language(text: str) -> str:
    """The language (ISO 639-1) that Latin-script words of ``text`` are stemmed in."""
    return language_of(text, [w for s, w in runs(text) if s is Script.LATIN])


def latin_rivals(text: str) -> list[str]:
    """The Latin-script languages other than English that the words of ``text`` vote for
    at least as often as for English (and at least once), most votes first: what a short
    "J'habite à Lyon." or "Vivo en Madrid.", which :func:`latin_language` leaves English
    for want of :data:`MIN_VOTES`, may be written in."""
    votes = vote_counts(text, [w for s, w in runs(text) if s is Script.LATIN])
    rivals = [i for i in range(1, len(votes)) if votes[i] >= max(votes[0], 1)]
    return [ORDER[i] for i in sorted(rivals, key=lambda i: (-votes[i], i))]


def language_of(text: str, words: Iterable[str], stored: bool = True) -> str:
    """Most distinct stop words win; another language than English needs :data:`MIN_VOTES`
    and more than English has (a short "see ya" stays English). A stored text that none of
    English's stop words is in is read by its letters (:func:`_by_letters`: Turkish, Finnish
    or Hungarian write their function words as endings, so "Büyükannem bahçesinde domates
    yetiştiriyor" has no stop word, and ü, ç and ş); a query is read as English then, and
    asks for that language's stems too (:func:`~recallery.text.analyzer.query_terms`)."""
    votes = vote_counts(text, words)
    best = max(range(len(votes)), key=lambda i: (votes[i], -i))
    if votes[best] >= max(MIN_VOTES, votes[0] + 1):
        return ORDER[best]
    return _by_letters(text) if stored and not votes[0] and not text.isascii() else "en"


def _by_letters(text: str) -> str:
    """The later Latin language (not :data:`~recallery.text.stopwords.FIRST_LATIN`, whose
    texts keep their analysis) with more distinct letters of its own in ``text`` than any
    other language, and at least :data:`MIN_VOTES` of them (one is as often a name's, or a
    letter other languages share: ç of *garçon*), or English."""
    counts = _letters_held(text)
    best = max(counts.values())
    leaders = [lang for lang, n in counts.items() if n == best]
    if best < MIN_VOTES or len(leaders) > 1 or leaders[0] in stopwords.FIRST_LATIN:
        return "en"
    return leaders[0]


def vote_counts(text: str, words: Iterable[str]) -> list[int]:
    """Each Latin language's distinct stop words among ``words``, and a vote for each language
    whose own letters ``text`` holds."""
    votes = [0] * len(ORDER)
    for word in VOTES.keys() & set(words):
        for i in VOTES[word]:
            votes[i] += 1
    if not text.isascii():
        for lang, held in _letters_held(text).items():
            votes[ORDER.index(lang)] += held > 0
    return votes


def _letters_held(text: str) -> dict[str, int]:
    """How many distinct letters of each language's own (``LATIN_LETTERS``) ``text`` holds, a
    capital and its small letter counted once."""
    held = set(text)
    return {
        lang: len({c.lower() for c in held & set(letters)})
        for lang, letters in stopwords.LATIN_LETTERS
    }


def guessed(text: str) -> tuple[list[str], bool]:
    """The stemmers of the other Latin languages a query read as English may be written in,
    and whether something voted for them: every one where nothing votes for any language
    ("Schwestern"), else those voted for more often than English (a letter: "kitapları",
    "Brüder"). "my running dogs" has a vote for English and as many for Polish and Czech
    (*my*, "we"): English alone."""
    votes = vote_counts(text, [w for s, w in runs(text) if s is Script.LATIN])
    if not any(votes):
        return OTHER_STEMMERS, False
    return [STEMMER_OF[i] for i in range(1, len(votes)) if votes[i] > votes[0]], True


__all__ = [
    "LATIN_LANGUAGES",
    "MIN_VOTES",
    "ORDER",
    "OTHER_STEMMERS",
    "STEMMER_OF",
    "STOPS",
    "VOTES",
    "guessed",
    "language_of",
    "latin_language",
    "latin_rivals",
    "vote_counts",
]
