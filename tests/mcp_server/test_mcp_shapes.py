"""The ``recall`` result is built as JSON directly; it must be what the Recalled model itself
would write, field for field, for every combination of optional fields."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from datetime import timedelta

from pydantic import BaseModel

from recallery import Engine, Memory, SearchRequest
from recallery.mcp import shapes
from recallery.mcp.shapes import Recall, Recalled, recall_result, recalled
from recallery.models import Hit, Principal, Trust


def test_recall_json_is_the_models_own(engine: Engine, alice: Principal, memory: Memory) -> None:
    engine.add_turn(alice, [memory.id], user_input="Berlin, ünïcode", agent_response="ok")
    (hit,) = engine.search(alice, SearchRequest("Berlin", (memory.id,), similarity_threshold=0))
    e, later = hit.entry, hit.entry.valid_at + timedelta(days=1)
    options = {
        "invalid_at": (None, later),
        "user_id": ("", "u-1"),
        "agent_id": ("", "a-1"),
        "session_id": ("", "s-1"),
        "retired_at": (None, later),
        "forget_at": (None, later),
        "trust": (Trust.UNREVIEWED, Trust.CONFIRMED),
        "source_id": (None, 7),
    }
    for values in itertools.product(*options.values()):
        h = Hit(replace(e, **dict(zip(options, values, strict=True))), 0.1234567, 0.2, 0.3)
        built = recalled(h)
        assert built == Recalled.model_validate(built).model_dump(mode="json")
        assert built["current"] is False if values[4] else "current" not in built
        assert (built.get("user_id"), built["score"]) == (values[1] or None, 0.123457)
        assert built.get("trust") == (None if values[6] is Trust.UNREVIEWED else "confirmed")
        assert built.get("source_id") == values[7]
    result = recall_result([hit])
    assert Recall.model_validate(result.structured_content).results[0].id == e.message_id
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]


def _type_lists(schema: object, where: str = "") -> list[str]:
    """Where a schema declares ``"type"`` as a list (not portable across MCP clients)."""
    if isinstance(schema, dict):
        found = [where] if isinstance(schema.get("type"), list) else []
        return found + [p for k, v in schema.items() for p in _type_lists(v, f"{where}/{k}")]
    if isinstance(schema, list):
        return [p for i, v in enumerate(schema) for p in _type_lists(v, f"{where}/{i}")]
    return []


def test_output_schemas_say_null_with_any_of_never_a_type_list() -> None:
    models = [
        m
        for m in vars(shapes).values()
        if isinstance(m, type) and issubclass(m, BaseModel) and m is not BaseModel
    ]
    assert models
    lists = {m.__name__: _type_lists(m.model_json_schema()) for m in models}
    assert {name: where for name, where in lists.items() if where} == {}
    entry = shapes.EntryInfo.model_json_schema()["properties"]
    assert entry["invalid_at"]["anyOf"] == [{"type": "string", "format": "date-time"},
                                           {"type": "null"}]  # fmt: skip
