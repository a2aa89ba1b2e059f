"""Ports for the models recallery talks to: embedders and chat models."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

Vector = NDArray[np.float32]
"""A 1-d float32 vector; embedders return rows of unit length."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors of a fixed dimension."""

    @property
    def model_id(self) -> str:
        """Stable name of the model, stored with the memory."""
        ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed a batch: returns an array of shape (len(texts), dimension), rows L2-normalised."""
        ...


@runtime_checkable
class QueryEmbedder(Embedder, Protocol):
    """An embedder trained with a separate form for search queries (e5's ``query: ``)."""

    def embed_query(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed search queries; the same shape and norms as :meth:`Embedder.embed`."""
        ...


def embed_query(embedder: Embedder, texts: Sequence[str]) -> NDArray[np.float32]:
    """Vectors of search queries: in the query form where the model has one, else as any text."""
    if isinstance(embedder, QueryEmbedder):
        return embedder.embed_query(texts)
    return embedder.embed(texts)


@dataclass(frozen=True)
class ChatMessage:
    role: str
    """``system``, ``user`` or ``assistant``."""
    content: str


@dataclass(frozen=True)
class ChatRequest:
    """One structured call: the messages, the sampling temperature and the reply's JSON schema.

    ``schema`` is a JSON schema for the reply object (sent as ``response_format`` with
    ``json_schema`` and ``strict``); ``None`` asks for plain text.
    """

    messages: tuple[ChatMessage, ...]
    temperature: float = 0.5
    schema: Mapping[str, Any] | None = None
    schema_name: str = "reply"


@dataclass(frozen=True)
class ChatReply:
    """The model's text with what it cost: HTTP calls made, tokens and wall-clock latency."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    calls: int = 1
    finish_reason: str = ""


@runtime_checkable
class ChatModel(Protocol):
    """A chat model answering one request at a time. Failures raise
    :class:`recallery.errors.ChatError`, whose ``transient`` flag says whether to retry."""

    @property
    def model_id(self) -> str: ...

    def complete(self, request: ChatRequest) -> ChatReply: ...
