"""Google's Agent Development Kit (``google-adk``): a memory service over one recallery memory.

::

    from google.adk.runners import Runner
    from recallery import AsyncClient
    from recallery.integrations.adk import RecalleryMemoryService

    memory = RecalleryMemoryService(AsyncClient(url, api_key=key), memory_id)
    runner = Runner(agent=agent, app_name="helper", session_service=sessions,
                    memory_service=memory)          # load_memory / preload_memory use it

ADK scopes memory by app and user: ``app_name`` is recallery's ``agent_id``, ``user_id`` its
``user_id``, a session's id and the event's its ``session_id`` (``session#event``). Each event
with text becomes one raw turn at the event's time: what the user said as the turn's user
input, the agents' words as its agent response. ``add_session_to_memory`` may see a session
many times: it stores only events newer than what the session already holds and not already
stored (the same event id, as ADK's own service: an event given again with new text is not
stored twice), so an event deleted through ``delete_memory`` stays deleted.
``add_events_to_memory`` stores each given event not already stored; ``add_memory`` states
facts directly (reconciled with what the memory holds; the memory must extract ``semantic``
entries).

``search_memory`` is recallery's hybrid search over that app and user: raw turns and, when the
memory extracts, the facts, events and instructions drawn from them. A query of one word is a
lookup of that word: only results that say it are kept (a keyword match, or the word in the
text; inside a run of Japanese, Chinese or Thai, which have no spaces to split on), as a lone
word gives the embedding too little to tell related from unrelated text. Each result's ``id`` is
the entry's id; its author is ``user`` for what the user said and for extracted entries, the
app's name for the agents' words. ``delete_memory`` erases an entry of that app and user (or
forgets it, with ``erase=False``: enough for a key that may only read and write); an id of
another app or user changes nothing.
"""

from __future__ import annotations

from recallery.extras import require

require("google.adk", "httpx", extra="adk", what="recallery.integrations.adk")

import re  # noqa: E402
import unicodedata  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402
from datetime import UTC, datetime  # noqa: E402

from google.adk.events import Event  # noqa: E402
from google.adk.memory import BaseMemoryService  # noqa: E402
from google.adk.memory.base_memory_service import SearchMemoryResponse  # noqa: E402
from google.adk.memory.memory_entry import MemoryEntry  # noqa: E402
from google.adk.sessions import Session  # noqa: E402
from google.genai import types  # noqa: E402

from recallery.errors import NotFound  # noqa: E402
from recallery.integrations.base import (  # noqa: E402
    AnyClient,
    Plan,
    Step,
    arun,
    ask,
    remove,
    turn_parts,
    turn_text,
    turns,
)
from recallery.models import Entry, EntryType, Hit  # noqa: E402
from recallery.requests import DEFAULT_SIMILARITY_THRESHOLD, EntryInput  # noqa: E402
from recallery.validation import MAX_ID_TEXT  # noqa: E402

#: As many results as ADK's in-memory service gives.
TOP_N = 10
#: Between an ADK session's id and an event's id in a turn's ``session_id``.
EVENT = "#"


