"""Speed and scale of each peer memory system, measured as `benchmarks/speed/speed.py` measures
recallery.

    bash benchmarks/peers/setup.sh                       # once: builds benchmarks/.peers-venv
    python benchmarks/peers/run_speed.py                 # all peers at 10k and 100k entries
    python benchmarks/peers/run_speed.py --sizes 10000 --peers mem0-faiss,chroma-persistent

Each peer runs in its own process in the peers' venv (`benchmarks.peers.speed_worker`), with a
fresh work folder and `sync; sleep 3` before it. Every size has a time budget (`--budget`, 10
minutes); a peer past it is recorded as timed out and skips the larger sizes. The worker process
also has a hard timeout, after which the sizes it did not finish are recorded as killed.

Writes benchmarks/results/speed-peers.json: one record per peer and size, plus the host's load
average at start and end (other work on the machine skews the numbers). Records of peers not in
`--peers` are kept from the previous file, so one peer can be rerun alone.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.peers import PEERS_PYTHON, worker_env
from benchmarks.quality.locomo import DEFAULT_DATA
from benchmarks.support import REPO, RESULTS, load_average, write_json

PEERS = (
    "mem0-qdrant",
    "mem0-faiss",
    "langgraph-memory",
    "langgraph-sqlite",
    "chroma-persistent",
)
SETUP_S = 900
"""Hard-timeout slack per worker beyond its size budgets: model load, corpus, live ingest."""


def uptime() -> str:
    """`uptime` as printed, or the load averages where the command is missing."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def settle(seconds: float) -> None:
    """Flush the previous peer's dirty pages, then let the disk go quiet."""
    subprocess.run(["sync"], check=False)
    time.sleep(seconds)


def worker_command(peer: str, workdir: Path, out: Path, args: argparse.Namespace) -> list[str]:
    command = [str(args.python), "-m", "benchmarks.peers.speed_worker", peer]
    command += ["--workdir", str(workdir), "--out", str(out), "--data", str(args.data)]
    command += ["--sizes", ",".join(map(str, args.sizes)), "--budget", str(args.budget)]
    command += ["--queries", str(args.queries), "--writes", str(args.writes)]
    command += ["--late-writes", str(args.late_writes), "--batch", str(args.batch)]
    return [*command, "--embedder", args.embedder]


def run_worker(peer: str, args: argparse.Namespace) -> tuple[dict[str, Any] | None, str | None]:
    """Run one peer's worker; return its report (None if it wrote none) and an error, if any."""
    tmp_root = args.out.parent / "tmp"
    tmp_root.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix=f"speed-{peer}-", dir=tmp_root))
    out = tmp_root / f"speed-{peer}.json"
    out.unlink(missing_ok=True)
    limit = args.budget * len(args.sizes) + SETUP_S
    error = None
    try:
        command = worker_command(peer, workdir, out, args)
        subprocess.run(command, cwd=REPO, env=worker_env(), check=True, timeout=limit)
    except subprocess.TimeoutExpired:
        error = f"killed after {limit:.0f} s (hard timeout)"
    except subprocess.CalledProcessError as exc:
        error = f"worker exited with status {exc.returncode}"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report = json.loads(out.read_text(encoding="utf-8")) if out.exists() else None
    return report, error


def records(
    peer: str, report: dict[str, Any] | None, error: str | None, sizes: Sequence[int]
) -> list[dict[str, Any]]:
    """One record per size: the worker's size entry plus the peer-wide fields."""
    common = {k: v for k, v in (report or {}).items() if k not in ("sizes", "peer")}
    done = {r["size"]: r for r in (report or {}).get("sizes", [])}
    out: list[dict[str, Any]] = []
    for size in sizes:
        entry = done.get(size) or {"size": size, "status": "killed", "reason": error}
        out.append({"peer": peer, **entry, **common, **({"error": error} if error else {})})
    return out


def merge(path: Path, fresh: list[dict[str, Any]], peers: Sequence[str]) -> list[dict[str, Any]]:
    """The previous file's records of other peers, then the fresh ones."""
    if not path.exists():
        return fresh
    old = json.loads(path.read_text(encoding="utf-8")).get("records", [])
    return [r for r in old if r.get("peer") not in peers] + fresh


def _ms(cell: dict[str, Any] | None) -> str:
    if not cell or cell.get("p50_ms") is None:
        return "–"
    return f"{cell['p50_ms']:g} / {cell['p95_ms']:g}"


def summary_table(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown: one row per peer and size."""
    header = ["peer", "size", "status", "ingest turns/s", "fill turns/s", "live p50/p95 ms"]
    header += ["store p50/p95 ms", "RSS MB"]
    lines = [header, ["---"] * len(header)]
    for r in rows:
        ingest = (r.get("ingest_live") or {}).get("turns_per_s")
        fill = (r.get("fill") or {}).get("turns_per_s")
        cells = [r["peer"], str(r["size"]), r["status"], f"{ingest or '–'}", f"{fill or '–'}"]
        cells += [_ms(r.get("search_live")), _ms(r.get("search_store")), f"{r.get('rss_mb', '–')}"]
        lines.append(cells)
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated peer names")
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes")
    parser.add_argument("--budget", type=float, default=600.0, help="seconds per peer per size")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--writes", type=int, default=300, help="single live adds from empty")
    parser.add_argument("--late-writes", type=int, default=100, help="single live adds per size")
    parser.add_argument("--batch", type=int, default=1000, help="items per fill call")
    parser.add_argument("--embedder", default="local", choices=["local", "hash"])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--settle", type=float, default=3.0, help="seconds of quiet after sync")
    parser.add_argument("--out", type=Path, default=RESULTS / "speed-peers.json")
    parser.add_argument("--python", type=Path, default=PEERS_PYTHON, help="the peers' python")
    args = parser.parse_args(argv)
    args.peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    args.sizes = sorted(int(s) for s in args.sizes.split(","))
    args.out = args.out.resolve()
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.python.exists():
        sys.exit(f"{args.python} not found: run `bash benchmarks/peers/setup.sh` first")
    embed = [str(args.python), "-m", "benchmarks.peers.worker", "--data", str(args.data)]
    subprocess.run(
        [*embed, "--embedder", args.embedder, "embed"], cwd=REPO, env=worker_env(), check=True
    )
    meta: dict[str, Any] = {"started": datetime.now(UTC).isoformat(timespec="seconds")}
    meta |= {"uptime_start": uptime(), "loadavg_start": load_average()}
    fresh: list[dict[str, Any]] = []
    for peer in args.peers:
        settle(args.settle)
        print(f"--- {peer} ({uptime()})", file=sys.stderr, flush=True)
        report, error = run_worker(peer, args)
        fresh += records(peer, report, error, args.sizes)
    meta |= {"uptime_end": uptime(), "loadavg_end": load_average()}
    meta |= {"finished": datetime.now(UTC).isoformat(timespec="seconds")}
    meta |= {"host": platform.node(), "cpus": os.cpu_count(), "args": _jsonable(args)}
    rows = merge(args.out, fresh, args.peers)
    write_json(args.out, {"meta": meta, "table": summary_table(rows), "records": rows})
    print(summary_table(rows))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _jsonable(args: argparse.Namespace) -> dict[str, Any]:
    return {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}


if __name__ == "__main__":
    raise SystemExit(main())
