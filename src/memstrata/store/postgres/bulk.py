"""A bulk write's keyword documents, tokenised on a second connection a chunk ahead of the COPY.

A bulk load runs in one server backend, on one core: its rows' index upkeep, and the
tokenising of their text (``memstrata_fts_doc`` and ``memstrata_fts_len``, about a quarter of
the backend's time a row). So while the writing connection copies one chunk of rows, a pooled
connection computes the next chunk's documents with the same functions, on the other core,
and the COPY brings them along; the row trigger keeps a document an insert brings
(migration 14) and tokenises every other. The values are the server's own, not a copy of its
tokeniser, so they are the ones the trigger would compute. Only a connection free at once is
taken: without one the server tokenises as before.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress

import psycopg
from psycopg.adapt import Dumper
from psycopg.postgres import types
from psycopg.pq import Format
from psycopg_pool import ConnectionPool, PoolTimeout

from memstrata.errors import StoreError
from memstrata.store.sql import Row

#: Rows a tokenising query takes: the COPY waits for the first chunk only.
CHUNK = 1_000
#: How long a bulk write (a tenth of a second or more) waits for the second connection, which
#: a pool may have to open, before tokenising in the server.
SIDE_WAIT_S = 0.05
#: A document and its length (``fts``, ``fts_len``); the document in binary.
Document = tuple[bytes, int]
_TOKENISE = (
    "SELECT d, memstrata_fts_len(d) FROM (SELECT memstrata_fts_doc(t) AS d, n "
    "FROM unnest(%s::text[]) WITH ORDINALITY AS u (t, n)) x ORDER BY n"
)
_PUT_WAIT_S = 0.05


class TsvectorBinaryDumper(Dumper):
    """A ``tsvector`` the server sent in binary, sent back as it came (COPY only)."""

    format = Format.BINARY
    oid = types["tsvector"].oid

    def dump(self, obj: bytes) -> bytes:
        return obj


def register_documents(raw: psycopg.Connection[Row]) -> None:
    """Let a binary COPY take the side connection's documents as they came."""
    raw.adapters.register_dumper(None, TsvectorBinaryDumper)


class SideDocuments:
    """The documents of ``texts`` in order, computed on ``raw`` by a thread, at most two
    chunks ahead of the reader. Its failure reaches the reader as a :class:`StoreError`."""

    def __init__(self, raw: psycopg.Connection[Row], texts: Sequence[str]) -> None:
        self._raw = raw
        self._texts = texts
        self._chunks: queue.Queue[list[Document] | BaseException] = queue.Queue(maxsize=2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memstrata-documents", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            with self._raw.transaction(), self._raw.cursor(binary=True) as cur:
                for start in range(0, len(self._texts), CHUNK):
                    cur.execute(_TOKENISE, [list(self._texts[start : start + CHUNK])])
                    if not self._put([(bytes(d), int(n)) for d, n in cur.fetchall()]):
                        return
        except Exception as exc:  # handed to the reader, which raises it
            self._put(exc)

    def _put(self, item: list[Document] | BaseException) -> bool:
        """Queue ``item``; False once the reader has gone."""
        while not self._stop.is_set():
            with suppress(queue.Full):
                self._chunks.put(item, timeout=_PUT_WAIT_S)
                return True
        return False

    def __iter__(self) -> Iterator[Document]:
        for _ in range(0, len(self._texts), CHUNK):
            item = self._chunks.get()
            if isinstance(item, BaseException):
                raise StoreError(f"postgres: tokenising a bulk write: {item}") from item
            yield from item

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


@contextmanager
def side_documents(
    pool: ConnectionPool[psycopg.Connection[Row]], texts: Sequence[str]
) -> Iterator[SideDocuments | None]:
    """The documents of ``texts`` from a second pooled connection; None when the write is
    one chunk or less (nothing to overlap) or no connection is free now."""
    if len(texts) <= CHUNK:
        yield None
        return
    try:
        raw = pool.getconn(timeout=SIDE_WAIT_S)
    except PoolTimeout:
        yield None
        return
    documents = SideDocuments(raw, texts)
    try:
        yield documents
    finally:
        documents.close()
        pool.putconn(raw)


__all__ = ["CHUNK", "SideDocuments", "register_documents", "side_documents"]
