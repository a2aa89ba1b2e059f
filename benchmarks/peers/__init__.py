"""Drivers for peer memory systems, run in their own venv (benchmarks/.peers-venv)."""

from __future__ import annotations

import importlib

from benchmarks.peers.base import DriverFactory

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
