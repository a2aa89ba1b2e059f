"""The OpenAI-compatible chat client against the fake server: structured output, fallbacks,
usage, and errors classified as transient or not."""

from __future__ import annotations

import pytest

from recallery.errors import ChatError
from recallery.providers.base import ChatMessage, ChatModel, ChatRequest
from recallery.providers.chat import OpenAIChatModel
from recallery.testing import FakeLLM, Reply, ScriptedChatModel
from recallery.testing.fake_llm import count_tokens

SCHEMA = {
    "type": "object",
    "properties": {"semantic": {"type": "array", "items": {"type": "string"}}},
    "required": ["semantic"],
    "additionalProperties": False,
}
REQUEST = ChatRequest(
    messages=(ChatMessage("system", "Output JSON."), ChatMessage("user", "I live in Berlin.")),
    temperature=0.3,
    schema=SCHEMA,
    schema_name="facts",
)


def model(llm: FakeLLM, timeout: float = 5.0) -> OpenAIChatModel:
    return OpenAIChatModel("some-model", llm.provider(), timeout=timeout)


def test_structured_output_is_asked_with_a_strict_json_schema(llm: FakeLLM) -> None:
    llm.push(Reply.json({"semantic": ["The user lives in Berlin"]}))
    reply = model(llm).complete(REQUEST)
    assert reply.text == '{"semantic": ["The user lives in Berlin"]}'
    (sent,) = llm.requests
    assert sent["model"] == "some-model"
    assert sent["temperature"] == 0.3
    assert sent["messages"] == [
        {"role": "system", "content": "Output JSON."},
        {"role": "user", "content": "I live in Berlin."},
    ]
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "facts", "schema": SCHEMA, "strict": True},
    }


def test_usage_and_latency_are_reported(llm: FakeLLM) -> None:
    llm.push(Reply.text("one two three"))
    reply = model(llm).complete(REQUEST)
    assert reply.prompt_tokens == count_tokens("Output JSON. I live in Berlin.") == 8
    assert reply.completion_tokens == count_tokens("one two three") == 4
    assert reply.calls == 1
    assert reply.latency_s > 0
    assert reply.finish_reason == "stop"


def test_a_server_without_json_schema_is_asked_for_a_json_object(llm: FakeLLM) -> None:
    llm.formats = frozenset({"json_object", "text"})
    llm.push(Reply.json({"semantic": []}), Reply.json({"semantic": ["x"]}))
    chat = model(llm)
    first = chat.complete(REQUEST)
    assert first.text == '{"semantic": []}'
    assert first.calls == 2
    assert [r.get("response_format", {}).get("type") for r in llm.requests] == [
        "json_schema",
        "json_object",
    ]
    second = chat.complete(REQUEST)  # the working mode is remembered
    assert second.calls == 1
    assert llm.requests[-1]["response_format"] == {"type": "json_object"}


def test_a_server_without_response_format_gets_plain_text(llm: FakeLLM) -> None:
    llm.formats = frozenset({"text"})
    llm.push(Reply.text('{"semantic": []}'))
    reply = model(llm).complete(REQUEST)
    assert reply.calls == 3
    assert "response_format" not in llm.requests[-1]
    assert len(llm.chat_requests()) == 1


def test_http_500_is_a_transient_error(llm: FakeLLM) -> None:
    llm.push(Reply.http_error(500, "model crashed"))
    with pytest.raises(ChatError) as caught:
        model(llm).complete(REQUEST)
    assert caught.value.transient is True
    assert caught.value.status == 500
    assert "HTTP 500" in str(caught.value) and "model crashed" in str(caught.value)
    assert len(llm.requests) == 1  # the client itself never retries


def test_a_rate_limit_is_transient_and_a_bad_key_is_not(llm: FakeLLM) -> None:
    llm.push(Reply.http_error(429, "slow down"), Reply.http_error(401, "bad key"))
    with pytest.raises(ChatError) as limited:
        model(llm).complete(REQUEST)
    assert limited.value.transient is True
    with pytest.raises(ChatError) as refused:
        model(llm).complete(REQUEST)
    assert (refused.value.transient, refused.value.status) == (False, 401)


def test_a_reply_slower_than_the_timeout_is_a_transient_error(llm: FakeLLM) -> None:
    llm.push(Reply.slow(10.0))
    with pytest.raises(ChatError) as caught:
        model(llm, timeout=0.3).complete(REQUEST)
    assert caught.value.transient is True
    assert "timed out after 0.3s" in str(caught.value)


def test_an_unreachable_server_is_a_transient_error() -> None:
    with FakeLLM() as gone:
        provider = gone.provider()
    chat = OpenAIChatModel("m", provider, timeout=2.0)
    with pytest.raises(ChatError) as caught:
        chat.complete(REQUEST)
    assert caught.value.transient is True


def test_fakes_follow_the_chat_model_port(llm: FakeLLM) -> None:
    scripted = ScriptedChatModel([{"semantic": []}, ChatError("down", transient=True)])
    assert isinstance(scripted, ChatModel)
    assert isinstance(model(llm), ChatModel)
    assert scripted.complete(REQUEST).text == '{"semantic": []}'
    with pytest.raises(ChatError):
        scripted.complete(REQUEST)
    assert len(scripted.requests) == 2


def test_the_fake_answers_from_a_function_of_the_request() -> None:
    with FakeLLM(lambda body: Reply.text(body["messages"][-1]["content"].upper())) as echo:
        assert model(echo).complete(REQUEST).text == "I LIVE IN BERLIN."
