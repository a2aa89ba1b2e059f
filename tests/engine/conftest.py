"""Fixtures shared by the engine tests (the engine, users and stores come from the top
conftest.py): a memory that holds raw turns and two extracted types, for curation."""

from __future__ import annotations

import pytest

from recallery import Engine, Memory, Principal


@pytest.fixture
def mem(engine: Engine, alice: Principal) -> Memory:
    return engine.create_memory(
        alice,
        name="curated",
        memory_type=["raw", "semantic", "episodic"],
        embd_id="x@Builtin",
        llm_id="m@nowhere",
    )
