"""Markdown tables and a latency plot from the result files in benchmarks/results/.

    python -m benchmarks.report [--results DIR] [--plot PATH] [--md PATH]

Reads, and says which are missing (the tables are made from whatever is there):

- `locomo-recallery.json` (`python -m benchmarks.quality.recallery_locomo --out ...`): recallery
  and BM25;
- `locomo-<peer>-cached.json` (`python benchmarks/peers/run_locomo.py`): one per peer;
- `speed.json` (`python -m benchmarks.speed.speed --out ...`): recallery's speed and scale;
- `speed-peers.json` (`python benchmarks/peers/run_speed.py`): the peers', one record per size.

Prints the LoCoMo recall table (with the DRAGON row of the paper) and the speed table, where each
peer's cells carry the ratio to recallery (peer time / recallery time: above 1 is slower), writes
them to `report.md` and plots search p50 latency against store size (`latency.png`, log-log;
live and store-only panels). The plot needs matplotlib (the `bench` extra); without it the
tables are still written.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.quality.locomo import markdown_table
from benchmarks.support import RESULTS

RECALLERY = "recallery"
KINDS = ("live", "store")
_PEER_LOCOMO = re.compile(r"locomo-(?P<peer>.+)-cached\.json")


# --- reading -------------------------------------------------------------------------------------


@dataclass
class Results:
    """The result files found in one folder, and the ones that were not."""

    folder: Path
    missing: list[str] = field(default_factory=list)

    def load(self, name: str, how: str) -> dict[str, Any] | None:
        path = self.folder / name
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            self.missing.append(f"{name} (make it with `{how}`)")
            return None
        except (OSError, ValueError) as exc:
            self.missing.append(f"{name} (unreadable: {exc})")
            return None
        return data

    def peer_locomo(self) -> dict[str, dict[str, Any]]:
        """Peer name -> its cached-vector LoCoMo result, in file-name order."""
        out: dict[str, dict[str, Any]] = {}
        for path in sorted(self.folder.glob("locomo-*-cached.json")):
            m = _PEER_LOCOMO.fullmatch(path.name)
            if m is None or m["peer"] == "peers":
                continue  # the runner's summary file
            data = self.load(path.name, "python benchmarks/peers/run_locomo.py")
            if data is not None and "overall" in data:
                out[m["peer"]] = data
        if not out:
            self.missing.append(
                "locomo-<peer>-cached.json (make them with `python benchmarks/peers/run_locomo.py`)"
            )
        return out


# --- LoCoMo recall -------------------------------------------------------------------------------


def locomo_table(results: Results) -> str | None:
    """Rows: recallery, BM25, the paper's DRAGON, then each peer (all recall in %)."""
    ours = results.load(
        "locomo-recallery.json",
        "python -m benchmarks.quality.recallery_locomo"
        " --out benchmarks/results/locomo-recallery.json",
    )
    peers = results.peer_locomo()
    head: dict[str, Mapping[str, Any]] = {}
    if ours is not None:
        if RECALLERY in ours:
            head[RECALLERY] = ours[RECALLERY]
        if "BM25 baseline" in ours:
            head["BM25 (k1 1.2, b 0.75)"] = ours["BM25 baseline"]
    if not head and not peers:
        return None
    lines = markdown_table(head, paper=True).splitlines()
    if peers:
        lines += markdown_table(peers, paper=False).splitlines()[2:]
    return "\n".join(lines)


# --- speed ---------------------------------------------------------------------------------------


@dataclass
class SizeResult:
    status: str
    p50: dict[str, float | None]
    p95: dict[str, float | None]
    n: dict[str, int]
    """Queries answered, per kind (fewer than asked where the time budget ran out)."""
    asked: int | None = None
    rss_mb: float | None = None
    note: str = ""


@dataclass
class SpeedRow:
    """One system's speed results, whichever file they came from."""

    name: str
    ingest_turns_per_s: float | None
    fill_turns_per_s: float | None
    sizes: dict[int, SizeResult]

    @property
    def rss_mb(self) -> float | None:
        values = [s.rss_mb for s in self.sizes.values() if s.rss_mb is not None]
        return max(values) if values else None


