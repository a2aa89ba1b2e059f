"""The approximate index builds in a background thread; the process must survive the local
embedder's runtime loading meanwhile (it did not: onnxruntime's native library loaded while
usearch inserted crashed the process with SIGSEGV)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from recallery.store.sqlite.vectors import VectorCache

    rng = np.random.default_rng(0)
    rows = rng.standard_normal((40_000, 384)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    cache = VectorCache(ann_threshold=1_000)
    cache.sync(lambda high: [] if high else [
        (i + 1, "m", rows[i].tobytes()) for i in range(len(rows))
    ])
    time.sleep(0.5)  # the build is under way in its thread
    import onnxruntime  # what the local embedder does on its first use
    while cache.indexed("m") is None:
        time.sleep(0.05)
    print("ok", cache.indexed("m"))
    """
)


@pytest.mark.slow
def test_loading_the_embedding_runtime_during_an_index_build_is_safe() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["ok", "40000"]
