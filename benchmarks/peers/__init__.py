"""Drivers for peer memory systems, run in their own venv (benchmarks/.peers-venv)."""

from __future__ import annotations

import importlib
import os

from benchmarks.peers.base import DriverFactory
from benchmarks.support import REPO

#: The peers' venv's interpreter (``bash benchmarks/peers/setup.sh`` builds it).
PEERS_PYTHON = REPO / "benchmarks" / ".peers-venv" / "bin" / "python"

DRIVERS: dict[str, str] = {
    "exact-cosine": "benchmarks.peers.exact_peer:exact",
    "mem0-qdrant": "benchmarks.peers.mem0_peer:qdrant",
    "mem0-faiss": "benchmarks.peers.mem0_peer:faiss",
    "langgraph-memory": "benchmarks.peers.langgraph_peer:memory",
    "langgraph-sqlite": "benchmarks.peers.langgraph_peer:sqlite",
    "chroma-persistent": "benchmarks.peers.chroma_peer:persistent",
}
"""Peer name -> "module:factory"; modules are imported only when their driver is asked for."""


def driver_factory(name: str) -> DriverFactory:
    """Import and return the factory of one peer driver."""
    module, _, attr = DRIVERS[name].partition(":")
    factory: DriverFactory = getattr(importlib.import_module(module), attr)
    return factory


def worker_env() -> dict[str, str]:
    """This process's environment with the repository first on ``PYTHONPATH``, for a worker
    started in the peers' venv (which has the peers' packages but not recallery's tree)."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}
