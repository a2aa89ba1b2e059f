"""LoCoMo recall@k for each peer memory system, each in its own process in the peers' venv.

    bash benchmarks/peers/setup.sh                       # once: builds benchmarks/.peers-venv
    python benchmarks/peers/run_locomo.py                # all peers, all 10 conversations
    python benchmarks/peers/run_locomo.py --convs 1-2 --peers mem0-qdrant,chroma-persistent
    python benchmarks/peers/run_locomo.py --mode live    # peers embed inside add/search

Every text is embedded once with recallery's local embedder and cached in benchmarks/.cache/, so
all systems rank identical vectors. Results go to benchmarks/results/ (one JSON per peer and a
summary with the markdown table, which also has plain BM25 and the paper's DRAGON row).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.peers import PEERS_PYTHON, worker_env
from benchmarks.quality.locomo import (
    DEFAULT_DATA,
    BM25Retriever,
    evaluate,
    load_conversations,
    markdown_table,
    select,
    timing_table,
)
from benchmarks.support import REPO, RESULTS, write_json

PEERS = (
    "exact-cosine",
    "mem0-qdrant",
    "mem0-faiss",
    "langgraph-memory",
    "langgraph-sqlite",
    "chroma-persistent",
)


def _worker(python: Path, args: Sequence[str]) -> None:
    command = [str(python), "-m", "benchmarks.peers.worker", *args]
    subprocess.run(command, cwd=REPO, env=worker_env(), check=True)


def _suffix(args: argparse.Namespace) -> str:
    convs = f"-convs{args.convs}" if args.convs else ""
    embedder = "" if args.embedder == "local" else f"-{args.embedder}"
    return f"{args.mode}{convs}{embedder}"


def run_peer(peer: str, args: argparse.Namespace) -> Path:
    """Evaluate one peer in a fresh process and a fresh work folder; return its JSON path."""
    out: Path = args.out_dir / f"locomo-{peer}-{_suffix(args)}.json"
    tmp_root = args.out_dir / "tmp"
    tmp_root.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix=f"{peer}-", dir=tmp_root))
    command = ["--data", str(args.data), "--embedder", args.embedder, "run", peer]
    command += ["--mode", args.mode, "--workdir", str(workdir), "--out", str(out)]
    command += ["--convs", args.convs] if args.convs else []
    try:
        subprocess.run(["sync"], check=True)  # flush the previous peer's files first
        _worker(args.python, command)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return out


def load_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def bm25(args: argparse.Namespace) -> dict[str, Any]:
    conversations = select(load_conversations(args.data), args.convs)
    return {"system": "bm25", **evaluate(BM25Retriever(), conversations)}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="LoCoMo recall@k of peer memory systems.")
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated peer names")
    parser.add_argument("--convs", help='1-based conversations, e.g. "1-2" (default: all 10)')
    parser.add_argument("--mode", default="cached", choices=["cached", "live"])
    parser.add_argument("--embedder", default="local", choices=["local", "hash"])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    parser.add_argument("--python", type=Path, default=PEERS_PYTHON, help="the peers' python")
    args = parser.parse_args(argv)
    args.peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    args.out_dir = args.out_dir.resolve()
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.python.exists():
        sys.exit(f"{args.python} not found: run `bash benchmarks/peers/setup.sh` first")
    # embed (or find in the cache) every vector once, before any peer is timed
    _worker(args.python, ["--data", str(args.data), "--embedder", args.embedder, "embed"])
    results: dict[str, Any] = {"BM25 (k1 1.2, b 0.75)": bm25(args)}
    for peer in args.peers:
        print(f"--- {peer} ({args.mode})", file=sys.stderr, flush=True)
        path = run_peer(peer, args)
        results[peer] = load_json(path)
    table = markdown_table(results) + "\n\n" + timing_table(results)
    summary = write_json(
        args.out_dir / f"locomo-peers-{_suffix(args)}.json", {"table": table, "results": results}
    )
    print(table)
    print(f"wrote {summary}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
