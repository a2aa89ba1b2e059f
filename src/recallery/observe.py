"""What the engine's parts report about their own work, for whoever listens: ``/metrics``
(:mod:`recallery.api.metrics`) and, where the ``otel`` extra is installed and turned on,
OpenTelemetry traces (:mod:`recallery.api.tracing`).

One :class:`Observer` per model registry (so per engine: two apps in a process never share
one). With nobody listening a timer costs two clock reads. Every name reported comes from a
fixed set (:data:`TIMED`, job kinds and outcomes): never user text, ids or memory names.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal, Protocol

from recallery.models import Job, JobKind, JobState
from recallery.requests.usage import Usage

#: What is timed: each step of a search (the query's embedding; the keyword leg, conversation
#: windows included; the gather, the one read of everything else ranking needs: the vector
#: leg, cosines, conversation neighbours, lengths, times and supersession; the ranking
#: stages), a model call, and building the in-process indexes.
Timed = Literal[
    "search.embed",
    "search.keyword",
    "search.gather",
    "search.rank",
    "model.embed",
    "model.chat",
    "warmup",
]
TIMED: tuple[Timed, ...] = Timed.__args__  # type: ignore[attr-defined]
_KINDS = frozenset(k.value for k in JobKind)


class Listener(Protocol):
    """Receives what the parts report (called on the thread that did the work)."""

    def timed(self, what: Timed, seconds: float) -> None: ...

    def batch(self, texts: int, waits: Sequence[float]) -> None:
        """One embedding model call of ``texts`` texts for callers who waited ``waits``
        seconds each in the queue before it began."""

    def job(self, kind: str, outcome: str, seconds: float, tokens: tuple[int, int, int]) -> None:
        """A job's run ended with ``outcome`` after ``seconds``, having made (model calls,
        prompt tokens, completion tokens) in this run."""


class Tracer(Protocol):
    """The part of an OpenTelemetry tracer used here."""

    def start_as_current_span(self, name: str) -> AbstractContextManager[Any]: ...


class Observer:
    """Fans reports out to its listeners, and opens a span per timed step when tracing."""

    def __init__(self) -> None:
        self.listeners: list[Listener] = []
        self.tracer: Tracer | None = None

    def listen(self, listener: Listener) -> None:
        self.listeners.append(listener)

    def timed(self, what: Timed) -> _Timer:
        """A ``with`` block timed as ``what`` (a span of that name while tracing)."""
        return _Timer(self, what)

    def batch(self, texts: int, waits: Sequence[float]) -> None:
        for listener in self.listeners:
            listener.batch(texts, waits)

    def job(self, before: Job, after: Job | None, seconds: float) -> None:
        """A worker ran job ``before`` for ``seconds``; ``after``: its row now (its outcome,
        or ``retry`` while it waits for another attempt; the model calls of this run are
        its usage now less its usage before)."""
        if after is None:
            return
        then, now = Usage.from_result(before.result), Usage.from_result(after.result)
        tokens = (
            now.calls - then.calls,
            now.prompt_tokens - then.prompt_tokens,
            now.completion_tokens - then.completion_tokens,
        )
        outcome = "retry" if after.state == JobState.QUEUED else str(after.outcome or "none")
        kind = before.kind if before.kind in _KINDS else "other"  # a custom handler's kind
        for listener in self.listeners:
            listener.job(kind, outcome, seconds, tokens)


class _Timer:
    __slots__ = ("observer", "span", "started", "what")

    def __init__(self, observer: Observer, what: Timed) -> None:
        self.observer, self.what = observer, what
        self.span: AbstractContextManager[Any] | None = None

    def __enter__(self) -> None:
        tracer = self.observer.tracer
        if tracer is not None:
            self.span = tracer.start_as_current_span(f"recallery.{self.what}")
            self.span.__enter__()
        self.started = time.perf_counter()

    def __exit__(self, *exc: Any) -> None:
        seconds = time.perf_counter() - self.started
        if self.span is not None:
            self.span.__exit__(*exc)
        for listener in self.observer.listeners:
            listener.timed(self.what, seconds)


__all__ = ["TIMED", "Listener", "Observer", "Timed", "Tracer"]
