"""Which writing systems a local embedder reads, and the warning when text is written in
another.

all-MiniLM-L6-v2 was trained on English: most Chinese characters become its unknown token,
and Korean, Russian or Arabic text lands near every other such text, so a question finds
nothing or anything. Nothing fails, which is why a write says so: a memory whose embedder
reads Latin script only, given text mostly in another script, answers with a warning that
names the script and the model to choose instead.

A model's name often says what it reads (``bge-small-en``, ``bge-large-zh``, ``bge-m3``,
``paraphrase-multilingual-...``): :func:`declared_reading` reads that, so an ``@Builtin`` id
naming a Chinese or multilingual model gets the local multilingual model, and one naming an
English model the English one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from recallery.text.scripts import Script, is_mark, runs

__all__ = [
    "ENGLISH",
    "MULTILINGUAL",
    "SCRIPT_NAMES",
    "declared_reading",
    "foreign_scripts",
    "unread_warning",
]

#: A script's name in a warning. Han and kana share one run kind (the analyzer bigrams both).
SCRIPT_NAMES = {
    Script.CJK: "Chinese or Japanese",
    Script.HANGUL: "Korean (Hangul)",
    Script.UNSPACED: "Thai, Lao, Khmer or Myanmar",
    Script.DEVANAGARI: "Devanagari",
    Script.CYRILLIC: "Cyrillic",
    Script.GREEK: "Greek",
    Script.ARABIC: "Arabic",
    Script.OTHER: "non-Latin",
}
#: A text is written in other scripts when at least this share of its letters is in them
#: (a Chinese name inside an English sentence is not; a Chinese sentence after the English
#: ``User Input:`` label is).
FOREIGN_SHARE = 0.2
#: ...and at least this many letters are.
FOREIGN_LETTERS = 2


ENGLISH = "english"
MULTILINGUAL = "multilingual"
#: Words of a model's name (split at anything not a letter or digit) that say it reads more
#: than English: a language code, a language, "multilingual", and multilingual families
#: (bge-m3, m3e, LaBSE, XLM-R).
MULTILINGUAL_WORDS = frozenset(
    {
        *("multilingual", "m3", "m3e", "labse", "xlm", "chinese", "cn"),
        *("zh", "ja", "ko", "de", "fr", "es", "it", "pt", "nl", "ru", "ar", "hi", "vi"),
    }
)
#: Words of a model's name that say it reads English only.
ENGLISH_WORDS = frozenset({"en", "english", "minilm", "mpnet"})


def declared_reading(name: str) -> str | None:
    """What a model's name says it reads: :data:`MULTILINGUAL` (``bge-m3``,
    ``bge-large-zh-v1.5``, ``paraphrase-multilingual-MiniLM-L12-v2``), :data:`ENGLISH`
    (``bge-small-en-v1.5``, ``all-MiniLM-L6-v2``), or ``None`` when it does not say."""
    words = set(re.split(r"[^0-9a-z]+", name.lower()))
    if words & MULTILINGUAL_WORDS:
        return MULTILINGUAL
    if words & ENGLISH_WORDS:
        return ENGLISH
    return None


def foreign_scripts(texts: Iterable[str]) -> list[str]:
    """Names of the non-Latin scripts ``texts`` are mostly written in, most letters first;
    empty when every text is mostly Latin (English, German, Vietnamese...)."""
    found: Counter[Script] = Counter()
    for text in texts:
        letters: Counter[Script] = Counter()
        for script, run in runs(text):
            letters[script] += sum(_written(ch) for ch in run)
        other = sum(n for s, n in letters.items() if s is not Script.LATIN)
        total = other + letters[Script.LATIN]
        if other >= FOREIGN_LETTERS and other >= FOREIGN_SHARE * total:
            found.update({s: n for s, n in letters.items() if s is not Script.LATIN})
    return [SCRIPT_NAMES[s] for s, n in found.most_common() if n]


def _written(ch: str) -> bool:
    """Whether ``ch`` is a letter or a vowel sign: Devanagari and Thai write most vowels as
    marks (मैं is one letter and two marks), which counting letters alone undercounts."""
    return ch.isalpha() or is_mark(ch)


def unread_warning(embd_id: str, model: str, scripts: list[str], instead: str | None) -> str:
    """The warning for text in ``scripts`` written to a memory embedded by ``model``."""
    choose = (
        f"create the memory with embd_id '{instead}', which reads about a hundred languages"
        if instead
        else "point embd_id at a multilingual model (any OpenAI-compatible endpoint)"
    )
    return (
        f"embd_id: '{embd_id}' is the local {model}, which reads English only; text in "
        f"{', '.join(scripts)} script is stored but a search by meaning will rarely find it "
        f"(keyword search still does); {choose}."
    )
