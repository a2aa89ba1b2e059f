"""Arabic words as the keyword index keeps them: Lucene's Arabic normalisation and light
stemming (``ArabicNormalizer`` and ``ArabicStemmer``, after Larkey, Ballesteros and Connell's
*light10*), written for this analyzer.

Snowball's Arabic stemmer, used before, stemmed a word with and without its article apart
where what is left is short: الكمان to ``الكم`` but كمان to ``كمان``, الآلة to ``الال`` but آلة
to ``الة``, and فطائر to ``طاير`` (a leading ف read as the conjunction "so") but الفطائر to
``فطاير``; so one word in two forms was two terms. Light stemming takes off only the article
(with the prepositions and conjunction fused to it), the conjunction و and the commonest
suffixes, and never leaves fewer than two letters; the letters written several ways are
written one way first. The vowel marks and the tatweel are already gone
(:mod:`recallery.text.scripts`).
"""

from __future__ import annotations

#: Letters written several ways, each written one way: the alef with hamza or madda as alef,
#: the alef maqsura as ya, the ta marbuta as ha (Lucene's normaliser), and the hamza on a ya or
#: a waw as that letter (as Snowball's stemmer did: مسؤول and مسئول are often written alike).
_ONE_WAY = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ى": "ي", "ة": "ه", "ئ": "ي", "ؤ": "و"})
#: Prefixes, the first that fits taken off: the article alone or fused to و, ب, ك, ف; لل (ل
#: with the article); the conjunction و.
PREFIXES = ("ال", "وال", "بال", "كال", "فال", "لل", "و")
#: Suffixes, each that fits taken off in this order: dual and plural endings, pronouns, the
#: feminine and adjectival endings.
SUFFIXES = ("ها", "ان", "ات", "ون", "ين", "يه", "ه", "ي")


def stem(word: str) -> str:
    """The term of one Arabic word: written one way, then its prefix and suffixes taken off
    where at least two letters remain (three before the conjunction و is taken: وعد stays)."""
    word = word.translate(_ONE_WAY)
    for prefix in PREFIXES:
        least = 4 if len(prefix) == 1 else len(prefix) + 2
        if len(word) >= least and word.startswith(prefix):
            word = word[len(prefix) :]
            break
    for suffix in SUFFIXES:
        if len(word) >= len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
    return word


__all__ = ["PREFIXES", "SUFFIXES", "stem"]
