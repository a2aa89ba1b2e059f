"""The store's files, as a port: what a backup and a restore ask of a backend that keeps its
data in local files (the embedded SQLite store), without naming the backend.

:mod:`recallery.services.backup` holds the procedure (the manifest, the erasure ledgers,
erasing a copy again before it goes in place); a backend supplies the file work below it:
an online copy of the live store with the facts a manifest records, and a staged copy of a
backup that can be opened as a store, sealed, checked and put in place in one step.
:func:`recallery.store.store_files` picks the backend, as :func:`~recallery.store.open_store`
does; a store that lives in a server (PostgreSQL) has no files here (``pg_dump``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from recallery.store.base import Store


@dataclass(frozen=True)
class CopyFacts:
    """What a copy holds, for its manifest: the schema version, rows per table, its size in
    bytes and its sha256."""

    schema_version: int
    counts: Mapping[str, int]
    bytes: int
    sha256: str


class Staged(ABC):
    """A backup's copy staged beside the store it is to replace, checked against its digest.
    The store stays as it was until :meth:`swap_in`."""

    @abstractmethod
    def open(self) -> Store:
        """The staged copy as a store, to change (erase again) before it goes in place; the
        caller closes it."""

    @abstractmethod
    def seal(self) -> str:
        """Make the staged copy one self-contained, durable file; its integrity check's
        answer (``ok`` when sound, which :meth:`swap_in` needs)."""

    @abstractmethod
    def count_present(self, erased: Sequence[tuple[str, Sequence[int]]]) -> int:
        """How many of ``erased`` (a memory and its message ids; no ids: the whole memory)
        the staged copy still holds."""

    @abstractmethod
    def swap_in(self) -> None:
        """Put the sealed copy in place of the store, in one step."""


class StoreFiles(ABC):
    """A backend's file work for backup and restore."""

    #: The backend's name, as a backup's manifest records it.
    backend: str
    #: The newest schema this backend knows; a copy from a newer one is refused.
    latest_schema: int

    @abstractmethod
    def take_copy(self, dest: Path) -> CopyFacts:
        """An online copy of the live store (it keeps serving) into the new file ``dest``,
        owner-only; a copy that fails its integrity check is a ``Conflict``."""

    @abstractmethod
    def digest(self, path: Path) -> str:
        """The sha256 of the file at ``path``, as :class:`CopyFacts` has it."""

    @abstractmethod
    def private_file(self, path: Path) -> None:
        """Create the empty file ``path`` readable by its owner only (0600)."""

    @abstractmethod
    def restoring(
        self, copy: Path, digest: str, *, replace: bool
    ) -> AbstractContextManager[Staged]:
        """Stage ``copy`` (checked against ``digest``) beside the store while no process has
        the store open (a ``Conflict`` otherwise, and when a store exists and not
        ``replace``). Leaving the block removes the staging file and lets the store go."""


__all__ = ["CopyFacts", "Staged", "StoreFiles"]
