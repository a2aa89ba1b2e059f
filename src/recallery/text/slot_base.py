"""What a language's slot patterns are made of: a table of patterns with how its values are
trimmed, and how a joined clause finds its subject. Declared once here for the tables of
:mod:`recallery.text.slot_tables` and :mod:`recallery.text.slot_tables_asia`, which
:mod:`recallery.text.slots` reads."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SlotTable:
    """A language's patterns: ``(slot, pattern)``, the value in the group ``value`` and
    ``{}`` in a slot name filled by the group ``name``; a value is cut before the first match
    of ``until``, loses each match of ``filler``, and is stemmed by the Snowball stemmer
    ``stem`` ("" for none). Where ``asks`` is given (every language but English), a value
    holding one of its question words, or a statement in a sentence that ends in a question
    mark, is no statement ("我现在住在哪里？" fills no slot)."""

    patterns: tuple[tuple[str, re.Pattern[str]], ...]
    filler: re.Pattern[str]
    until: re.Pattern[str] | None = None
    stem: str = ""
    asks: re.Pattern[str] | None = None
    carried: Carried | None = None
    """Where a clause goes on after a joined one with that clause's subject (Japanese て、,
    Korean -고), how to tell whose it is."""


@dataclass(frozen=True, slots=True)
class Carried:
    """A language whose clauses joined by ``join`` share the first one's subject: a clause
    that names none goes on with the nearest one before it that does, so "姉は大阪に住んでいて、
    銀行で働いています" is the sister's job, not the speaker's. ``mine``: a clause that opens
    with the speaker; ``theirs``: one that opens with someone else."""

    join: re.Pattern[str]
    mine: re.Pattern[str]
    theirs: re.Pattern[str]


def table(
    patterns: tuple[tuple[str, str], ...],
    filler: str,
    until: str,
    asks: str,
    stem: str = "",
    words: bool = True,
    carried: Carried | None = None,
) -> SlotTable:
    """Compiled case-blind; ``words``: filler and ``until`` are whole words (alphabetic
    scripts), else found anywhere (Chinese, Japanese)."""
    edge = (r"(?<!\w)(?:", r")(?!\w)") if words else ("(?:", ")")
    return SlotTable(
        tuple((slot, re.compile(p, re.IGNORECASE)) for slot, p in patterns),
        re.compile(edge[0] + filler + edge[1]),
        re.compile(edge[0] + until + edge[1]),
        stem,
        re.compile(edge[0] + asks + edge[1]),
        carried,
    )


__all__ = ["Carried", "SlotTable", "table"]
