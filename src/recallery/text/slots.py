"""Slots of a user's own statements: what a turn says about its speaker, below the sentence.

A person restates a fact in other words when it changes ("I live in the Plateau, Montreal",
later "we're moving into our new flat in the Annex, Toronto"; "我住在成都", later "我搬到了上海").
Neither words nor vectors tie the two turns together, but both fill one slot (where the speaker
lives) with a value. :func:`slots` reads the slots a turn's user input fills, with a small set of
first-person patterns per language (:mod:`recallery.text.slot_tables`: where one lives, works,
one's name, age, favourite things, allergies, and in English birthdays, counts and what one
drives); two turns of one user that fill a slot with different values are a supersession: the
later one states the current value. Pure functions over text.

The turn's language is named once, by :func:`recallery.text.cues.language`, and only that
language's table is read: a Chinese turn quoting "I live in Berlin" fills the slots its Chinese
says, never one an English pattern matched by accident; a language without a table fills none.
One exception, within the Latin script: a sentence too short to name its language by stop
words ("J'habite à Lyon.", "Vivo en Madrid.") is read as English, so where English fills
nothing, the tables of the languages its words vote for as often as for English are read in
turn (:func:`~recallery.text.latin.latin_rivals`); an English sentence quoting "ich wohne
in Berlin" votes English first and stays English.
"""

from __future__ import annotations

import re

from recallery.text.analyzer import STEM_MIN, stemmer
from recallery.text.cues import language
from recallery.text.latin import LATIN_LANGUAGES, latin_rivals
from recallery.text.slot_base import Carried, SlotTable
from recallery.text.slot_tables import TABLES

#: Where a raw turn's user input ends.
_AGENT = "\nAgent Response:"
_USER = "User Input:"
_SENTENCE_END = re.compile(r"[.!?。！？؟।\n]")
_QUESTION = frozenset("?？؟")


def user_statement(content: str) -> str:
    """A raw turn's user input (the whole text when it has no agent response)."""
    own = content.split(_AGENT, 1)[0]
    return own.removeprefix(_USER).strip()


def slots(content: str) -> dict[str, str]:
    """The slots a turn's user input fills, each with its value (lower case, trimmed):
    ``{"home": "the annex"}`` for "We just moved to the Annex, Toronto!"."""
    return {slot: value for slot, (value, _) in _filled(content).items()}


def statements(content: str) -> dict[str, str]:
    """The statement that fills each slot of a turn's user input, as written: ``{"home":
    "I live in Lisbon and I work as a UX designer", "work": "I work as a UX designer"}`` for
    a turn of two facts (what a question about one of them has in common with it)."""
    return {slot: said for slot, (_, said) in _filled(content).items()}


def _filled(content: str) -> dict[str, tuple[str, str]]:
    """Each slot's value and the words that state it, by the table of the turn's language
    (or of the first Latin language it may be written in whose table fills any)."""
    text = user_statement(content)
    lang = language(text)
    # a Latin language without a table of its own is read by English's, as it was before
    # the analyzer told it apart
    table = TABLES.get(lang) or (TABLES["en"] if lang in LATIN_LANGUAGES else None)
    found = _filled_by(table, text) if table is not None else {}
    if found or lang not in LATIN_LANGUAGES:
        return found
    for rival in latin_rivals(text):  # the votes are counted only where the table found none
        if rival != lang and rival in TABLES and (found := _filled_by(TABLES[rival], text)):
            return found
    return {}


def _filled_by(table: SlotTable, text: str) -> dict[str, tuple[str, str]]:
    found: dict[str, tuple[str, str]] = {}
    for slot, pattern in table.patterns:
        if slot in found:
            continue
        match = pattern.search(text)
        if match is None:
            continue
        if "{}" in slot:
            slot = slot.format(match.group("name").lower())
        value = _trimmed(table, match.group("value").lower())
        if table.asks is not None and _asked(table.asks, text, match, value):
            continue
        if table.carried is not None and _someone_elses(table.carried, text, match.start()):
            continue
        if value and slot not in found:
            found[slot] = (value, match.group(0))
    return found


def _asked(asks: re.Pattern[str], text: str, match: re.Match[str], value: str) -> bool:
    """Whether a statement is a question: its value holds a question word, or its sentence
    ends in a question mark."""
    end = _SENTENCE_END.search(text, match.start())
    return asks.search(value) is not None or (end is not None and end.group() in _QUESTION)


def _someone_elses(carried: Carried, text: str, at: int) -> bool:
    """Whether the clause at ``at`` goes on with another person's subject: it names none,
    and walking back through the clauses joined to it in its sentence, the nearest that
    names one names someone else."""
    *before, joined = carried.join.split(_SENTENCE_END.split(text[:at])[-1])
    if not before or joined.strip():  # not a clause joined to one before it
        return False
    for clause in [text[at:], *reversed(before)]:
        if carried.mine.match(clause):
            return False
        if carried.theirs.match(clause):
            return True
    return False


def _trimmed(table: SlotTable, value: str) -> str:
    """``value`` cut before its first conjunction, without filler words, stemmed where the
    language inflects its nouns."""
    if table.until is not None and (end := table.until.search(value)) is not None:
        value = value[: end.start()]
    if table.stem:
        value = value.replace("ё", "е")
    words = table.filler.sub(" ", value).split()
    if table.stem and words:
        snowball = stemmer(table.stem)
        words = [snowball.stemWord(w) if len(w) >= STEM_MIN else w for w in words]
    return " ".join(words)


def superseded(earlier: dict[str, str], later: dict[str, str]) -> bool:
    """Whether a turn filling ``later`` restates a slot of one filling ``earlier`` with a
    new value."""
    return any(slot in earlier and earlier[slot] != value for slot, value in later.items())


__all__ = ["slots", "statements", "superseded", "user_statement"]
