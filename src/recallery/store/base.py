"""The storage port: :class:`Store`, a backend's primitives with the sessions over them.

A backend subclasses :class:`Store` and supplies the primitives of :class:`~.backend.Backend`
(connections, row locking, keyword and vector candidate search, vector encoding, its
migrations). Everything else is derived once: the queries are written in portable SQL with
``?`` placeholders (:mod:`.reader`, :mod:`.writer`), so every backend runs the same statements.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from contextvars import copy_context
from typing import TypeVar

from recallery.store.backend import Backend
from recallery.store.reader import Reader
from recallery.store.writer import Writer

T = TypeVar("T")
#: Threads that run work beside a read (:meth:`Store.beside`); they only ever wait on a database.
_BESIDE = ThreadPoolExecutor(max_workers=8, thread_name_prefix="recallery-beside")


class Store(Backend):
    """A storage backend. Subclasses implement the primitives of :class:`Backend`; reads and
    writes run through the sessions opened here."""

    @contextmanager
    def read(self) -> Iterator[Reader]:
        with self._read_conn() as conn:
            yield Reader(self, conn)

    @contextmanager
    def beside(self, r: Reader, work: Callable[[Reader], T]) -> Iterator[Callable[[], T]]:
        """``work`` over ``r``'s snapshot while the caller goes on: on a second connection
        and thread where the backend shares snapshots (:meth:`Backend.alongside`), else at
        once in the caller. The block's value returns the result; leaving it waits for it."""
        with self.alongside(r.conn) as conn:
            if conn is None:
                value = work(r)
                yield lambda: value
                return
            # in the caller's context (a trace's current span, say: api/tracing.py)
            pending = _BESIDE.submit(copy_context().run, work, Reader(self, conn))
            try:
                yield pending.result
            finally:
                wait([pending])  # the second transaction ends only after its work

    @contextmanager
    def write(self) -> Iterator[Writer]:
        """One write transaction; it commits when the block ends without an error."""
        with self._write_conn() as conn:
            yield Writer(self, conn)
