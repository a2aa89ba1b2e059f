"""The memory page's chart of entries over time: stacked bars per bucket, one colour per type,
as plain geometry the template draws as SVG (no script, no inline style). Pure."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from recallery.requests import Bucket, Timeline

WIDTH = 640
HEIGHT = 160
LEFT = 36
BOTTOM = 20
TOP = 8


@dataclass(frozen=True)
class Bar:
    """One type's part of one bucket's bar."""

    x: float
    y: float
    width: float
    height: float
    kind: str
    count: int
    label: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    bars: tuple[Bar, ...]
    top: int
    """The count the top of the axis stands for."""
    first: str
    last: str
    kinds: tuple[str, ...]
    total: int


def chart(t: Timeline) -> Chart:
    """Stacked bars of ``t``: x by bucket (oldest left), height by count."""
    totals = t.totals
    top = max(max(totals, default=0), 1)
    plot_w, plot_h = WIDTH - LEFT, HEIGHT - BOTTOM - TOP
    slot = plot_w / max(len(t.starts), 1)
    bars: list[Bar] = []
    for i, start in enumerate(t.starts):
        base = float(HEIGHT - BOTTOM)
        for kind, counts in t.counts.items():
            n = counts[i]
            if not n:
                continue
            h = plot_h * n / top
            base -= h
            label = f"{_label(start, t.bucket)}: {n} {kind.value}"
            bars.append(Bar(LEFT + i * slot + 1, base, max(slot - 2, 1), h, kind.value, n, label))
    return Chart(
        WIDTH,
        HEIGHT,
        tuple(bars),
        top,
        _label(t.starts[0], t.bucket) if t.starts else "",
        _label(t.starts[-1], t.bucket) if t.starts else "",
        tuple(k.value for k in t.counts),
        sum(totals),
    )


def _label(start: datetime, bucket: Bucket) -> str:
    return start.strftime("%Y-%m-%d %H:00" if bucket is Bucket.HOUR else "%Y-%m-%d")
