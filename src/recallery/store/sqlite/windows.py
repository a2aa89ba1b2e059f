"""Conversation windows of the keyword index: a raw turn is also scored together with the
turns it answers.

A reply like "yes, last July!" names nothing a question would ask for; the turn before it
does. So each raw turn has a *window*: itself and the raw turns written before it in its
conversation (same memory, user, agent and session), in write order, which is message-id
order, as far back as :mod:`recallery.store.windowing` says (at least two turns, more while
the window holds few words; LoCoMo split into one sentence a message: 70.3 -> 72.5 R@10 on
the held-out half against two turns always; whole turns within 0.1).
Keyword search scores the window as one document (its terms and length summed, with the
windows' own statistics) beside the turn's own score.

Windows are links between block positions, not copies of text: each turn points at the turn
written before it and the one written after it. A query's postings are spread along the
links to the turns whose windows hold them, so nothing is stored twice, and an erased turn
simply leaves its conversation (its neighbours are linked past it): its words reach no
window, and the windows around it are those a rebuild from the file gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from recallery.store.sqlite.arrays import grown
from recallery.store.sqlite.snapshots import Arrays, strings, texts
from recallery.store.windowing import REACH, reaches


@dataclass
class Links:
    """Per block position: the raw turn written just before (``prev``) and just after
    (``after``) it in its conversation, -1 where there is none (and for other entries), and
    how many turns before it its window holds (``reach``: set by :meth:`measure`, from the
    links and the lengths, so a snapshot need not keep it)."""

    prev: NDArray[np.int32] = field(default_factory=lambda: np.empty(0, np.int32))
    after: NDArray[np.int32] = field(default_factory=lambda: np.empty(0, np.int32))
    conversation: NDArray[np.int32] = field(default_factory=lambda: np.empty(0, np.int32))
    codes: dict[str, int] = field(default_factory=dict)
    tails: list[int] = field(default_factory=list)
    reach: NDArray[np.int8] = field(default_factory=lambda: np.empty(0, np.int8))

    def append(self, start: int, conversations: Sequence[str | None]) -> None:
        """Link positions ``start``, ``start + 1``, ... (one per conversation key, None for an
        entry that is not a raw turn) after the last turn of their conversations."""
        need = start + len(conversations)
        self.prev, self.after = grown(self.prev, need, -1), grown(self.after, need, -1)
        self.conversation = grown(self.conversation, need, -1)
        for at, key in enumerate(conversations, start):
            self.prev[at] = self.after[at] = self.conversation[at] = -1
            if key is None:
                continue
            code = self.codes.setdefault(key, len(self.codes))
            if code == len(self.tails):
                self.tails.append(-1)
            last = self.tails[code]
            if last >= 0:
                self.prev[at], self.after[last] = last, at
            self.conversation[at], self.tails[code] = code, at

    def measure(self, at: NDArray[np.int64], lengths: NDArray[np.float64]) -> None:
        """Set the reach of the windows of ``at`` from the turns before each and their
        ``lengths`` (token counts by block position)."""
        self.reach = grown(self.reach, len(self.prev))
        before = self.prev[at].astype(np.int64)
        columns: list[NDArray[np.float64]] = []  # lengths of the turns before, nearest first
        while len(columns) < REACH and (before >= 0).any():
            columns.append(np.where(before >= 0, lengths[np.maximum(before, 0)], -1.0))
            before = np.where(before >= 0, self.prev[np.maximum(before, 0)], -1)
        earlier = np.stack(columns, axis=1) if columns else np.empty((len(at), 0))
        self.reach[at] = reaches(lengths[at], earlier)

    def state(self, n: int, keep: NDArray[np.bool_] | None = None) -> Arrays:
        """The links of the first ``n`` positions, for a snapshot; with ``keep``, of those
        it marks only, renumbered (erased turns are unlinked: no kept turn points at one)."""
        prev, after, tails = self.prev[:n], self.after[:n], np.asarray(self.tails, np.int64)
        conversation = self.conversation[:n]
        if keep is not None:
            moved = np.append(np.cumsum(keep) - 1, -1)  # position -1 stays -1
            prev, after = (moved[a[keep]].astype(np.int32) for a in (prev, after))
            conversation, tails = conversation[keep], moved[tails]
        return {"prev": prev, "after": after, "conversation": conversation,
                "keys": texts(self.codes), "tails": tails}  # fmt: skip

    @classmethod
    def restored(cls, a: Arrays) -> Links:
        codes = {key: code for code, key in enumerate(strings(a["keys"]))}
        return cls(a["prev"], a["after"], a["conversation"], codes, a["tails"].tolist())

    def unlink(self, at: int) -> None:
        """Take position ``at`` out of its conversation: its neighbours are linked past it."""
        before, later = int(self.prev[at]), int(self.after[at])
        if before >= 0:
            self.after[before] = later
        if later >= 0:
            self.prev[later] = before
        code = int(self.conversation[at])
        if code >= 0 and self.tails[code] == at:
            self.tails[code] = before
        self.prev[at] = self.after[at] = self.conversation[at] = -1

    def members(self, at: NDArray[np.int64]) -> list[NDArray[np.int64]]:
        """For each of ``at``: itself, then its window's earlier turns (-1 where none), one
        array per distance up to the furthest any of them reaches."""
        out = [at]
        reach = np.where(at >= 0, self.reach[np.maximum(at, 0)], 0)
        last = at
        for k in range(1, int(reach.max(initial=0)) + 1):
            last = np.where(last >= 0, self.prev[np.maximum(last, 0)], -1).astype(np.int64)
            out.append(np.where(reach >= k, last, -1))
        return out

    def later(self, at: int) -> list[int]:
        """The up to :data:`REACH` turns written after position ``at`` in its conversation:
        the only windows that can hold it, or reach past it."""
        out: list[int] = []
        nxt = int(self.after[at])
        while nxt >= 0 and len(out) < REACH:
            out.append(nxt)
            nxt = int(self.after[nxt])
        return out

    def window_lengths(
        self, at: NDArray[np.int64], lengths: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Word counts of the windows of ``at``."""
        total = np.zeros(len(at), dtype=np.float64)
        for member in self.members(at):
            total += np.where(member >= 0, lengths[np.maximum(member, 0)], 0.0)
        return total

    def spread(
        self,
        docs: NDArray[np.int64],
        tfs: NDArray[np.float64],
        total: NDArray[np.float64],
        seen: NDArray[np.bool_],
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Postings of one term (positions and frequencies) as postings of windows: each
        window that holds one of ``docs`` gets the sum of their frequencies. A turn has one
        turn after it, so each step along the links meets every window at most once: no sort
        is needed; a posting travels along the links while the window it meets reaches back
        that far. A window reaches at most one turn further back than the window before it
        (it holds that window's words and its own turn's), so a posting the next window does
        not reach, no later window reaches: it stops there, and a term costs the windows that
        hold it, not the longest reach in the block. ``total`` and ``seen`` are the block's zeroed
        work arrays (:meth:`Scratch.arrays`), left zeroed again: a term costs what its
        postings reach, not the block's size."""
        total[docs] = tfs
        seen[docs] = True
        found = [docs]
        try:
            last, carried = docs, tfs
            for k in range(1, REACH + 1):
                nxt = self.after[last].astype(np.int64)  # numpy indexes by int64 fastest
                held = (nxt >= 0) & (self.reach[nxt] >= k)  # (-1's reach read, then masked)
                last, carried = nxt[held], carried[held]
                if not len(last):
                    break
                total[last] += carried
                fresh = last[~seen[last]]
                seen[fresh] = True
                found.append(fresh)
            windows = np.concatenate(found)
            return windows, total[windows]
        finally:
            Scratch.clear(total, seen, found)


@dataclass
class Scratch:
    """Work arrays of a block's size for its searches, zeroed between uses; a search touches
    only the positions of the postings it reads (the index's lock keeps it to one search at
    a time). Allocating and zeroing arrays of the block's size for every term was most of a
    window search at 100k entries."""

    total: NDArray[np.float64] = field(default_factory=lambda: np.empty(0, np.float64))
    seen: NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, np.bool_))

    def arrays(self, size: int) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """The zeroed arrays, with room for ``size`` positions."""
        self.total, self.seen = grown(self.total, size), grown(self.seen, size)
        return self.total, self.seen

    @staticmethod
    def clear(
        total: NDArray[np.float64], seen: NDArray[np.bool_], touched: Sequence[NDArray[np.int64]]
    ) -> None:
        """Zero again what a search set: the positions of ``touched``."""
        for at in touched:
            total[at] = 0.0
            seen[at] = False
