"""A scripted in-process chat model for pure unit tests (no HTTP)."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable

from recallery.errors import ChatError
from recallery.providers.base import ChatReply, ChatRequest
from recallery.testing.fake_llm import count_tokens

Script = str | dict[str, object] | ChatError | Callable[[ChatRequest], str]


class ScriptedChatModel:
    """Answers requests with scripted replies in order: a text, a dict (sent as JSON), a
    :class:`~recallery.errors.ChatError` (raised) or a function of the request. Records every
    request in ``requests``; token usage is counted like :class:`FakeLLM` does."""

    def __init__(self, replies: Iterable[Script] = (), model_id: str = "scripted") -> None:
        self._replies: deque[Script] = deque(replies)
        self._model_id = model_id
        self.requests: list[ChatRequest] = []

    @property
    def model_id(self) -> str:
        return self._model_id

    def push(self, *replies: Script) -> None:
        self._replies.extend(replies)

    def complete(self, request: ChatRequest) -> ChatReply:
        self.requests.append(request)
        if not self._replies:
            raise ChatError("scripted chat model: no reply left", transient=False)
        script = self._replies.popleft()
        if isinstance(script, ChatError):
            raise script
        if isinstance(script, dict):
            text = json.dumps(script)
        elif isinstance(script, str):
            text = script
        else:
            text = script(request)
        prompt = " ".join(m.content for m in request.messages)
        return ChatReply(text, count_tokens(prompt), count_tokens(text), 0.0)
