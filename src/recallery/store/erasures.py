"""The erasure ledger: every erasure the store makes, as ids only, in a file outside the
database (beside it, for SQLite), so that a restore of an older copy can erase again what
was erased after that copy was taken: ``recallery restore`` of a SQLite backup
(:mod:`recallery.services.backup`), ``recallery restore-erasures`` after ``pg_restore`` of
a PostgreSQL dump (:mod:`recallery.services.ledgers`).

One JSON line per erasure, appended and synced to disk *before* the transaction that
deletes the rows commits: a crash between the two leaves an erasure in the ledger whose
rows are still there, and a restore then erases them too, which is what was asked for. The
other order could lose an erasure. A line holds no content: when, which memory, which
message ids (the whole cascade: versions and extracted entries) or that the whole memory
was deleted. Eviction is not recorded: it makes room, it is not a request to forget.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from recallery.errors import InvalidInput

#: The ledger's file name in the data directory.
LEDGER_NAME = "erasures.jsonl"


@dataclass(frozen=True)
class Erasure:
    """One recorded erasure: ``message_ids`` of ``memory_id``, or the whole memory."""

    at: float
    memory_id: str
    message_ids: tuple[int, ...] = ()
    whole_memory: bool = False


class ErasureLedger:
    """An append-only JSON-lines file of :class:`Erasure` records. Appends from several
    processes interleave whole lines (one ``O_APPEND`` write each)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def record(self, at: datetime, memory_id: str, message_ids: Sequence[int]) -> None:
        """Record that ``message_ids`` of ``memory_id`` are being erased."""
        if message_ids:
            self.append(Erasure(at.timestamp(), memory_id, tuple(sorted(message_ids))))

    def record_memory(self, at: datetime, memory_id: str) -> None:
        """Record that the memory ``memory_id`` and everything in it is being deleted."""
        self.append(Erasure(at.timestamp(), memory_id, whole_memory=True))

    def append(self, erasure: Erasure) -> None:
        record: dict[str, object] = {"at": erasure.at, "memory": erasure.memory_id}
        if erasure.whole_memory:
            record["whole"] = True
        else:
            record["ids"] = list(erasure.message_ids)
        line = (json.dumps(record, separators=(",", ":")) + "\n").encode()
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def read(self) -> Iterator[Erasure]:
        """Every record, oldest first; none when the file does not exist. A last line cut
        short by a crash is skipped (its transaction never committed); any other line that
        is not a record is :class:`InvalidInput` naming the file and the line."""
        if not self.path.exists():
            return
        with self.path.open(encoding="utf-8", errors="replace") as lines:
            for number, line in enumerate(lines, 1):
                if not line.endswith("\n"):
                    return
                yield _parsed(self.path, number, line)

    def check(self) -> list[Erasure]:
        """Every record, read whole: a bad line fails before anything is done with them."""
        return list(self.read())


def _parsed(path: Path, number: int, line: str) -> Erasure:
    """The record on line ``number`` of ``path``, checked field by field."""
    try:
        raw = json.loads(line)
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        at, memory, ids, whole = raw["at"], raw["memory"], raw.get("ids", []), raw.get("whole")
        if not isinstance(at, int | float) or isinstance(at, bool):
            raise ValueError("'at' is not a time")
        if not isinstance(memory, str) or not memory:
            raise ValueError("'memory' is not a memory id")
        if not isinstance(ids, list) or not all(_is_id(i) for i in ids):
            raise ValueError("'ids' is not a list of message ids")
        if whole not in (None, True) or (whole is None) == (not ids):
            raise ValueError("a record names either message ids or a whole memory")
    except (ValueError, KeyError) as exc:
        why = f"no {exc} field" if isinstance(exc, KeyError) else str(exc)
        raise InvalidInput(
            "erasures", f"erasures: {path} line {number} is not an erasure record: {why}"
        ) from None
    return Erasure(float(at), memory, tuple(ids), whole_memory=whole is True)


def _is_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


__all__ = ["LEDGER_NAME", "Erasure", "ErasureLedger"]
