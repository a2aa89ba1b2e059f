"""Fuzz every operation of the OpenAPI schema with schemathesis's default checks: no server
error, every status and body as documented, schema-valid requests accepted and schema-violating
ones refused, undeclared methods answered 405, and requests without the key refused.

Requests carry a valid key (except where a check leaves it out on purpose), and about half of
the schema-valid ones aim at a memory and message that exist, so the fuzzed bodies and query
parameters reach the engine's checks instead of stopping at 404. Bounded to a few examples per
operation so the whole run stays well under a minute.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from recallery import Engine
from recallery.api import create_app
from recallery.providers.registry import ModelRegistry
from recallery.settings import Settings
from recallery.store.sqlite import SQLiteStore
from recallery.testing import DeterministicEmbedder, FrozenClock
from recallery.web.edge.guard import Guard
from recallery.web.edge.throttle import Throttle

pytestmark = pytest.mark.slow

EXAMPLES = 12
KEY = "rc-fuzz-admin-key"
#: Operations whose schema-valid requests may still be refused (400) by state or configuration:
#: only configured embedding providers resolve, ``embd_id`` and ``memory_type`` lock once a
#: memory holds entries, ``memory_size`` may not drop below the bytes held, an import's text
#: must be JSONL records, and stated entries must be of a type the memory keeps (with
#: ``invalid_at`` after ``valid_at``). Every other check runs on them.
STATEFUL = {
    "POST /api/v1/memories",
    "PUT /api/v1/memories/{memory_id}",
    "POST /api/v1/memories/import",
    "POST /api/v1/memories/{memory_id}/import",
    "POST /api/v1/memories/{memory_id}/entries",
}


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
    admin, _ = fuzz_engine.ensure_admin(KEY)
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
    return Seeded(KEY, admin.id, memory.id, entry.message_id)


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


@schema.auth()
class AdminKey:
    """The admin's key on every request, except those a check sends without it."""

    def get(self, case: schemathesis.Case, ctx: schemathesis.AuthContext) -> str:
        return KEY

    def set(self, case: schemathesis.Case, data: str, ctx: schemathesis.AuthContext) -> None:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}


def aim(case: schemathesis.Case, seeded: Seeded) -> None:
    """Point about half of the schema-valid cases at the seeded memory, message and user
    (a schema-violating case keeps its parameters: the violation may be in the path)."""
    params = case.path_parameters
    negative = case.meta is not None and case.meta.generation.mode.is_negative
    if not params or negative or len(repr(case.query)) % 2:
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


def _unthrottled(app: object) -> None:
    """A fresh failure count for each case: the contract of one request with a wrong key is
    401 (throttling, which answers 429 after many from one address, is tested on its own in
    tests/api/test_throttling.py; here every case comes from the same address)."""
    node = getattr(app, "middleware_stack", None)
    while node is not None and not isinstance(node, Guard):
        node = getattr(node, "app", None)
    if node is not None:
        node.throttle = Throttle()


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_every_operation_keeps_its_contract(case: schemathesis.Case, seeded: Seeded) -> None:
    aim(case, seeded)
    _unthrottled(APP)
    stateful = case.operation.label in STATEFUL
    response = case.call_and_validate(
        excluded_checks=[positive_data_acceptance] if stateful else None
    )
    media = {k.lower(): v for k, v in response.headers.items()}.get("content-type", [""])[0]
    if media.startswith("application/json"):
        assert {"code", "message", "data"} <= set(response.json()), response.text[:500]
