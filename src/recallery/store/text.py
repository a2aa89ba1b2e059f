"""Text handling shared by the keyword legs of every backend."""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"\w+", re.UNICODE)

#: Words too common to help a keyword match (a small English list, as BM25 baselines use).
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only
    or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you
    your yours yourself yourselves s t don did didn doesn isn wasn weren won wouldn
    shouldn couldn ll re ve d m o y
    """.split()  # noqa: SIM905
)

MAX_TERMS = 64


def normalise(text: str) -> str:
    """Lower-case, fold full-width forms (NFKC) and drop accents' separate marks."""
    return unicodedata.normalize("NFKC", text).lower()


def keyword_terms(text: str) -> list[str]:
    """The distinct words of a query worth matching, in order, at most :data:`MAX_TERMS`."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(normalise(text)):
        if word not in STOP_WORDS and word not in seen:
            seen[word] = None
    return list(seen)[:MAX_TERMS]
