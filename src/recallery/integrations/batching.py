"""Calls made in one tick of an event loop, run as one batch (as LangGraph's
``AsyncBatchedBaseStore`` does), whatever loop they come from.

A burst of concurrent calls (``asyncio.gather`` over thousands of ``aput``, ``aget`` and
``asearch``) becomes one batch, so the adapter serves its reads from one listing and sends
its writes with a bounded fan-out, instead of one chain of HTTP requests per call. The
batches of one loop run one after another, in the order their calls were made, so a later
call's write lands after an earlier one's. Each running loop has its own queue, kept weakly:
``asyncio.run`` per turn and worker threads each get theirs.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

O = TypeVar("O")  # noqa: E741
R = TypeVar("R")

Pending = list[tuple["asyncio.Future[R]", O]]


class TickBatcher(Generic[O, R]):
    """Gathers the operations submitted in one loop tick and hands them to ``run`` at once."""

    def __init__(self, run: Callable[[list[O]], Awaitable[list[R]]]) -> None:
        self._run = run
        self._pending: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pending[R, O]]
        self._pending = weakref.WeakKeyDictionary()
        self._turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]
        self._turns = weakref.WeakKeyDictionary()

    async def submit(self, ops: Sequence[O]) -> list[R]:
        """Each operation's result, once the batch it joined has run."""
        if not ops:
            return []
        loop = asyncio.get_running_loop()
        pending = self._pending.get(loop)
        if pending is None:
            pending = self._pending[loop] = []
            loop.call_soon(self._flush, loop)
        futures = [loop.create_future() for _ in ops]
        pending.extend(zip(futures, ops, strict=True))
        return list(await asyncio.gather(*futures))

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        pending = self._pending.pop(loop, [])
        turn = self._turns.get(loop)
        if turn is None:
            turn = self._turns[loop] = asyncio.Lock()
        task = loop.create_task(self._batch(pending, turn))
        _running.add(task)
        task.add_done_callback(_running.discard)

    async def _batch(self, pending: Pending[R, O], turn: asyncio.Lock) -> None:
        live = [(f, op) for f, op in pending if not f.done()]  # a cancelled caller drops out
        if not live:
            return
        async with turn:  # the loop's batches one after another, in order (a fair lock)
            try:
                results = await self._run([op for _, op in live])
            except Exception as exc:  # every caller of the batch sees its failure
                for future, _ in live:
                    if not future.done():
                        future.set_exception(exc)
                return
        for (future, _), result in zip(live, results, strict=True):
            if not future.done():
                future.set_result(result)


#: The batches in flight, held until they finish (a loop keeps only weak references to tasks).
_running: set[asyncio.Task[None]] = set()

__all__ = ["TickBatcher"]
