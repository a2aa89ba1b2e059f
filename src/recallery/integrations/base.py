"""What the framework adapters share: plans of SDK calls that either client runs, the text of
a raw turn, and paging through a memory's turns.

An adapter's logic is written once, as a *plan*: a generator that yields steps, each a
function of the client (``lambda c: c.search(...)``), and is sent each step's answer.
:func:`run` carries a plan out with the sync :class:`~recallery.client.Client`, :func:`arun`
with either client (the sync one off the event loop), so nothing is written twice for sync
and async.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator, Sequence
from typing import Any, Literal, TypeVar

from recallery.client import AsyncClient, Client
from recallery.curation import MessageFilter
from recallery.models import Entry, Trust

T = TypeVar("T")

#: One SDK call: given a Client it returns the answer; given an AsyncClient, an awaitable.
Step = Callable[[Any], Any]
Plan = Generator[Step, Any, T]
AnyClient = Client | AsyncClient

#: The most turns one page of the Messages list holds.
PAGE = 100
#: How a raw turn's text is written by the engine (``add_turn``): the user's words, then the
#: agent's.
USER, AGENT = "User Input: ", "\nAgent Response: "


def run(plan: Plan[T], client: AnyClient) -> T:
    """Carry ``plan`` out with the sync client."""
    if not isinstance(client, Client):
        raise TypeError("synchronous calls need a recallery.Client; await the async ones")
    done, out = _advance(plan, None)
    while not done:
        done, out = _advance(plan, out(client))
    result: T = out
    return result


async def arun(plan: Plan[T], client: AnyClient) -> T:
    """Carry ``plan`` out with either client; the sync one's calls run in a worker thread."""
    done, out = _advance(plan, None)
    while not done:
        answer = await (
            out(client) if isinstance(client, AsyncClient) else asyncio.to_thread(out, client)
        )
        done, out = _advance(plan, answer)
    result: T = out
    return result


def _advance(plan: Plan[Any], answer: Any) -> tuple[bool, Any]:
    """Send ``plan`` an answer: (True, its result) when it is done, else (False, its next
    step)."""
    try:
        return False, plan.send(answer)
    except StopIteration as finished:
        return True, finished.value


def ask(step: Step) -> Plan[Any]:
    """A plan of one call: its answer."""
    answer = yield step
    return answer


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
) -> Plan[None]:
    """Erase (for good; the owner's key with ``manage``) or forget (hidden from every read
    and search, evicted first; ``write`` is enough) the turns named, or that ``where``
    selects, and what was extracted from them, in one bulk change."""
    if message_ids is not None and not message_ids:
        return
    action: Literal["erase", "forget"] = "erase" if erase else "forget"
    yield lambda c: c.bulk(memory_id, action, message_ids=message_ids, filter=where, dry_run=False)


__all__ = [
    "AGENT",
    "USER",
    "AnyClient",
    "Plan",
    "Step",
    "arun",
    "ask",
    "live",
    "remove",
    "run",
    "turn_parts",
    "turn_text",
    "turns",
]
