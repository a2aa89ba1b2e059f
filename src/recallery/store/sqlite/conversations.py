"""An in-process index of raw turns by conversation, for the neighbour lookups of search,
with each turn's length for context that adapts (:mod:`recallery.retrieval.adaptive`).

A conversation is one (memory, user, agent, session); its turns are ordered by valid time,
then message id. Search asks for the few turns before and after each of its best candidates;
through SQL that is four index probes per candidate (about 20 ms for the 150 candidates of a
search at 100k entries), here it is a binary search in a sorted array per candidate.

A turn's memory, user, agent, session, valid time and text never change once written (a
correction is a new entry), so, like the vector cache, the index can only be behind:
:meth:`sync` reads raw turns committed since its last look. Erasure removes turns and their
lengths at once; a turn another process erased is skipped by the visibility check that every
neighbour goes through (its length, read for a search's own candidates, is then unused)."""

from __future__ import annotations

import bisect
import threading
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from recallery.store.neighbours import Near
from recallery.store.sqlite.arrays import grown, located
from recallery.store.sqlite.catchup import Load, catch_up
from recallery.store.sqlite.snapshots import Arrays, strings, texts

Turn = tuple[int, str, str, str, str, float, int]
"""(message_id, memory_id, user_id, agent_id, session_id, valid_at, length in characters) of a
raw turn."""
Loader = Load[Turn]


@dataclass
class _Conversation:
    """Turn ids sorted by (valid time, id), with their valid times alongside."""

    valid: array[float] = field(default_factory=lambda: array("d"))
    ids: array[int] = field(default_factory=lambda: array("q"))

    def add(self, message_id: int, valid_at: float) -> None:
        # Ids only grow, so a new turn goes after every turn of the same valid time.
        at = bisect.bisect_right(self.valid, valid_at)
        self.valid.insert(at, valid_at)
        self.ids.insert(at, message_id)

    def position(self, message_id: int, valid_at: float) -> int | None:
        lo = bisect.bisect_left(self.valid, valid_at)
        hi = bisect.bisect_right(self.valid, valid_at, lo)
        at = bisect.bisect_left(self.ids, message_id, lo, hi)
        return at if at < hi and self.ids[at] == message_id else None

    def remove(self, message_id: int, valid_at: float) -> None:
        at = self.position(message_id, valid_at)
        if at is not None:
            del self.valid[at]
            del self.ids[at]

    def near(self, message_id: int, valid_at: float, reach: int) -> Near | None:
        at = self.position(message_id, valid_at)
        if at is None:
            return None
        before = tuple(self.ids[max(at - reach, 0) : at])[::-1]
        return before, tuple(self.ids[at + 1 : at + 1 + reach])


