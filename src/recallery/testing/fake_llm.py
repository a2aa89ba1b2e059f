"""A fake OpenAI-compatible chat server for tests: real HTTP on 127.0.0.1, a random port.

``POST /v1/chat/completions`` answers with scripted replies, in order or from a function of the
request: JSON text, malformed text, an HTTP error, or a reply held back longer than the client
waits. Every request body is recorded (``server.requests``) so tests can assert on prompts.
Token usage is made up but plausible: 1.3 tokens per word of the prompt and of the reply.

    with FakeLLM([Reply.json({"semantic": []}), Reply.http_error(500)]) as llm:
        providers = {"fake": llm.provider()}   # llm_id "any-model@fake"
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from recallery.settings import ProviderConfig

__all__ = ["FakeLLM", "Reply", "count_tokens"]

TOKENS_PER_WORD = 1.3
ALL_FORMATS = frozenset({"json_schema", "json_object", "text"})


def count_tokens(text: str) -> int:
    """The fake's token count: 1.3 per whitespace-separated word, rounded."""
    return round(len(text.split()) * TOKENS_PER_WORD)


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    content: str = ""
    status: int = 200
    delay_s: float = 0.0
    """Seconds to hold the answer back (longer than the client's timeout: a timeout)."""
    finish_reason: str = "stop"

    @classmethod
    def json(cls, data: object) -> Reply:
        return cls(json.dumps(data))

    @classmethod
    def text(cls, content: str) -> Reply:
        return cls(content)

    @classmethod
    def http_error(cls, status: int = 500, message: str = "internal server error") -> Reply:
        return cls(message, status=status)

    @classmethod
    def slow(cls, delay_s: float, content: str = "{}") -> Reply:
        return cls(content, delay_s=delay_s)


Scripted = Reply | str | Mapping[str, Any]
Responder = Callable[[dict[str, Any]], Scripted]


def _as_reply(value: Scripted) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply(value)
    return Reply.json(dict(value))


class FakeLLM:
    """The fake server. Start it with ``with`` (or :meth:`start`); ``url`` ends in ``/v1``."""

    def __init__(
        self,
        script: Iterable[Scripted] | Responder = (),
        *,
        formats: Iterable[str] = ALL_FORMATS,
    ) -> None:
        self._responder: Responder | None = script if callable(script) else None
        self._queue: deque[Reply] = deque(
            () if callable(script) else (_as_reply(s) for s in script)
        )
        self.formats = frozenset(formats)
        """Response formats the server accepts; others get HTTP 400 naming response_format."""
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- scripting ----------------------------------------------------------------------

    def push(self, *replies: Scripted) -> None:
        with self._lock:
            self._queue.extend(_as_reply(r) for r in replies)

    def respond_with(self, responder: Responder) -> None:
        with self._lock:
            self._responder = responder

    @property
    def pending(self) -> int:
        """Scripted replies not yet served."""
        return len(self._queue)

    def chat_requests(self) -> list[dict[str, Any]]:
        """The recorded requests that reached the model (format rejections left out)."""
        return [r for r in self.requests if not r.get("_rejected")]

    # --- lifecycle ----------------------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def provider(self, api_key: str = "test-key") -> ProviderConfig:
        return ProviderConfig(base_url=self.url, api_key=api_key)

    def start(self) -> FakeLLM:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- answering ----------------------------------------------------------------------

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        """(status, JSON body, delay) for one request."""
        wanted = (body.get("response_format") or {}).get("type", "text")
        with self._lock:
            self.requests.append(body)
            if wanted not in self.formats:
                body["_rejected"] = True
                message = f"response_format of type {wanted} is not supported by this server"
                return 400, _error(message, "invalid_request_error"), 0.0
            queued = self._queue.popleft() if self._queue else None
            responder = self._responder
        reply = queued or self._respond(responder, body)
        if reply.status != 200:
            return reply.status, _error(reply.content, "server_error"), reply.delay_s
        return 200, _completion(body, reply), reply.delay_s

    @staticmethod
    def _respond(responder: Responder | None, body: dict[str, Any]) -> Reply:
        """The responder's answer (called outside the lock: it may call the server itself)."""
        if responder is None:
            return Reply.http_error(500, "fake LLM: no scripted reply left")
        return _as_reply(responder(body))

    def hold(self, seconds: float) -> None:
        """Wait up to ``seconds`` (cut short when the server stops)."""
        self._released.wait(seconds)


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
    prompt_tokens, completion_tokens = count_tokens(prompt), count_tokens(reply.content)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _handler_for(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one answer, no 40 ms delayed-ACK stall per request

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, _error(f"no route {self.path}", "not_found"))
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(400, _error("request body is not JSON", "invalid_request_error"))
                return
            status, payload, delay = fake.answer(body)
            if delay:
                fake.hold(delay)
            self._send(status, payload)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (a timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: tests read ``requests`` instead."""

    return Handler