class RecalleryMemoryService(BaseMemoryService):
    """ADK's memory service over one memory (see the module's documentation)."""

    def __init__(
        self,
        client: AnyClient,
        memory_id: str,
        *,
        erase: bool = True,
        top_n: int = TOP_N,
        similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
    ) -> None:
        self.client = client
        self.memory_id = memory_id
        self.erase = erase
        self.top_n = top_n
        self.similarity_threshold = similarity_threshold

    async def add_session_to_memory(self, session: Session) -> None:
        plan = self._add(session.app_name, session.user_id, session.id, session.events, True)
        await arun(plan, self.client)

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        await arun(self._add(app_name, user_id, session_id or "", events, False), self.client)

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        facts = [EntryInput(t) for t in (_text(m.content) for m in memories) if t]
        if facts:
            step = ask(
                lambda c: c.add_entries(self.memory_id, facts, user_id=user_id, agent_id=app_name)
            )
            await arun(step, self.client)

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        hits: list[Hit] = await arun(
            ask(
                lambda c: c.search(
                    query,
                    [self.memory_id],
                    top_n=self.top_n,
                    similarity_threshold=self.similarity_threshold,
                    user_id=user_id,
                    agent_id=app_name,
                )
            ),
            self.client,
        )
        word = one_word(query)
        if word is not None:  # a lookup of one word: only what says it
            hits = [h for h in hits if h.keyword_score > 0 or says(h.entry.content, word)]
        return SearchMemoryResponse(memories=[_memory_entry(h, app_name) for h in hits])

    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        if not memory_id or not memory_id.isdigit():
            return
        await arun(ask(lambda c: c.get_memory(self.memory_id)), self.client)  # NotFound if unseen
        try:
            entry, _ = await arun(
                ask(lambda c: c.get_entry(self.memory_id, int(memory_id))), self.client
            )
        except NotFound:
            return  # no such entry (any more): nothing to delete
        if (entry.agent_id, entry.user_id) == (app_name, user_id):
            ids = [entry.message_id]
            await arun(remove(self.memory_id, erase=self.erase, message_ids=ids), self.client)

    def _add(
        self, app: str, user: str, session: str, events: Sequence[Event], whole: bool
    ) -> Plan[None]:
        """Store the events not stored yet (by event id, as ADK's own service; by side, text
        and second for a turn stored without one); of a ``whole`` session, only those newer
        than what it holds."""
        stored = yield from turns(
            self.memory_id,
            agent_id=app,
            session_contains=session or None,
            keep=lambda e: e.user_id == user and split_session(e.session_id)[0] == session,
        )
        ids = {split_session(e.session_id)[1] for e in stored} - {""}
        seen = {(e.content, e.valid_at) for e in stored}
        mark = max((e.valid_at for e in stored), default=None) if whole else None
        for event in events:
            text = _text(event.content)
            user_text, agent_text = (text, "") if event.author == "user" else ("", text)
            at = datetime.fromtimestamp(event.timestamp, UTC)
            key = (turn_text(user_text, agent_text), at.replace(microsecond=0))
            if not text or event.id in ids or key in seen or (mark and key[1] < mark):
                continue
            yield self._write(
                (app, user, session_of(session, event.id)), (user_text, agent_text), at
            )
            seen.add(key)
            ids.add(event.id)

    def _write(self, who: tuple[str, str, str], said: tuple[str, str], at: datetime) -> Step:
        """A turn of ``who`` (app, user, session) saying ``said`` (the user's words, the
        agents') at ``at``."""
        app, user, session = who
        return lambda c: c.add_turn(
            [self.memory_id],
            user_input=said[0],
            agent_response=said[1],
            user_id=user,
            agent_id=app,
            session_id=session,
            conversation_time=at,
        )


def session_of(session: str, event_id: str) -> str:
    """The ``session_id`` of an event's turn: the ADK session's id, ``#`` and the event's id
    (the session's id alone when the two would be too long, or the event has none)."""
    both = f"{session}{EVENT}{event_id}"
    return both if event_id and len(both.encode()) <= MAX_ID_TEXT else session


def split_session(session_id: str) -> tuple[str, str]:
    """A turn's ADK session id and event id (empty when it has none)."""
    session, _, event = session_id.rpartition(EVENT)
    return (session, event) if _ else (session_id, "")


#: Scripts written without spaces between words (kana, CJK ideographs, Thai): a word of
#: theirs is found inside the text, any other word only as a whole word.
_UNSPACED = re.compile("[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _folded(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def one_word(query: str) -> str | None:
    """The query's word when it has exactly one (case-folded, NFC), else ``None``."""
    words = re.findall(r"\w+", _folded(query))
    return words[0] if len(words) == 1 else None


def says(text: str, word: str) -> bool:
    """Whether ``text`` contains ``word`` (from :func:`one_word`): as a whole word, or inside
    a run of a script written without spaces."""
    text = _folded(text)
    if _UNSPACED.search(word):
        return word in text
    return word in re.findall(r"\w+", _UNSPACED.sub(" ", text))


def _text(content: types.Content | None) -> str:
    """The text of an event's or memory's content (its text parts, joined)."""
    if content is None or not content.parts:
        return ""
    return " ".join(p.text for p in content.parts if p.text)


def _memory_entry(hit: Hit, app_name: str) -> MemoryEntry:
    entry = hit.entry
    role, author, text = "user", "user", entry.content
    parts = turn_parts(entry.content) if entry.message_type is EntryType.RAW else None
    if parts is not None and not (parts[0] and parts[1]):  # one side: one speaker
        role, author = ("user", "user") if parts[0] else ("model", app_name)
        text = parts[0] or parts[1]
    return MemoryEntry(
        id=str(entry.message_id),
        content=types.Content(role=role, parts=[types.Part(text=text)]),
        author=author,
        timestamp=entry.valid_at.isoformat(),
        custom_metadata=_metadata(entry, hit.score),
    )


def _metadata(entry: Entry, score: float) -> dict[str, object]:
    session, event = split_session(entry.session_id)
    return {
        "type": entry.message_type.value,
        "session_id": session,
        "event_id": event,
        "score": score,
    }


__all__ = [
    "EVENT",
    "TOP_N",
    "RecalleryMemoryService",
    "one_word",
    "says",
    "session_of",
    "split_session",
]
