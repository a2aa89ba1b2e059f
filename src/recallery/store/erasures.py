"""The erasure ledger: every erasure the store makes, as ids only, in a file beside the
database and outside it, so that a restore of an older backup can erase again what was
erased after that backup was taken (``recallery restore``, :mod:`recallery.services.backup`).

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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def read(self) -> Iterator[Erasure]:
        """Every record, oldest first; none when the file does not exist. A last line cut
        short by a crash is skipped (its transaction never committed)."""
        if not self.path.exists():
            return
        with self.path.open(encoding="utf-8") as lines:
            for line in lines:
                if not line.endswith("\n"):
                    return
                raw = json.loads(line)
                yield Erasure(
                    at=float(raw["at"]),
                    memory_id=str(raw["memory"]),
                    message_ids=tuple(int(i) for i in raw.get("ids", ())),
                    whole_memory=bool(raw.get("whole", False)),
                )


__all__ = ["LEDGER_NAME", "Erasure", "ErasureLedger"]