def _search(
    entry: Mapping[str, Any], status: str, rss: float | None = None, note: str = ""
) -> SizeResult:
    searches = {k: entry.get(f"search_{k}") or {} for k in KINDS}
    p50 = {k: s.get("p50_ms") for k, s in searches.items()}
    p95 = {k: s.get("p95_ms") for k, s in searches.items()}
    n = {k: int(s.get("n") or 0) for k, s in searches.items()}
    return SizeResult(status, p50, p95, n, entry.get("queries"), rss, note)


def _fill_rate(fills: Sequence[Mapping[str, Any] | None]) -> float | None:
    done = [f for f in fills if f and f.get("n") and f.get("seconds")]
    if not done:
        return None
    added: float = sum(f["n"] for f in done)
    seconds: float = sum(f["seconds"] for f in done)
    return round(added / seconds, 1)


def recallery_speed(data: Mapping[str, Any]) -> SpeedRow:
    """Read `speed.json` (benchmarks/speed/speed.py)."""
    sizes = {
        int(size): _search(entry, "ok", entry.get("rss_mb"), "")
        for size, entry in data.get("sizes", {}).items()
    }
    fills = [entry.get("fill") for entry in data.get("sizes", {}).values()]
    ingest = (data.get("ingest_single") or {}).get("turns_per_s")
    return SpeedRow(RECALLERY, ingest, _fill_rate(fills), sizes)


def _peer_note(record: Mapping[str, Any]) -> str:
    """Why a size has no (or partial) figures: a smaller size timed out, the fill did, ..."""
    if record.get("status") == "ok":
        return ""
    if record.get("reason"):
        return str(record["reason"])
    fill = record.get("fill") or {}
    if fill and not fill.get("complete"):
        return f"filled {record.get('entries', '?')} in {fill.get('seconds', '?')} s"
    return ""


def peer_speed(data: Mapping[str, Any]) -> list[SpeedRow]:
    """Read `speed-peers.json` (benchmarks/peers/run_speed.py): one row per peer."""
    rows: dict[str, SpeedRow] = {}
    fills: dict[str, list[Mapping[str, Any] | None]] = {}
    for record in data.get("records", []):
        peer = record["peer"]
        ingest = (record.get("ingest_live") or {}).get("turns_per_s")
        row = rows.setdefault(peer, SpeedRow(peer, ingest, None, {}))
        status = str(record.get("status", "?"))
        result = _search(record, status, record.get("rss_mb"), _peer_note(record))
        row.sizes[int(record["size"])] = result
        fills.setdefault(peer, []).append(record.get("fill"))
    for peer, row in rows.items():
        row.fill_turns_per_s = _fill_rate(fills[peer])
    return list(rows.values())


def _ratio(value: float | None, base: float | None) -> str:
    if value is None or not base:
        return ""
    return f"×{value / base:#.2g}" if value / base < 10 else f"×{value / base:.0f}"


def _pair(row: SpeedRow, base: SpeedRow | None, size: int, kind: str) -> str:
    result = row.sizes.get(size)
    if result is None:
        return "–"
    p50, p95 = result.p50[kind], result.p95[kind]
    if p50 is None or p95 is None:
        return result.status + (f" ({result.note})" if result.note else "")
    cell = f"{_num(p50)} / {_num(p95)}"
    ref = base.sizes.get(size) if base is not None else None
    if ref is not None and ref.p50[kind] is not None:
        cell += f" ({_ratio(p50, ref.p50[kind])} / {_ratio(p95, ref.p95[kind])})"
    if result.asked and result.n[kind] < result.asked:
        cell += f" [{result.status} after {result.n[kind]} of {result.asked} queries]"
    return cell


def _num(value: float) -> str:
    """Three significant figures, without exponents."""
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _rate(value: float | None, base: float | None) -> str:
    """A turns/s cell; its ratio is time per turn, so recallery's rate over the peer's."""
    if value is None:
        return "–"
    ratio = "" if base is None else f" ({_ratio(base, value)})"
    return f"{_num(value)}{ratio}"


def _rss(value: float | None, base: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}" + ("" if base is None else f" ({_ratio(value, base)})")


