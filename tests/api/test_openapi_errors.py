"""The OpenAPI schema documents every route's error answers with the envelope as their model,
and no 422 (failed checks answer 400 here)."""

from __future__ import annotations

from fastapi import FastAPI

ERRORS = {"400", "401", "403", "404", "409", "413", "500", "502"}


def test_every_operation_documents_its_errors_as_the_envelope(app: FastAPI) -> None:
    schema = app.openapi()
    envelope = schema["components"]["schemas"]["ErrorEnvelope"]
    assert set(envelope["properties"]) == {"code", "message", "data"}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            assert set(responses) >= ERRORS, (method, path)
            assert "422" not in responses, (method, path)
            for status in ERRORS:
                ref = responses[status]["content"]["application/json"]["schema"]["$ref"]
                assert ref.endswith("/ErrorEnvelope"), (method, path, status)
    assert "HTTPValidationError" not in schema["components"]["schemas"]


def test_required_inputs_are_marked_required(app: FastAPI) -> None:
    paths = app.openapi()["paths"]
    search = {
        p["name"]: p.get("required", False)
        for p in paths["/api/v1/messages/search"]["get"]["parameters"]
    }
    assert search["query"] and search["memory_id"] and not search["top_n"]
    create = paths["/api/v1/memories"]["post"]["requestBody"]
    assert create["required"] is True
    body = create["content"]["application/json"]["schema"]
    assert body["$ref"] == "#/components/schemas/NewMemory" and "anyOf" not in body
    update = paths["/api/v1/memories/{memory_id}"]["put"]
    evict = next(p for p in update["parameters"] if p["name"] == "evict")
    assert evict["in"] == "query" and evict["schema"]["type"] == "boolean"
