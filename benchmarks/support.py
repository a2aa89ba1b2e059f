"""What every benchmark measures with and writes to, once: where the repository and its
results are, latency quantiles in milliseconds, the process's resident memory, the machine's
load, and result files.

Imports only the standard library and numpy, so the peers' venv (``benchmarks/.peers-venv``,
without recallery) can use it too.
"""

from __future__ import annotations

import json
import math
import os
import resource
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"

Method = Literal["linear", "floor", "rank"]


def quantile_ms(
    seconds: Sequence[float], q: float, method: Method = "linear", digits: int | None = 3
) -> float | None:
    """The ``q``-quantile (0 to 1) of durations in seconds, in ms rounded to ``digits`` (None:
    not rounded); None when there are none.

    - ``linear``: interpolated between the two nearest samples (numpy's default; at 0.5 the
      median);
    - ``floor``: the sample at index ``int(q * n)`` of the sorted ones (the speed benchmark
      and the peers' speed worker, so both sides of the speed table pick alike);
    - ``rank``: the nearest-rank sample, index ``ceil(q * n) - 1`` (the LoCoMo evaluator).

    Each benchmark keeps the method its recorded results were computed with.
    """
    if len(seconds) == 0:
        return None
    if method == "linear":
        value = float(np.percentile(np.asarray(seconds, dtype=float) * 1000, 100 * q))
    else:
        ordered = sorted(seconds)
        at = int(q * len(ordered)) if method == "floor" else math.ceil(q * len(ordered)) - 1
        value = 1000 * ordered[min(len(ordered) - 1, at)]
    return value if digits is None else round(value, digits)


def peak_rss_mb() -> float:
    """The most resident memory this process has had (``ru_maxrss``), in MiB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def rss_mb() -> float:
    """Resident memory now (VmRSS), or the peak where /proc is missing."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return peak_rss_mb()


def load_average() -> list[float]:
    """The machine's 1, 5 and 15 minute load averages, to two places."""
    return [round(x, 2) for x in os.getloadavg()]


def write_json(path: str | Path, payload: Mapping[str, Any]) -> Path:
    """Write results as indented JSON, creating parent folders."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out
