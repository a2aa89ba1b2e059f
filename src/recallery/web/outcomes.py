"""What became of what a turn said, for its row on the Messages page: each fact its extraction
added (still current, later replaced, erased or evicted since), each entry it repeated and
each it superseded, and the facts it left out because a reviewer had rejected them. Derived
from a page the engine already read (the job's result, the turn's extracted and retired
entries, the tombstones), so the rows cost no reads of their own. The Facts page counts the
same outcomes over the facts its filters select (:func:`of_facts`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from recallery.models import Entry, Job, Tombstone
from recallery.requests import MessagePage, job_entry_ids
from recallery.requests.curation import FactCounts

#: How each kind of outcome is counted in the turn's summary line, in this order.
WORDS = {
    "extracted": "extracted",
    "repeated": "repeated",
    "superseded": "superseded",
    "replaced": "replaced since",
    "erased": "erased since",
    "evicted": "evicted since",
    "suppressed": "left out (rejected before)",
}


@dataclass(frozen=True)
class Outcome:
    """One thing a turn's extraction did: ``kind`` (a key of :data:`WORDS`), the entry it is
    about, and the entry that replaced it or the tombstone that is left of it."""

    kind: str
    entry_id: int | None = None
    by: int | None = None
    gone: Tombstone | None = None
    count: int = 1


@dataclass(frozen=True)
class TurnOutcomes:
    """A turn's outcomes, and their counts by kind (the summary line)."""

    items: tuple[Outcome, ...]

    @property
    def counts(self) -> dict[str, int]:
        counted: Counter[str] = Counter()
        for o in self.items:
            counted[o.kind] += o.count
        return {k: counted[k] for k in WORDS if counted[k]}

    def summary(self) -> str:
        """``2 extracted · 1 repeated``; ``nothing extracted`` when it did nothing."""
        return " · ".join(f"{n} {WORDS[k]}" for k, n in self.counts.items()) or (
            "nothing extracted"
        )


def of_turn(
    job: Job | None,
    current: Iterable[Entry],
    retired: Iterable[Entry],
    gone: Mapping[int, Tombstone],
) -> TurnOutcomes:
    """The outcomes of a turn's extraction ``job``, given the entries extracted from
    the turn that are current and retired, and the tombstones of erased ones."""
    now = {e.message_id: e for e in current}
    old = {e.message_id: e for e in retired}
    named = job_entry_ids(job)
    added = list(named.get("added", ()))
    added += [i for i in sorted({*now, *old}) if i not in added]  # written by other paths too
    out = [_added(i, now, old, gone) for i in added]
    out += [Outcome("repeated", i, gone=gone.get(i)) for i in named.get("deduped", ())]
    out += [Outcome("superseded", i, gone=gone.get(i)) for i in named.get("superseded", ())]
    suppressed = _count((job.result or {}).get("counts", {}), "suppressed") if job else 0
    if suppressed:
        out.append(Outcome("suppressed", count=suppressed))
    return TurnOutcomes(tuple(out))


def _added(
    i: int, now: Mapping[int, Entry], old: Mapping[int, Entry], gone: Mapping[int, Tombstone]
) -> Outcome:
    if i in now:
        return Outcome("extracted", i)
    if i in old:
        return Outcome("replaced", i, by=old[i].superseded_by)
    stone = gone.get(i)
    if stone is not None and stone.actor.startswith("policy:"):
        return Outcome("evicted", i, gone=stone)
    return Outcome("erased", i, gone=stone)


def _count(counts: object, key: str) -> int:
    value = counts.get(key, 0) if isinstance(counts, Mapping) else 0
    return value if isinstance(value, int) else 0


def of_page(found: MessagePage) -> dict[int, TurnOutcomes]:
    """Every turn's outcomes on a Messages page, by turn id."""
    return {
        t.message_id: of_turn(
            found.jobs.get(t.message_id),
            found.extracted.get(t.message_id, ()),
            found.replaced.get(t.message_id, ()),
            found.gone,
        )
        for t in found.items
    }


#: The Facts page's counts, in this order: each one's words and what it counts (its title).
FACT_WORDS = {
    "current": ("current", "facts held now: the rows of this table"),
    "repeated": (
        "repeated",
        "times a turn said a fact again: no new row, the turn joined the fact's evidence",
    ),
    "replaced": (
        "replaced since",
        "versions a later fact, a correction or a merge replaced; each stays in its history",
    ),
    "erased": (
        "erased since",
        "facts erased since: only their tombstones remain (counted when no filter but "
        "the type is given, since a tombstone keeps no user, trust or text)",
    ),
    "evicted": ("evicted since", "facts evicted since because the memory was full"),
}


def of_facts(counts: FactCounts) -> list[tuple[str, int, str, str]]:
    """The Facts page's counts line as ``(kind, count, words, meaning)``: how many facts are
    current, and each other outcome that happened to them (erased and evicted only where
    the filters let them be counted)."""
    return [
        (kind, n, words, means)
        for kind, (words, means) in FACT_WORDS.items()
        if (n := getattr(counts, kind)) or kind == "current"
    ]
