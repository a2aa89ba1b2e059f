"""The words of stored text and of queries as the keyword index counts them: FTS5's
``porter unicode61 remove_diacritics 2`` tokenizer, rebuilt in Python.

Words are split on anything but letters and digits, accents removed, lower-cased and
Porter-stemmed (words under 3 characters unstemmed). The stemmer is Snowball's Porter
(PyStemmer), which stems a few words otherwise than FTS5's copy ("ecology": "ecologi", not
"ecolog"). Stop words count in a document's length but are not indexed.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable
from typing import Any

import Stemmer

from recallery.store.text import MAX_TERMS, STOP_WORDS

#: Word lengths FTS5's porter tokenizer stems (others pass unchanged).
STEM_MIN, STEM_MAX = 3, 64
_TOKEN = re.compile(r"[^\W_]+")
_stemmer_lock = threading.Lock()
_stemmer: Any = Stemmer.Stemmer("porter")


def words_of(text: str) -> list[str]:
    """Letters-and-digits runs of ``text``, lower-cased, accents removed."""
    if not text.isascii():
        decomposed = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _TOKEN.findall(text.lower())


def stem_map(words: Iterable[str]) -> dict[str, str]:
    """Each distinct word of ``words`` to its Porter stem. Like FTS5's porter tokenizer, words
    of fewer than 3 or more than 64 characters stay as they are ("us" is not "u")."""
    distinct = list(set(words))
    stemmed = [w for w in distinct if STEM_MIN <= len(w) <= STEM_MAX]
    with _stemmer_lock:  # a Stemmer object is not safe to share between threads
        stems: list[str] = _stemmer.stemWords(stemmed)
    return dict(zip(distinct, distinct, strict=True)) | dict(zip(stemmed, stems, strict=True))


def indexed(text: str) -> tuple[list[str], int]:
    """The words of ``text`` worth indexing (no stop words), and its length (every word)."""
    words = words_of(text)
    return [w for w in words if w not in STOP_WORDS], len(words)


def query_terms(text: str) -> list[str]:
    """The stems a query matches: its distinct non-stop words, at most :data:`MAX_TERMS`."""
    distinct = list(dict.fromkeys(indexed(text)[0]))[:MAX_TERMS]
    stem = stem_map(distinct)
    return [stem[w] for w in distinct]
