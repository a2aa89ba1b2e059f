"""What an import of a memory's JSONL export wrote (the format and its plan are
:mod:`recallery.wire.transfer`'s; the operation :mod:`recallery.services.transfer`'s)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ImportReport:
    """What an import wrote: new ids of the raw turns (by their id in the file, when given)."""

    memory_id: str
    imported: int
    id_map: dict[int, int] = field(default_factory=dict)
    skipped_extracted: int = 0
    already_stored: int = 0
    disabled: int = 0
    forgotten: int = 0


__all__ = ["ImportReport"]
