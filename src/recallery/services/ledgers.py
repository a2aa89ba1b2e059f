"""Erasing again what erasure ledgers record (:mod:`recallery.store.erasures`), after a
store came back from a copy taken before those erasures.

Two callers: ``recallery restore`` replays the ledgers on a SQLite backup staged beside the
store, before it replaces anything (:mod:`.backup`); ``recallery restore-erasures`` replays
them on the store as it is, after ``pg_restore`` put a PostgreSQL dump back. Ledgers are read
whole and checked first (:class:`~recallery.errors.InvalidInput` naming the file and line),
so a bad line stops the command before anything is changed. Replaying is idempotent: an
entry or memory already gone is skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from recallery.errors import InvalidInput
from recallery.models import AuditAction, Scope
from recallery.policies.eviction import delete_with_tombstones
from recallery.settings import Settings
from recallery.store import open_store
from recallery.store.base import Store
from recallery.store.erasures import Erasure, ErasureLedger

#: The actor and reason of the tombstones a replay leaves for what it erases again.
RESTORE_ACTOR = "restore"
RESTORE_REASON = "erased after this backup was taken (erasure ledger)"


@dataclass(frozen=True)
class Replayed:
    """What a replay erased again: entries, and whole memories deleted."""

    entries_erased: int
    memories_deleted: int
    #: The highest message id the ledgers name: new entries get ids above it.
    ids_reserved_through: int = 0
    ledgers: tuple[str, ...] = field(default=())
    #: Whether the store's files were clean of the erased rows when the command ended.
    scrubbed: bool = True


def read_ledgers(own: ErasureLedger, others: Sequence[Path]) -> tuple[list[Erasure], list[Erasure]]:
    """Every record of the store's own ledger and of ``others``, each file read whole and
    checked; and those of ``others`` that the own ledger lacks. A missing file among
    ``others`` is :class:`InvalidInput` too."""
    for other in others:
        if not Path(other).is_file():
            raise InvalidInput("erasures", f"erasures: no ledger at {other}")
    mine = own.check()
    known, added = set(mine), []
    for other in others:
        if Path(other).resolve() == own.path.resolve():
            continue
        for record in ErasureLedger(Path(other)).check():
            if record not in known:
                added.append(record)
                known.add(record)
    return mine + added, added


def replay(store: Store, records: Sequence[Erasure], now: datetime) -> Replayed:
    """Erase again, in one transaction, every entry and memory ``records`` name that
    ``store`` holds, with tombstones and audit events (actor ``restore``), and move its id
    counter past every id they name."""
    erased = deleted = 0
    through = max((max(r.message_ids, default=0) for r in records), default=0)
    with store.write() as w:
        for record in records:
            if record.whole_memory:
                if w.memory(record.memory_id) is not None:
                    w.delete_memory(record.memory_id)
                    deleted += 1
                continue
            present = w.get_entries(Scope.of(record.memory_id), record.message_ids)
            gone = delete_with_tombstones(
                w,
                record.memory_id,
                sorted(present),
                now,
                RESTORE_ACTOR,
                RESTORE_REASON,
                AuditAction.ENTRY_ERASE,
            )
            erased += len(gone)
        store.reserve_ids(w.conn, through)
    return Replayed(erased, deleted, through)


def restore_erasures(settings: Settings, now: datetime, ledgers: Sequence[Path] = ()) -> Replayed:
    """Replay the store's own ledger and ``ledgers`` on the store ``settings`` names, as it
    is now (``recallery restore-erasures``, after ``pg_restore``). The other ledgers' records
    join the store's own first, so a later restore there erases them too."""
    own = ErasureLedger(settings.erasure_ledger_path)
    records, added = read_ledgers(own, ledgers)
    store = open_store(settings)
    try:
        for record in added:  # ahead of the replay's commit, as every erasure is recorded
            own.append(record)
        store.erasures = None  # each record replayed is in the ledger already
        done = replay(store, records, now)
        scrubbed = store.scrub()
    finally:
        store.close()
    return Replayed(
        done.entries_erased,
        done.memories_deleted,
        done.ids_reserved_through,
        tuple(str(p) for p in ledgers),
        scrubbed,
    )


__all__ = [
    "RESTORE_ACTOR",
    "RESTORE_REASON",
    "Replayed",
    "read_ledgers",
    "replay",
    "restore_erasures",
]