def speed_table(rows: Sequence[SpeedRow]) -> str | None:
    """Rows = systems; ratios in brackets are peer / recallery (time, or memory for RSS)."""
    if not rows:
        return None
    base = next((r for r in rows if r.name == RECALLERY), None)
    sizes = sorted({s for r in rows for s in r.sizes})
    header = ["system", "ingest turns/s (live, 1 per call)", "fill turns/s (store only)"]
    header += [f"{_size(s)} {k} p50 / p95 ms" for s in sizes for k in KINDS]
    # memory at the largest size every system reached, so a 1M-only run does not skew it
    common = max(set.intersection(*(set(r.sizes) for r in rows)), default=None)
    header += [f"RSS MB at {_size(common)}" if common else "peak RSS MB"]
    lines = [header, ["---"] * len(header)]
    for row in rows:
        ref = None if row is base else base
        cells = [row.name]
        cells.append(_rate(row.ingest_turns_per_s, ref.ingest_turns_per_s if ref else None))
        cells.append(_rate(row.fill_turns_per_s, ref.fill_turns_per_s if ref else None))
        cells += [_pair(row, ref, s, k) for s in sizes for k in KINDS]
        lines.append([*cells, _rss(_rss_at(row, common), _rss_at(ref, common) if ref else None)])
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def _rss_at(row: SpeedRow, size: int | None) -> float | None:
    """The row's RSS after the given size, or its peak when no size is common to all."""
    if size is None or size not in row.sizes:
        return row.rss_mb
    return row.sizes[size].rss_mb


def _size(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def speed_rows(results: Results) -> list[SpeedRow]:
    rows: list[SpeedRow] = []
    ours = results.load(
        "speed.json",
        "python -m benchmarks.speed.speed --queries 200 --out benchmarks/results/speed.json",
    )
    if ours is not None:
        rows.append(recallery_speed(ours))
    peers = results.load("speed-peers.json", "python benchmarks/peers/run_speed.py")
    if peers is not None:
        rows += peer_speed(peers)
    return rows


# --- plot ----------------------------------------------------------------------------------------


def plot_latency(rows: Sequence[SpeedRow], path: Path) -> str | None:
    """Search p50 against store size, log-log, live and store-only panels; None if not drawn."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install matplotlib): no plot"
    sizes = sorted({s for row in rows for s in row.sizes})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    for ax, kind, title in zip(axes, KINDS, ("live (query embedded)", "store only"), strict=True):
        for row in rows:
            points = sorted((s, r.p50[kind]) for s, r in row.sizes.items() if r.p50[kind])
            if points:
                xs, ys = zip(*points, strict=True)
                ax.plot(
                    xs, ys, marker="o", label=row.name, linewidth=2 if row.name == RECALLERY else 1
                )
        ax.set(xscale="log", yscale="log", title=f"search p50, {title}", xlabel="entries")
        ax.set_xticks(sizes, [_size(s) for s in sizes], minor=False)
        ax.set_xticks([], minor=True)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("ms per query (k = 10, one user's entries)")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


# --- main ----------------------------------------------------------------------------------------


def build(results: Results) -> tuple[str, list[SpeedRow]]:
    """The markdown report and the speed rows it was made from."""
    parts = ["## LoCoMo evidence recall (%)", locomo_table(results) or "(no LoCoMo results)"]
    rows = speed_rows(results)
    parts += ["## Speed and scale", speed_table(rows) or "(no speed results)"]
    parts.append(
        "Ratios in brackets: peer / recallery for time per turn, per query and for memory "
        "(above 1: the peer is slower or larger)."
    )
    if results.missing:
        parts += ["Missing: " + "; ".join(results.missing)]
    return "\n\n".join(parts) + "\n", rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder of result JSONs")
    parser.add_argument("--plot", type=Path, help="PNG path (default: RESULTS/latency.png)")
    parser.add_argument("--md", type=Path, help="markdown path (default: RESULTS/report.md)")
    args = parser.parse_args(argv)
    results = Results(args.results)
    text, rows = build(results)
    print(text)
    for item in results.missing:
        print(f"missing: {item}", file=sys.stderr)
    md = args.md or args.results / "report.md"
    md.write_text(text, encoding="utf-8")
    plot = args.plot or args.results / "latency.png"
    problem = plot_latency(rows, plot) if rows else "no speed results: no plot"
    print(problem or f"wrote {md} and {plot}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
