"""The storage port: :class:`Store`, a backend's primitives with the sessions over them.

A backend subclasses :class:`Store` and supplies the primitives of :class:`~.backend.Backend`
(connections, row locking, keyword and vector candidate search, vector encoding, its
migrations). Everything else is derived once: the queries are written in portable SQL with
``?`` placeholders (:mod:`.reader`, :mod:`.writer`), so every backend runs the same statements.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from memstrata.store.backend import Backend
from memstrata.store.reader import Reader
from memstrata.store.writer import Writer


class Store(Backend):
    """A storage backend. Subclasses implement the primitives of :class:`Backend`; reads and
    writes run through the sessions opened here."""

    @contextmanager
    def read(self) -> Iterator[Reader]:
        with self._read_conn() as conn:
            yield Reader(self, conn)

    @contextmanager
    def write(self) -> Iterator[Writer]:
        """One write transaction; it commits when the block ends without an error."""
        with self._write_conn() as conn:
            yield Writer(self, conn)