@dataclass
class _Memory:
    """One memory's raw turns in message-id order: valid time, conversation and length of
    each."""

    ids: NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    valid: NDArray[np.float64] = field(default_factory=lambda: np.empty(0, np.float64))
    conversation: NDArray[np.int32] = field(default_factory=lambda: np.empty(0, np.int32))
    length: NDArray[np.int32] = field(default_factory=lambda: np.empty(0, np.int32))
    size: int = 0
    codes: dict[tuple[str, str, str], int] = field(default_factory=dict)
    conversations: list[_Conversation] = field(default_factory=list)

    def append(self, turns: Sequence[Turn]) -> None:
        need = self.size + len(turns)
        self.ids, self.valid = grown(self.ids, need), grown(self.valid, need)
        self.conversation, self.length = grown(self.conversation, need), grown(self.length, need)
        for n, (message_id, _, user, agent, session, valid_at, length) in enumerate(
            turns, self.size
        ):
            code = self.codes.setdefault((user, agent, session), len(self.codes))
            if code == len(self.conversations):
                self.conversations.append(_Conversation())
            self.conversations[code].add(message_id, valid_at)
            self.ids[n], self.valid[n], self.conversation[n] = message_id, valid_at, code
            self.length[n] = length
        self.size = need

    def state(self) -> Arrays:
        """The turns still in their conversations, as arrays."""
        n = self.size
        keep = self.length[:n] >= 0  # an erased turn's is -1
        keys = ["\x1f".join(key) for key in self.codes]
        return {"ids": self.ids[:n][keep], "valid": self.valid[:n][keep],
                "conversation": self.conversation[:n][keep], "length": self.length[:n][keep],
                "keys": texts(keys)}  # fmt: skip

    @classmethod
    def restored(cls, a: Arrays) -> _Memory:
        keys = [tuple(k.split("\x1f")) for k in strings(a["keys"])]
        out = cls(a["ids"], a["valid"], a["conversation"], a["length"], len(a["ids"]))
        out.codes = {(k[0], k[1], k[2]): code for code, k in enumerate(keys)}
        order = np.lexsort((a["ids"], a["valid"], a["conversation"]))
        bounds = np.searchsorted(a["conversation"][order], np.arange(len(keys) + 1))
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            valid, ids = array("d"), array("q")
            valid.frombytes(a["valid"][order[lo:hi]].astype(np.float64).tobytes())
            ids.frombytes(a["ids"][order[lo:hi]].astype(np.int64).tobytes())
            out.conversations.append(_Conversation(valid, ids))
        return out

    def lengths(self, ids: NDArray[np.int64]) -> dict[int, int]:
        """The length of those of ``ids`` held here and not erased."""
        at, ids = located(self.ids[: self.size], ids)
        kept = self.length[at] >= 0
        return dict(zip(ids[kept].tolist(), self.length[at][kept].tolist(), strict=True))

    def drop(self, ids: NDArray[np.int64]) -> None:
        """Take erased turns out of their conversations; their lengths go too (-1)."""
        at, _ = located(self.ids[: self.size], ids)
        for message_id, valid_at, code in self.located(ids):
            self.conversations[code].remove(message_id, valid_at)
        self.length[at] = -1

    def located(self, ids: NDArray[np.int64]) -> list[tuple[int, float, int]]:
        """(id, valid time, conversation) of those of ``ids`` held here."""
        at, ids = located(self.ids[: self.size], ids)
        return list(
            zip(ids.tolist(), self.valid[at].tolist(), self.conversation[at].tolist(), strict=True)
        )


class ConversationIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._memories: dict[str, _Memory] = {}
        self._high = 0

    def sync(self, load_after: Loader) -> None:
        """Add every raw turn with a message id above the high-water mark."""
        with self._lock:
            self._high, _ = catch_up(load_after, self._high, self._append)

    def _append(self, memory_id: str, turns: list[Turn]) -> None:
        self._memories.setdefault(memory_id, _Memory()).append(turns)

    def snapshot(self) -> dict[str, Arrays]:
        with self._lock:
            return {m: memory.state() for m, memory in self._memories.items()}

    def restore(self, states: dict[str, Arrays], high: int, load_others: Loader) -> None:
        """As :meth:`~.keywords.KeywordIndex.restore`."""
        with self._lock:
            self._memories.update((m, _Memory.restored(a)) for m, a in states.items())
            catch_up(load_others, 0, self._append)
            self._high = high

    def drop(self, ids: Sequence[int]) -> None:
        """Take erased turns out of their conversations (ids of other entries are ignored)."""
        wanted = np.unique(np.asarray(ids, dtype=np.int64))
        with self._lock:
            for memory in self._memories.values():
                memory.drop(wanted)

    def lengths(self, memory_ids: Iterable[str], ids: Iterable[int]) -> dict[int, int]:
        """The length in characters of each raw turn of the memories among ``ids``, in any
        state but erased."""
        wanted = np.unique(np.fromiter(ids, dtype=np.int64))
        out: dict[int, int] = {}
        with self._lock:
            for memory in filter(None, (self._memories.get(m) for m in memory_ids)):
                out |= memory.lengths(wanted)
        return out

    def near(self, memory_ids: Iterable[str], ids: Iterable[int], reach: int) -> dict[int, Near]:
        """For each raw turn of the memories among ``ids``: up to ``reach`` turns on each side
        of it, nearest first."""
        wanted = np.unique(np.fromiter(ids, dtype=np.int64))
        out: dict[int, Near] = {}
        with self._lock:
            held = (self._memories.get(m) for m in memory_ids)
            for memory in (m for m in held if m is not None):
                for message_id, valid_at, code in memory.located(wanted):
                    found = memory.conversations[code].near(message_id, valid_at, reach)
                    if found is not None:
                        out[message_id] = found
        return out
