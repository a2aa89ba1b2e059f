"""LlamaIndex (``llama-index-core``): a memory block that recalls from recallery and keeps what
leaves the short-term memory there.

::

    from llama_index.core.memory import Memory
    from recallery import AsyncClient
    from recallery.integrations.llamaindex import RecalleryMemoryBlock

    block = RecalleryMemoryBlock(client=AsyncClient(url, api_key=key), memory_id=memory_id)
    memory = Memory.from_defaults(session_id="chat-1", memory_blocks=[block])
    agent.run("Where do I live?", memory=memory)

When LlamaIndex's ``Memory`` builds a prompt, the block searches the memory with the text of
the latest messages (``retrieval_context_window`` of them) and gives recallery's context block:
the best entries, token-bounded and fenced as quoted data (nothing when none is found). When
messages leave the short-term queue, the block stores them as raw turns: a user message and
the assistant messages after it make one turn (system and tool messages are left out), with
the session id LlamaIndex passes as ``session_id``, ``agent_id`` the block's (default
``llamaindex``) and ``user_id`` the block's (default: the key's user; recall then searches
only that user's entries when one is given).
"""

from __future__ import annotations

from recallery.extras import require

require("llama_index.core", "httpx", extra="llamaindex", what="recallery.integrations.llamaindex")

from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock  # noqa: E402
from llama_index.core.bridge.pydantic import Field  # noqa: E402
from llama_index.core.memory.memory import BaseMemoryBlock  # noqa: E402

from recallery.integrations.base import AnyClient, Plan, Step, arun, ask  # noqa: E402
from recallery.requests import DEFAULT_MAX_TOKENS, DEFAULT_TOP_N  # noqa: E402

AGENT_ID = "llamaindex"
#: The roles whose words are the agent's side of a turn.
AGENT_ROLES = frozenset({MessageRole.ASSISTANT, MessageRole.CHATBOT, MessageRole.MODEL})


class RecalleryMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memory in one recallery memory, as a LlamaIndex memory block."""

    name: str = Field(default="recallery", description="The block's name in the prompt.")
    description: str | None = Field(
        default="What long-term memory holds about the conversation (quoted data).",
        description="A description of the memory block.",
    )
    client: AnyClient = Field(
        description="The SDK client (its key decides what it may do).", exclude=True, repr=False
    )
    memory_id: str = Field(description="The memory to recall from and write to.")
    user_id: str | None = Field(default=None, description="The end user the turns are about.")
    agent_id: str = Field(default=AGENT_ID, description="This agent, on the turns it writes.")
    top_n: int = Field(default=DEFAULT_TOP_N, description="How many entries to recall.")
    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, description="The block's token bound.")
    retrieval_context_window: int = Field(
        default=5, description="How many of the latest messages make the search query."
    )

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        query = " ".join(
            t for t in map(_text, (messages or [])[-self.retrieval_context_window :]) if t
        )
        if not query.strip():
            return ""
        block = await arun(
            ask(
                lambda c: c.context(
                    query,
                    [self.memory_id],
                    user_id=self.user_id,
                    top_n=self.top_n,
                    max_tokens=self.max_tokens,
                )
            ),
            self.client,
        )
        return str(block.text) if block.message_ids else ""

    async def _aput(self, messages: list[ChatMessage]) -> None:
        await arun(self._write(messages), self.client)

    def _write(self, messages: list[ChatMessage]) -> Plan[None]:
        for session, user, agent in turns_of(messages):
            yield self._turn(session, user, agent)

    def _turn(self, session: str, user: str, agent: str) -> Step:
        return lambda c: c.add_turn(
            [self.memory_id],
            user_input=user,
            agent_response=agent,
            agent_id=self.agent_id,
            session_id=session,
            user_id=self.user_id,
        )


@dataclass
class _Turn:
    session: str
    user: list[str] = field(default_factory=list)
    agent: list[str] = field(default_factory=list)


def turns_of(messages: list[ChatMessage]) -> list[tuple[str, str, str]]:
    """(session id, the user's words, the agent's words) of each turn in ``messages``: a turn
    starts at a user message after the agent's words, or in another session; messages without
    text, and system and tool messages, are left out."""
    found: list[_Turn] = []
    for m in messages:
        text, said_by_user = _text(m), m.role is MessageRole.USER
        if not text or not (said_by_user or m.role in AGENT_ROLES):
            continue
        session = str(m.additional_kwargs.get("session_id") or "")
        if not found or found[-1].session != session or (said_by_user and found[-1].agent):
            found.append(_Turn(session))
        (found[-1].user if said_by_user else found[-1].agent).append(text)
    return [(t.session, "\n".join(t.user), "\n".join(t.agent)) for t in found]


def _text(message: ChatMessage) -> str:
    return "".join(b.text for b in message.blocks if isinstance(b, TextBlock))


__all__ = ["AGENT_ID", "RecalleryMemoryBlock", "turns_of"]
