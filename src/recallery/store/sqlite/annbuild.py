"""A memory's first HNSW index built in a child process, so the build keeps its speed beside a
busy server.

usearch 2.26 takes the GIL back after each insert on its first build thread (to check for
signals). Beside a thread busy in Python each of those waits out the interpreter's switch
interval, so 10,000 inserts took 57 s instead of 1.6 s, and on a server under load a memory
that crossed the index threshold was searched exactly for minutes. A child process has no
other Python thread to wait for.

The rows go to the child through a pipe and the index comes back the same way, so no file
ever holds a vector (what erasure promises of the files the store writes). The parent starts
:func:`main` in a new interpreter and writes a header (rows, dimensions, build threads), then
each slice's keys and float32 vectors; the child adds each slice as it arrives (it never
holds every vector at once) and writes back the saved index's length and bytes.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import IO

import numpy as np
from numpy.typing import NDArray

from recallery.errors import StoreError
from recallery.store.sqlite.ann import BUILD_SLICE, new_index

_HEADER = struct.Struct("<qqq")
_LENGTH = struct.Struct("<q")


def build_apart(
    rows: NDArray[np.float32], positions: NDArray[np.int64], threads: int = 0
) -> NDArray[np.uint8]:
    """The saved bytes of an index over ``rows[positions]`` (keys: the positions), built in
    a child process on ``threads`` threads (0: every core); StoreError if the child fails."""
    package = Path(__file__).resolve().parents[3]  # the folder that holds ``recallery``
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(package), *sys.path])}
    child = subprocess.Popen(
        [sys.executable, "-c", f"from {__name__} import main; main()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdin.write(_HEADER.pack(len(positions), rows.shape[1], threads))
        for start in range(0, len(positions), BUILD_SLICE):
            part = positions[start : start + BUILD_SLICE]
            child.stdin.write(part.astype(np.uint64).tobytes())
            child.stdin.write(np.ascontiguousarray(rows[part], np.float32).tobytes())
        child.stdin.close()
        (length,) = _LENGTH.unpack(_read(child.stdout, _LENGTH.size))
        graph = np.empty(length, np.uint8)
        _read_into(child.stdout, graph.data)
        if child.wait() != 0:
            raise StoreError(f"the index build process exited with {child.returncode}")
        return graph
    except (OSError, struct.error, EOFError) as exc:
        raise StoreError(f"the index build process failed: {exc}") from exc
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def _read(stream: IO[bytes], n: int) -> bytes:
    out = bytearray(n)
    _read_into(stream, memoryview(out))
    return bytes(out)


def _read_into(stream: IO[bytes], into: memoryview) -> None:
    """Fill ``into`` from ``stream``; EOFError if it ends first."""
    done = 0
    while done < len(into):
        got = stream.readinto(into[done:])  # type: ignore[attr-defined]
        if not got:
            raise EOFError(f"{done} of {len(into)} bytes")
        done += got


def main() -> None:
    """The child: read the header and slices from stdin, write the index to stdout."""
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    count, dim, threads = _HEADER.unpack(_read(source, _HEADER.size))
    index = new_index(dim, with_runtime=False)
    for start in range(0, count, BUILD_SLICE):
        n = min(BUILD_SLICE, count - start)
        keys = np.frombuffer(_read(source, 8 * n), np.uint64)
        vectors = np.frombuffer(_read(source, 4 * n * dim), np.float32).reshape(n, dim)
        index.add(keys, vectors, threads=threads)
    data = index.save()
    assert data is not None
    sink.write(_LENGTH.pack(len(data)))
    sink.write(data)
    sink.flush()
