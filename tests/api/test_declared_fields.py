"""Every declared filter and knob reaches every edge: each field of ``MessageFilter`` is a query
parameter of the Messages list in the OpenAPI schema (under its declared wire name), a keyword
of the SDK's ``list_messages`` (the engine's takes the filter itself), and named in
docs/api.md; each field of ``SearchRequest`` is a parameter of the REST search (with its
default where it has one), a field of the context body, a keyword of the SDK's ``search`` and
``context``, and named in docs/api.md."""

from __future__ import annotations

import inspect
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from recallery import client
from recallery.requests import MessageFilter, SearchRequest, message_filter_fields
from recallery.services.entries import EntryService

DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"
#: SearchRequest fields whose wire name is another (RAGFlow's), or that are the request itself.
SEARCH_WIRE = {"query": "query", "memory_ids": "memory_id", "types": "message_type"}


def _parameters(app: FastAPI, path: str) -> dict[str, dict[str, Any]]:
    operation = app.openapi()["paths"][path]["get"]
    return {p["name"]: p for p in operation["parameters"]}


def test_every_message_filter_field_is_declared_with_its_names() -> None:
    declared = message_filter_fields()
    assert [f.name for f in declared] == [f.name for f in fields(MessageFilter)]
    for spec in declared:
        assert spec.metadata["wire"] and spec.metadata["arg"] and spec.metadata["about"], spec


def test_every_message_filter_field_is_a_query_parameter_of_the_list(app: FastAPI) -> None:
    params = _parameters(app, "/api/v1/memories/{memory_id}")
    for spec in message_filter_fields():
        assert spec.metadata["wire"] in params, spec.name
    assert set(params) - {"memory_id", "page", "page_size"} == {
        spec.metadata["wire"] for spec in message_filter_fields()
    }


def test_every_message_filter_field_is_a_keyword_of_the_sdk() -> None:
    sdk = inspect.signature(client.list_messages).parameters
    for spec in message_filter_fields():
        assert spec.metadata["arg"] in sdk, spec.name


def test_the_engine_lists_messages_by_one_message_filter() -> None:
    engine = inspect.signature(EntryService.list_messages).parameters
    assert engine["where"].annotation == "MessageFilter | None"
    names = {spec.metadata["arg"] for spec in message_filter_fields()}
    assert not names & set(engine), "the engine takes the filter, not its fields one by one"


def test_docs_name_every_message_filter_field() -> None:
    text = DOCS.read_text()
    for spec in message_filter_fields():
        assert f"`{spec.metadata['wire']}`" in text, spec.name


def test_every_search_field_is_a_parameter_of_the_rest_search_with_its_default(
    app: FastAPI,
) -> None:
    params = _parameters(app, "/api/v1/messages/search")
    for spec in fields(SearchRequest):
        wire = SEARCH_WIRE.get(spec.name, spec.name)
        assert wire in params, spec.name
        default = spec.default
        if default is not MISSING and default is not None:
            # a query string carries text: a parameter read as text documents "5" for 5
            documented = params[wire]["schema"].get("default")
            assert str(documented) == str(getattr(default, "value", default)), spec.name
            enum = getattr(type(default), "__members__", None)
            if enum is not None:
                assert {m.value for m in enum.values()} <= set(params[wire]["schema"]["enum"])


def test_every_search_field_is_a_field_of_the_context_body(app: FastAPI) -> None:
    schema = app.openapi()["components"]["schemas"]["ContextQuery"]
    for spec in fields(SearchRequest):
        wire = SEARCH_WIRE.get(spec.name, spec.name)
        assert wire in schema["properties"], spec.name
        assert schema["properties"][wire].get("description"), spec.name
    assert set(schema["required"]) == {"query", "memory_id"}


def test_every_search_field_is_a_keyword_of_the_sdk_and_in_the_docs() -> None:
    text = DOCS.read_text()
    for call in (client.search, client.context):
        sdk = inspect.signature(call).parameters
        for spec in fields(SearchRequest):
            wire = SEARCH_WIRE.get(spec.name, spec.name)
            assert spec.name in sdk or wire in sdk, (call.__name__, spec.name)
    for spec in fields(SearchRequest):
        assert f"`{SEARCH_WIRE.get(spec.name, spec.name)}`" in text, spec.name
