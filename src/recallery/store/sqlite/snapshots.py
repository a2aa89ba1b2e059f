"""Snapshots of the in-process indexes, kept inside the database file, so a new process loads
a big memory's index state instead of tokenizing every entry again.

A snapshot is one memory's state of one index (``kind``: keywords, columns, conversations,
ann) as named numpy arrays, stored in parts of at most :data:`PART` bytes in
``index_snapshots`` (migration 8) with the marks it covers: every row up to ``rows_high``,
every change up to ``changes_seq``. All snapshots are written together, in one write
transaction, so they share their marks; a new process restores them and catches up from
there through the change log like any other.

Erasure leaves no trace in them: a trigger deletes a memory's snapshots in the same statement
that deletes (or rewrites the text or vector of) any of its entries, so with ``secure_delete``
their pages are zeroed in that transaction, and the next process rebuilds that memory from its
rows. A process whose in-memory state still holds erased rows (dead, matching nothing) writes
its snapshots without them: postings renumbered, stems no live row holds left out, and no HNSW
graph at all (usearch keeps the vectors it removed), so the next process builds one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from recallery.store.sql import Conn

Arrays = dict[str, NDArray[Any]]
"""One index's state of one memory."""
#: Bytes per stored part (SQLite's limit for one value is 1 GB).
PART = 64 << 20
#: Alignment of each array's bytes in a snapshot.
ALIGN = 64
KINDS = ("keywords", "columns", "conversations", "ann")
#: The layout of each kind's arrays; a snapshot of another is ignored (its memory loads from
#: rows; an HNSW graph is rebuilt). 2: conversations hold each turn's length. 3: keyword terms
#: from the analyzer of every language (:mod:`recallery.text.analyzer`): an older snapshot's
#: terms are English-only. Keywords 4: Arabic words light-stemmed (:mod:`recallery.text.arabic`).
#: Keywords 5: Thai, Lao, Myanmar and Khmer bigrammed, Devanagari Hindi-stemmed. Keywords 6:
#: ten more Latin-script languages told apart and stemmed in their own language.
FORMATS = {"keywords": 6, "columns": 3, "conversations": 3, "ann": 3}


@dataclass
class Snapshot:
    """Every stored snapshot: the marks they cover and each memory's arrays by kind."""

    rows_high: int = 0
    changes_seq: int = 0
    memories: dict[str, dict[str, Arrays]] = field(default_factory=dict)

    def of(self, kind: str) -> dict[str, Arrays]:
        return {m: kinds[kind] for m, kinds in self.memories.items() if kind in kinds}


def texts(values: Iterable[str]) -> NDArray[np.uint8]:
    """Strings as one array (JSON), for a snapshot."""
    return np.frombuffer(json.dumps(list(values)).encode(), np.uint8)


def strings(array: NDArray[Any]) -> list[str]:
    out: list[str] = json.loads(array.tobytes().decode())
    return out


def pack(arrays: Mapping[str, NDArray[Any]]) -> Iterator[bytes]:
    """``arrays`` as stored parts: a JSON header (name, dtype, shape, offset of each), then
    their bytes, each at a multiple of :data:`ALIGN`; no copy of the whole is ever made."""
    header, offset = {}, 0
    for name, a in arrays.items():
        header[name] = [a.dtype.str, list(a.shape), offset]
        offset += -(-a.nbytes // ALIGN) * ALIGN
    head = json.dumps(header).encode()
    part = bytearray(len(head).to_bytes(8, "little") + head)
    part += bytes(-len(part) % ALIGN)
    for a in arrays.values():
        data = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
        for start in range(0, a.nbytes, PART):
            part += data[start : start + PART].tobytes()
            while len(part) >= PART:
                yield bytes(part[:PART])
                del part[:PART]
        part += bytes(-a.nbytes % ALIGN)
    yield bytes(part)


def unpack(buffer: bytearray) -> Arrays:
    """The arrays of :func:`pack`'s parts joined: views of ``buffer``, not copies."""
    size = int.from_bytes(buffer[:8], "little")
    header = json.loads(bytes(buffer[8 : 8 + size]))
    base = 8 + size + (-(8 + size) % ALIGN)
    out: Arrays = {}
    for name, (dtype, shape, offset) in header.items():
        count = int(np.prod(shape, dtype=np.int64))
        a = np.frombuffer(buffer, np.dtype(dtype), count, base + offset)
        out[name] = a.reshape(shape)
    return out


def save(
    conn: Conn, rows_high: int, changes_seq: int, states: Iterable[tuple[str, str, Arrays]]
) -> int:
    """Replace every snapshot with ``states`` ((memory_id, kind, arrays)); returns bytes
    written. ``conn`` must be in a write transaction."""
    conn.execute("DELETE FROM index_snapshots")
    written = 0
    for memory_id, kind, arrays in states:
        for n, data in enumerate(pack(arrays | {"format": np.asarray([FORMATS[kind]])})):
            conn.execute(
                "INSERT INTO index_snapshots VALUES (?, ?, ?, ?, ?, ?)",
                [memory_id, kind, n, rows_high, changes_seq, data],
            )
            written += len(data)
    return written


def load(conn: Conn, kinds: Iterable[str] = KINDS) -> Snapshot:
    """The stored snapshots of ``kinds`` (empty when none, or when their marks disagree)."""
    marks = conn.execute("SELECT DISTINCT rows_high, changes_seq FROM index_snapshots")
    if len(marks) != 1:
        return Snapshot()
    out = Snapshot(int(marks[0][0]), int(marks[0][1]))
    for kind in kinds:
        for memory_id, data in _parts(conn, kind):
            arrays = unpack(data)
            if arrays.pop("format", None) == FORMATS[kind]:
                out.memories.setdefault(memory_id, {})[kind] = arrays
    return out


def _parts(conn: Conn, kind: str) -> Iterator[tuple[str, bytearray]]:
    held = conn.execute(
        "SELECT memory_id, sum(length(data)) FROM index_snapshots WHERE kind = ? "
        "GROUP BY memory_id",
        [kind],
    )
    for memory_id, total in held:
        buffer, at = bytearray(int(total)), 0
        for n in range(conn.execute(
            "SELECT count(*) FROM index_snapshots WHERE memory_id = ? AND kind = ?",
            [memory_id, kind],
        )[0][0]):  # fmt: skip
            (data,) = conn.execute(
                "SELECT data FROM index_snapshots WHERE memory_id = ? AND kind = ? AND part = ?",
                [memory_id, kind, n],
            )[0]
            buffer[at : at + len(data)] = data
            at += len(data)
            del data
        yield str(memory_id), buffer
