"""Chat completions from any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, ...).

Structured output first: ``response_format`` with a strict ``json_schema``. A server that says
it does not support that (HTTP 400/422 naming the response format) is asked again with
``{"type": "json_object"}``, then with no response format at all; the mode that worked is
remembered for the next call. The client never retries by itself: transient failures raise
:class:`~recallery.errors.ChatError` with ``transient=True`` and the job system retries them
with backoff, so every attempt is visible and counted.
"""

from __future__ import annotations

import re
import threading
import time
from typing import TYPE_CHECKING, Any, Final

from recallery.errors import ChatError
from recallery.extras import install_command
from recallery.providers.base import ChatReply, ChatRequest
from recallery.settings import ProviderConfig

if TYPE_CHECKING:
    import openai

__all__ = ["DEFAULT_TIMEOUT_S", "MODES", "OpenAIChatModel"]

DEFAULT_TIMEOUT_S: Final = 120.0
#: Response formats, most structured first.
MODES: Final = ("json_schema", "json_object", "text")
#: Statuses worth retrying: timeouts, conflicts, rate limits and server errors.
_TRANSIENT_STATUS: Final = frozenset({408, 409, 425, 429})
_FORMAT_COMPLAINT = re.compile(r"response_format|json_schema|json_object|structured", re.I)


class OpenAIChatModel:
    """Calls ``/chat/completions`` of one model at one endpoint."""

    def __init__(
        self, model: str, config: ProviderConfig, *, timeout: float = DEFAULT_TIMEOUT_S
    ) -> None:
        self._model = model
        self._config = config
        self._timeout = timeout
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()
        self.mode = MODES[0]
        """The most structured response format this endpoint accepted so far."""

    @property
    def model_id(self) -> str:
        return self._model

    def complete(self, request: ChatRequest) -> ChatReply:
        modes = MODES[MODES.index(self.mode) :] if request.schema is not None else ("text",)
        calls, latency = 0, 0.0
        for mode in modes:
            calls += 1
            started = time.perf_counter()
            try:
                reply = self._create(request, mode)
            except _FormatRejected:
                latency += time.perf_counter() - started
                continue
            latency += time.perf_counter() - started
            if request.schema is not None:
                self.mode = mode
            return _reply(reply, calls, latency)
        raise ChatError(
            f"{self._config.base_url} rejected every response format {modes}", transient=False
        )

    def _create(self, request: ChatRequest, mode: str) -> Any:
        openai = _openai_package()
        kwargs: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.temperature,
        }
        if mode != "text":
            kwargs["response_format"] = _response_format(request, mode)
        try:
            return self._openai().chat.completions.create(**kwargs)
        except openai.APITimeoutError as exc:
            raise ChatError(
                f"chat call to {self._config.base_url} timed out after {self._timeout:g}s",
                transient=True,
            ) from exc
        except openai.APIConnectionError as exc:
            raise ChatError(f"cannot reach {self._config.base_url}: {exc}", transient=True) from exc
        except openai.APIStatusError as exc:
            raise _status_error(exc, mode, self._config.base_url) from exc

    def _openai(self) -> openai.OpenAI:
        openai = _openai_package()
        with self._lock:
            if self._client is None:
                self._client = openai.OpenAI(
                    base_url=self._config.base_url,
                    api_key=self._config.api_key or "unused",
                    timeout=self._timeout,
                    max_retries=0,
                )
            return self._client


def _openai_package() -> Any:
    """The ``openai`` package (the ``server`` extra), imported on first use."""
    try:
        import openai
    except ImportError as exc:
        raise ChatError(
            f"chat models need the openai package (the server extra): {install_command('server')}",
            transient=False,
        ) from exc
    return openai


class _FormatRejected(Exception):
    """The server does not support the response format just tried."""


def _response_format(request: ChatRequest, mode: str) -> dict[str, Any]:
    if mode == "json_object":
        return {"type": "json_object"}
    assert request.schema is not None
    return {
        "type": "json_schema",
        "json_schema": {"name": request.schema_name, "schema": request.schema, "strict": True},
    }


def _status_error(exc: openai.APIStatusError, mode: str, url: str) -> Exception:
    status = exc.status_code
    detail = _detail(exc)
    if status in (400, 422) and mode != "text" and _FORMAT_COMPLAINT.search(detail):
        return _FormatRejected(detail)
    transient = status >= 500 or status in _TRANSIENT_STATUS
    return ChatError(
        f"chat call to {url} failed with HTTP {status}: {detail}",
        transient=transient,
        status=status,
    )


def _detail(exc: openai.APIStatusError) -> str:
    """The server's own error message (``{"error": {"message": ...}}``), else openai's text."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return str(exc.message)


def _reply(completion: Any, calls: int, latency: float) -> ChatReply:
    choices = getattr(completion, "choices", None) or []
    if not choices:
        raise ChatError("chat reply has no choices", transient=True)
    message = choices[0].message
    usage = getattr(completion, "usage", None)
    return ChatReply(
        text=message.content or "",
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        latency_s=latency,
        calls=calls,
        finish_reason=str(choices[0].finish_reason or ""),
    )
