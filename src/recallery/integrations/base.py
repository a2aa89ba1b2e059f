"""What the framework adapters share: plans of SDK calls that either client runs, the text of
a raw turn, and paging through a memory's turns.

An adapter's logic is written once, as a *plan*: a generator that yields steps, each a
function of the client (``lambda c: c.search(...)``), and is sent each step's answer.
:func:`run` carries a plan out with the sync :class:`~recallery.client.Client`, :func:`arun`
with either client (the sync one off the event loop), so nothing is written twice for sync
and async. A plan may also yield :class:`Together`: several calls whose answers come back as
one list, sent at once (at most :data:`FAN_OUT` in flight) by :func:`arun`, one after
another by :func:`run`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from recallery.client import AsyncClient, Client
from recallery.errors import RecalleryError
from recallery.models import Entry, Trust
from recallery.requests import BulkResult, MessageFilter

T = TypeVar("T")

#: One SDK call: given a Client it returns the answer; given an AsyncClient, an awaitable.
Step = Callable[[Any], Any]


@dataclass(frozen=True)
class Together:
    """Calls that do not depend on each other: answered as a list, in order."""

    steps: tuple[Step, ...]


Plan = Generator[Step | Together, Any, T]
AnyClient = Client | AsyncClient

#: The most turns one page of the Messages list holds.
PAGE = 100
#: The most calls one plan has in flight at once.
FAN_OUT = 8

#: How a raw turn's text is written by the engine (``add_turn``): the user's words, then the
#: agent's.
USER, AGENT = "User Input: ", "\nAgent Response: "


def run(plan: Plan[T], client: AnyClient) -> T:
    """Carry ``plan`` out with the sync client."""
    if not isinstance(client, Client):
        raise TypeError("synchronous calls need a recallery.Client; await the async ones")
    done, out = _advance(plan, None)
    while not done:
        try:
            answer = [s(client) for s in out.steps] if isinstance(out, Together) else out(client)
        except RecalleryError as refused:  # the plan may handle a refusal
            done, out = _advance(plan, refused, throw=True)
            continue
        done, out = _advance(plan, answer)
    result: T = out
    return result


async def arun(plan: Plan[T], client: AnyClient) -> T:
    """Carry ``plan`` out with either client; the sync one's calls run in worker threads."""
    done, out = _advance(plan, None)
    while not done:
        try:
            if isinstance(out, Together):
                bound = asyncio.Semaphore(FAN_OUT)
                answer: Any = await asyncio.gather(*(_send(s, client, bound) for s in out.steps))
            else:
                answer = await _send(out, client)
        except RecalleryError as refused:  # the plan may handle a refusal
            done, out = _advance(plan, refused, throw=True)
            continue
        done, out = _advance(plan, answer)
    result: T = out
    return result


async def _send(step: Step, client: AnyClient, bound: asyncio.Semaphore | None = None) -> Any:
    if bound is not None:
        async with bound:
            return await _send(step, client)
    if isinstance(client, AsyncClient):
        return await step(client)
    return await asyncio.to_thread(step, client)


def _advance(plan: Plan[Any], answer: Any, *, throw: bool = False) -> tuple[bool, Any]:
    """Send ``plan`` an answer (or raise it there, with ``throw``): (True, its result) when it
    is done, else (False, its next step)."""
    try:
        return False, plan.throw(answer) if throw else plan.send(answer)
    except StopIteration as finished:
        return True, finished.value


def ask(step: Step) -> Plan[Any]:
    """A plan of one call: its answer."""
    answer = yield step
    return answer


def together(steps: Sequence[Step]) -> Plan[list[Any]]:
    """A plan of calls independent of each other: their answers, in order."""
    if not steps:
        return []
    answers: list[Any] = yield Together(tuple(steps))
    return answers


def turn_text(user: str, agent: str) -> str:
    """The content the engine gives a turn of these two texts."""
    return f"{USER}{user}{AGENT}{agent}"


def turn_parts(content: str) -> tuple[str, str] | None:
    """The user's and the agent's text of a raw turn's content (None when it is not one:
    corrected by hand, say). The user's text ends at the first agent marker."""
    if not content.startswith(USER) or AGENT not in content:
        return None
    user, _, agent = content.removeprefix(USER).partition(AGENT)
    return user, agent


def live(entry: Entry) -> bool:
    """Whether an entry is in use: enabled, not forgotten, not rejected."""
    return entry.status and entry.forget_at is None and entry.trust is not Trust.REJECTED


def turns(
    memory_id: str,
    *,
    agent_id: str | None = None,
    session_id: str | None = None,
    session_contains: str | None = None,
    keep: Callable[[Entry], bool] = live,
    limit: int | None = None,
) -> Plan[list[Entry]]:
    """The memory's current raw turns that ``keep`` accepts, newest first (by valid time),
    ``limit`` of them at most: the Messages list page by page, narrowed on the server by agent
    and by session (exact, or containing a text). A memory the key cannot see is NotFound."""
    where = {
        "agent_ids": None if agent_id is None else [agent_id],
        "session_id": session_id,
        "keywords": session_contains,
    }
    found: list[Entry] = []
    number = 1
    while limit is None or len(found) < limit:
        page = yield _page(memory_id, where, number)
        found += [e for e in page.items if keep(e)]
        if len(page.items) < PAGE or number * PAGE >= page.total:
            break
        if limit is None:  # every page: the rest at once
            rest = range(number + 1, -(-page.total // PAGE) + 1)
            pages = yield from together([_page(memory_id, where, n) for n in rest])
            found += [e for p in pages for e in p.items if keep(e)]
            break
        number += 1
    return found if limit is None else found[:limit]


def _page(memory_id: str, where: dict[str, Any], number: int) -> Step:
    return lambda c: c.list_messages(memory_id, **where, page=number, page_size=PAGE)


def remove(
    memory_id: str,
    *,
    erase: bool,
    message_ids: Sequence[int] | None = None,
    where: MessageFilter | None = None,
) -> Plan[BulkResult | None]:
    """Erase (for good; the owner's key with ``manage``) or forget (hidden from every read
    and search, evicted first; ``write`` is enough) the turns named, or that ``where``
    selects, and what was extracted from them, in one bulk change; its receipt (None when no
    turn was named)."""
    if message_ids is not None and not message_ids:
        return None
    action: Literal["erase", "forget"] = "erase" if erase else "forget"
    done: BulkResult = yield lambda c: c.bulk(
        memory_id, action, message_ids=message_ids, filter=where, dry_run=False
    )
    return done


__all__ = [
    "AGENT",
    "FAN_OUT",
    "USER",
    "AnyClient",
    "Plan",
    "Step",
    "Together",
    "arun",
    "ask",
    "live",
    "remove",
    "run",
    "together",
    "turn_parts",
    "turn_text",
    "turns",
]
