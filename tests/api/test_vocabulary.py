"""The search vocabulary is declared once: each edge shows the same fusion methods and the same
default as the engine's ``SearchRequest`` (a drifted enum kept schema-driven clients from ever
sending the default)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI

from recallery.models import Fusion
from recallery.requests import DEFAULT_FUSION, SearchRequest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def _fusion_schemas(schema: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """Every ``fusion`` query parameter or body property of the OpenAPI schema: its schema and
    its description."""
    found: list[tuple[dict[str, Any], str]] = []
    for operations in schema["paths"].values():
        for op in operations.values():
            found += [
                (p["schema"], p.get("description", ""))
                for p in op.get("parameters", [])
                if p["name"] == "fusion"
            ]
    for component in schema["components"]["schemas"].values():
        prop = component.get("properties", {}).get("fusion")
        if prop is not None:
            found.append((prop, prop.get("description", "")))
    return found


def test_every_fusion_and_the_default_are_in_the_openapi_schema(app: FastAPI) -> None:
    assert SearchRequest("q", ("m",)).fusion is DEFAULT_FUSION
    schemas = _fusion_schemas(app.openapi())
    assert len(schemas) >= 3  # search's and context's query parameters, the context body
    for schema, description in schemas:
        assert {f.value for f in Fusion} <= set(schema["enum"]), schema
        assert f"(default {DEFAULT_FUSION.value})" in description, schema
        assert schema.get("default", DEFAULT_FUSION.value) == DEFAULT_FUSION.value


def test_docs_name_every_fusion_and_the_default() -> None:
    text = DOCS.read_text()
    for fusion in Fusion:
        assert f"`{fusion.value}`" in text, fusion
    assert f"`{DEFAULT_FUSION.value}`, the default" in text
