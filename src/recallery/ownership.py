"""Whose fact: the rule that keeps end users apart inside a shared memory (design invariant 7),
declared once and applied by every path that compares, links or cascades.

A memory is often shared by many end users (a support agent writes every customer's turns into
one memory). A fact is compared, deduplicated, superseded, merged, corrected, reinstated and
marked stale only against entries of the **same person**: the same ``user_id`` within the same
memory. Entries without a ``user_id`` form one group of their own ("nobody in particular"),
never mixed with a named user's.

What was extracted from a person's turn is theirs, whatever user it is labelled with (the words
were theirs): erasing the person erases it, and a statement derived from a turn is refused
another user. Version links are the ones that must never join two people.

Agents and sessions do not split a person: one user seen by two agents, or across sessions, is
one person with one history, so ``agent_id`` and ``session_id`` play no part here.

The paths that obey it: extraction's neighbour search and its write-time re-check
(:mod:`recallery.extraction.neighbours`, :mod:`recallery.extraction.apply`), statements written by
agents and imports (the same procedure), raw-turn supersession (its slots are keyed by user),
the change-set procedure of forget, erase, bulk changes and data-subject requests
(:mod:`recallery.services.changes`), reinstate, and the store itself, which refuses to write a
version link between two people (:meth:`recallery.store.writer.Writer.update_entries`).
A pure rule over plain data, so it lives in the kernel, where the store and every domain room
may read it (issue 56; it was ``recallery.policies.people``).
"""

from __future__ import annotations

from typing import Protocol

from recallery.errors import Conflict


class Owned(Protocol):
    """Anything that belongs to a person of a memory (an entry, a tombstone, a candidate's
    provenance)."""

    @property
    def memory_id(self) -> str: ...

    @property
    def user_id(self) -> str: ...


Person = tuple[str, str]
"""A person of a memory: its memory id and its end user ("" for nobody)."""


def person(entry: Owned) -> Person:
    """The group an entry belongs to: its memory and its end user ("" for nobody)."""
    return person_of(entry.memory_id, entry.user_id)


def person_of(memory_id: str, user_id: str | None) -> Person:
    """:func:`person` from the two columns (a search's gathered rows hold no entries)."""
    return memory_id, user_id or ""


def same_person(a: Owned, b: Owned) -> bool:
    return person(a) == person(b)


def named(user_id: str) -> str:
    """How errors and receipts name a user (the unnamed group too)."""
    return f"user '{user_id}'" if user_id else "no user"


def check_link(older: Owned, newer: Owned, what: str = "link") -> None:
    """Refuse a version link (supersession, correction, merge, reinstate) between two
    people's entries, naming both."""
    if not same_person(older, newer):
        raise Conflict(
            f"Cannot {what} entries of two people: one belongs to {named(older.user_id)}, "
            f"the other to {named(newer.user_id)}"
            + (" in another memory" if older.memory_id != newer.memory_id else "")
            + "; facts are only compared and linked within one person."
        )


__all__ = ["Owned", "check_link", "named", "person", "same_person"]
