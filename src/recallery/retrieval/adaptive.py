"""Context that adapts to the turn: how much of its conversation context a turn takes.

Conversation context (neighbours' scores, windows' keywords) finds the short reply that
answers in context ("Yes! Last week, and it poured"), whose subject the turn before it names.
A long turn says what it is about itself: lent its neighbours' match, an on-topic chat
turn or a long assistant reply outranks the turn that holds the fact. So a turn takes its
full context up to ``full`` characters and ``(full / length)²`` of it beyond: a turn twice
that long a quarter. The square, not the plain ratio: on turns of 670-840 characters the plain
ratio still left the updated turn's R@10 below the naive hybrid's (benchmarks/README.md,
current first). Pure functions.
"""

from __future__ import annotations

from collections.abc import Mapping


def context_shares(lengths: Mapping[int, int], full: int) -> dict[int, float]:
    """The share of its conversation context each turn takes: 1 up to ``full`` characters,
    ``(full / length)²`` beyond (``full`` 0: every turn takes all of it)."""
    if full <= 0:
        return {}
    return {i: 1.0 if n <= full else (full / n) ** 2 for i, n in lengths.items()}


__all__ = ["context_shares"]
