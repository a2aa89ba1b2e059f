"""Metering of chat model calls as they are made: a :class:`Meter` is the running totals of
:class:`recallery.requests.usage.Usage` that also counts each call through a chat model, a
failed one included. The totals themselves are plain data among the typed results (issue 56);
``Usage`` is importable from here too."""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from time import perf_counter

from recallery.errors import ChatError
from recallery.providers.base import ChatModel, ChatReply, ChatRequest
from recallery.requests.usage import Usage


@dataclass
class Meter(Usage):
    """The totals of one running job or statement, counting each call as it is made."""

    def add(self, reply: ChatReply) -> None:
        self.calls += reply.calls
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.latency_ms += round(reply.latency_s * 1000)

    def call(self, chat: ChatModel, request: ChatRequest) -> ChatReply:
        """Call the model; its cost is counted whether or not the reply is any good (a call
        that fails counts, with the time it took and the tokens it did not report)."""
        started = perf_counter()
        try:
            reply = chat.complete(request)
        except ChatError:
            self.calls += 1
            self.latency_ms += ceil((perf_counter() - started) * 1000)
            raise
        self.add(reply)
        return reply


__all__ = ["Meter", "Usage"]
