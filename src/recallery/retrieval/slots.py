"""Slots of a user's own statements: what a turn says about its speaker, below the sentence.

A person restates a fact in other words when it changes ("I live in the Plateau, Montreal",
later "we're moving into our new flat in the Annex, Toronto"). Neither words nor vectors
tie the two turns together, but both fill one slot (where the speaker lives) with a value.
:func:`slots` reads the slots a turn's user input fills, with a small set of first-person
patterns (where one lives, works, what one's favourite things, name, birthday and counts
are, what one drives); two turns of one user that fill a slot with different values are a
supersession: the later one states the current value. Pure functions over text.

The patterns are English and run behind the language gate of :mod:`recallery.text.cues`: a turn
whose user input is in another language (a Chinese or Russian turn quoting an English phrase, a
German one) fills no slot, rather than one an English pattern matched by accident.
"""

from __future__ import annotations

import re

from recallery.text.cues import language

#: Where a raw turn's user input ends.
_AGENT = "\nAgent Response:"
_USER = "User Input:"
#: A value runs to the end of its clause.
_VALUE = r"(?P<value>[^.!?;,\n]{2,60})"
_I = r"\b(?:i|we)(?:'ve|'m| have| am| are|'re)?(?: just| finally| recently| now| officially)?"
#: (slot, pattern): the value is the group ``value``; ``{}`` in a slot name takes the group
#: ``name``.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (slot, re.compile(pattern, re.IGNORECASE))
    for slot, pattern in (
        ("home", _I + r" (?:live|living|lived|moved|moving|relocat\w*|settled|based) "
         r"(?:back )?(?:in|to|into)(?: (?:a|an|our|my) new \w+ in)? " + _VALUE),
        ("home", r"\b(?:my|our) new (?:flat|home|house|apartment|place) (?:is )?in " + _VALUE),
        ("work", _I + r" (?:work|working|started|starting|start) (?:as|at|for) " + _VALUE),
        ("work", r"\b(?:my|the) (?:new )?(?:job|role|position) (?:is )?(?:as|at) " + _VALUE),
        ("work", r"\b(?:start|started|starting|week|job) as an? " + _VALUE),
        ("work", r"\boffered me (?:the|a|an) " + _VALUE + r" (?:role|job|position)"),
        ("favourite {}", r"\bmy (?:favou?rite|fave) (?P<name>\w+) is (?:now )?" + _VALUE),
        ("favourite {}", r"\b(?P<value>\w[\w ]{1,30}) is (?:now )?my (?:new )?"
         r"(?:favou?rite|fave) (?P<name>\w+)"),
        ("name", r"\b(?:my name is|call me|i'm called|i am called) (?P<value>\w+)"),
        ("{} birthday", r"\b(?P<name>\w+)'s birthday is (?:on )?(?:the )?" + _VALUE),
        ("my birthday", r"\bmy birthday is (?:on )?(?:the )?" + _VALUE),
        ("drive", _I + r" (?:drive|driving|own|got) (?:a|an) (?:new )?" + _VALUE),
        ("have {}", _I + r" (?:have|got) "
         r"(?P<value>\d+|one|two|three|four|five|six|no) (?P<name>\w+)"),
        ("allergy", _I + r" allergic to " + _VALUE),
        ("my {}", r"\bmy (?P<name>best friend|partner|boyfriend|girlfriend|wife|husband|boss|"
         r"doctor|dog|cat) is (?:called |named )?" + _VALUE),
        ("age", r"\bi(?:'m| am| turned) (?P<value>\d{1,3})(?: years old)?\b"),
    )
)  # fmt: skip


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
    "I live in Lisbon and", "work": "I work as a UX designer"}`` for a turn of two facts
    (what a question about one of them has in common with it)."""
    return {slot: said for slot, (_, said) in _filled(content).items()}


def _filled(content: str) -> dict[str, tuple[str, str]]:
    """Each slot's value and the words that state it."""
    text = user_statement(content)
    found: dict[str, tuple[str, str]] = {}
    if language(text) != "en":
        return found
    for slot, pattern in _PATTERNS:
        if slot in found:
            continue
        match = pattern.search(text)
        if match is None:
            continue
        if "{}" in slot:
            slot = slot.format(match.group("name").lower())
        value = _trimmed(match.group("value").lower())
        if value and slot not in found:
            found[slot] = (value, match.group(0))
    return found


_FILLER = re.compile(r"\b(?:now|anymore|instead|too|as well|these days|from now on)\b")


def _trimmed(value: str) -> str:
    return " ".join(_FILLER.sub(" ", value).split())


def superseded(earlier: dict[str, str], later: dict[str, str]) -> bool:
    """Whether a turn filling ``later`` restates a slot of one filling ``earlier`` with a
    new value."""
    return any(slot in earlier and earlier[slot] != value for slot, value in later.items())


__all__ = ["slots", "statements", "superseded", "user_statement"]
