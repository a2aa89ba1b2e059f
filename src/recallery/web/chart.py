"""The memory page's chart of entries over time: stacked bars per bucket, one colour per type,
as plain geometry the template draws as SVG (no script, no inline style). Pure."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from recallery.requests import Bucket, Timeline, TimelineClock

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
    href: str
    """The Messages page filtered to the turns of this bar's span (by the chart's clock)."""


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


def chart(t: Timeline, memory_id: str) -> Chart:
    """Stacked bars of ``t``: x by bucket (oldest left), height by count; each links to the
    memory's turns of its span."""
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
            href = _span(memory_id, t.clock, start, start + t.bucket.width)
            x, w = LEFT + i * slot + 1, max(slot - 2, 1)
            bars.append(Bar(x, base, w, h, kind.value, n, label, href))
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


def _span(memory_id: str, clock: TimelineClock, start: datetime, end: datetime) -> str:
    """The Messages page of the turns recorded (or valid) from ``start`` to ``end``."""
    names = ("valid_since", "valid_before") if clock is TimelineClock.VALID else None
    since, before = names or ("recorded_since", "recorded_before")
    span = urlencode({since: start.isoformat(), before: end.isoformat()})
    return f"/memories/{memory_id}/messages?{span}"


def _label(start: datetime, bucket: Bucket) -> str:
    return start.strftime("%Y-%m-%d %H:00" if bucket is Bucket.HOUR else "%Y-%m-%d")
