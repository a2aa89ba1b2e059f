"""Runs inside the peers' venv: embeds LoCoMo once, or evaluates one peer driver on it.

    python -m benchmarks.peers.worker embed [--embedder local]
    python -m benchmarks.peers.worker run PEER --workdir DIR --out FILE [--mode cached|live]

`benchmarks/peers/run_locomo.py` calls this, one process per peer; run it by hand to debug one.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import sys
import time
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.peers import DRIVERS, driver_factory
from benchmarks.peers.base import PEER_ENV, Item, PeerDriver
from benchmarks.peers.embedding import cached_vectors, locomo_texts, make_embedder
from benchmarks.quality.locomo import (
    DEFAULT_DATA,
    Conversation,
    evaluate,
    load_conversations,
    select,
    turn_text,
)
from benchmarks.support import peak_rss_mb, write_json

REQUIREMENTS = Path(__file__).resolve().parent / "requirements.txt"


class PeerRetriever:
    """Adapts a `PeerDriver` to the LoCoMo `Retriever`: one `add` per session of turns."""

    def __init__(
        self, driver: PeerDriver, vectors: Mapping[str, NDArray[np.float32]] | None
    ) -> None:
        self.driver = driver
        self.vectors = vectors

    def _vector(self, text: str) -> NDArray[np.float32] | None:
        return None if self.vectors is None else self.vectors[text]

    def index(self, conv: Conversation) -> None:
        for session in conv.sessions:
            items = [
                Item(
                    id=f"{conv.sample_id}/{t.dia_id}",
                    user_id=conv.sample_id,
                    session_id=f"{conv.sample_id}/S{session.index}",
                    text=turn_text(t),
                    vector=self._vector(turn_text(t)),
                    speaker=t.speaker,
                    at=t.at,
                )
                for t in session.turns
            ]
            self.driver.add(items)

    def search(self, conv_id: str, question: str, k: int) -> list[str]:
        ids = self.driver.search(conv_id, question, self._vector(question), k)
        return [i.partition("/")[2] for i in ids]

    def close(self) -> None:
        self.driver.close()


def installed_versions() -> dict[str, str | None]:
    """Versions of the pinned peer packages as installed in this venv."""
    names = re.findall(r"^([A-Za-z0-9_.-]+)==", REQUIREMENTS.read_text(), re.M)
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def run_peer(args: argparse.Namespace) -> dict[str, Any]:
    everything = load_conversations(args.data)
    conversations = select(everything, args.convs)
    embedder = make_embedder(args.embedder)
    live = args.mode == "live"
    if live:
        embedder.embed(["warm-up"])  # model load is not part of index time
    vectors = None if live else cached_vectors(embedder, locomo_texts(everything))
    driver = driver_factory(args.peer)(args.workdir, embedder.embed if live else None)
    retriever = PeerRetriever(driver, vectors)
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        result = evaluate(retriever, conversations)
    finally:
        retriever.close()
    return {
        "system": args.peer,
        "mode": args.mode,
        "embedder": embedder.model_id,
        **result,
        "process": {
            "wall_s": round(time.perf_counter() - wall, 2),
            "cpu_s": round(time.process_time() - cpu, 2),
            "peak_rss_mb": peak_rss_mb(),
            "python": platform.python_version(),
            "packages": installed_versions(),
        },
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", default="local", choices=["local", "hash"])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("embed", help="embed every LoCoMo text into the cache")
    run = sub.add_parser("run", help="evaluate one peer")
    run.add_argument("peer", choices=sorted(DRIVERS))
    run.add_argument("--mode", default="cached", choices=["cached", "live"])
    run.add_argument("--convs", help='1-based conversations, e.g. "1-2" (default: all)')
    run.add_argument("--workdir", type=Path, required=True, help="where the peer keeps its files")
    run.add_argument("--out", type=Path, required=True, help="result JSON")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.command == "embed":
        t0 = time.perf_counter()
        texts = locomo_texts(load_conversations(args.data))
        cached_vectors(make_embedder(args.embedder), texts)
        print(f"{len(texts)} LoCoMo texts embedded or cached in {time.perf_counter() - t0:.1f} s")
        return 0
    args.workdir.mkdir(parents=True, exist_ok=True)
    for name, value in {**PEER_ENV, "MEM0_DIR": str(args.workdir / ".mem0")}.items():
        os.environ.setdefault(name, value)  # before the peer's package is imported
    write_json(args.out, run_peer(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
