"""Fuzz every operation of the OpenAPI schema: no input may cause a server error (5xx).

Requests carry a valid key, and about half of them aim at a memory and message that exist, so
the fuzzed bodies and query parameters reach the engine's checks instead of stopping at 404.
Bounded to a few examples per operation so the whole run stays well under a minute.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from memstrata import Engine
from memstrata.api import create_app
from memstrata.providers.registry import ModelRegistry
from memstrata.settings import Settings
from memstrata.store.sqlite import SQLiteStore
from memstrata.testing import DeterministicEmbedder, FrozenClock

EXAMPLES = 12


@dataclass(frozen=True)
class Seeded:
    key: str
    user_id: str
    memory_id: str
    message_id: int


@pytest.fixture
def fuzz_engine(
    sqlite_store: SQLiteStore, embedder: DeterministicEmbedder, clock: FrozenClock
) -> Iterator[Engine]:
    engine = Engine(sqlite_store, models=ModelRegistry(builtin=lambda: embedder), clock=clock)
    yield engine
    engine.usage.close()


@pytest.fixture
def seeded(fuzz_engine: Engine) -> Seeded:
    APP.state.engine = fuzz_engine
    admin, key = fuzz_engine.ensure_admin()
    assert key is not None
    actor = fuzz_engine.principal(admin.id)
    memory = fuzz_engine.create_memory(
        actor,
        name="fuzz",
        memory_type=["raw", "semantic"],
        embd_id="m@Builtin",
        llm_id="x@Unset",
        memory_size=100_000,
    )
    (entry,) = fuzz_engine.add_turn(
        actor, [memory.id], user_input="seed text", agent_response="ok", agent_id="a"
    )
    return Seeded(key, admin.id, memory.id, entry.message_id)


@schemathesis.serializer("application/x-ndjson")
def _jsonl(ctx: schemathesis.SerializationContext, value: object) -> bytes:
    """Import bodies: text as it is, anything else one JSON value per line."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    items = value if isinstance(value, list) else [value]
    return "".join(json.dumps(item) + "\n" for item in items).encode("utf-8", "surrogatepass")


#: The app is built once for its schema; each test plugs in a fresh engine (``seeded``).
APP = create_app(cast(Engine, None), Settings())
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


def aim(case: schemathesis.Case, seeded: Seeded) -> None:
    """Point about half of the cases at the seeded memory, message and user."""
    params = case.path_parameters
    if not params or len(repr(case.query)) % 2:
        return
    targets: dict[str, object] = {
        "memory_id": seeded.memory_id,
        "message_id": seeded.message_id,
        "user_id": seeded.user_id,
        "tenant_id": seeded.user_id,
    }
    for name, value in targets.items():
        if name in params:
            params[name] = value


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_input_causes_a_server_error(case: schemathesis.Case, seeded: Seeded) -> None:
    aim(case, seeded)
    response = case.call(headers={"Authorization": f"Bearer {seeded.key}"})
    assert response.status_code < 500, (case.as_curl_command(), response.text[:500])
    media = {k.lower(): v for k, v in response.headers.items()}.get("content-type", [""])[0]
    if media.startswith("application/json"):
        assert {"code", "message", "data"} <= set(response.json()), response.text[:500]
