"""Soak: a live ``recallery serve`` under steady write and search load over HTTP.

One memory (raw only) is prefilled with N LoCoMo turns through the import route (timed on its
own), then writer threads post turns (``POST /messages``) and searcher threads search
(``GET /messages/search`` with the ragflow-sdk's defaults: top 10, similarity threshold 0.2,
keyword weight 0.7) for the given time, LoCoMo questions as queries. Reported: requests per
second in all and per route, p50/p95/p99 per route (answered requests with code 0), errors by
route and status, the load generator's CPU time, and, when the script started the server
itself, the server's RSS once up, after the prefill, every few seconds of the load and at the
end (with its growth after the first quarter of the load, the warm-up), and its CPU time during
the load (on a machine shared with the load generator, read both against the cores there are).

Usage::

    python -m benchmarks.speed.soak --seconds 60 --writers 4 --searchers 4 --prefill 2000 \\
        --out benchmarks/results/soak.json

Without ``--url`` it starts its own server (SQLite, worker on, the real local embedder) on a
temporary data directory; with ``--url http://host:port/api/v1 --api-key KEY`` it loads that
server, in a new memory it deletes at the end. ``--request-log off`` starts the script's own
server with ``RECALLERY_REQUEST_LOG=0`` (the request log's cost: run a pair, ``on`` and ``off``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import secrets
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from benchmarks.live_server import LiveServer, client, create_memory, data
from benchmarks.speed.speed import corpus, numbered
from benchmarks.support import load_average, quantile_ms, write_json

WRITE = "POST /messages"
SEARCH = "GET /messages/search"
ROUTES = (WRITE, SEARCH)
#: ragflow-sdk's ``search_message`` defaults.
SEARCH_DEFAULTS: dict[str, float | int] = {
    "similarity_threshold": 0.2,
    "keywords_similarity_weight": 0.7,
    "top_n": 10,
}
IMPORT_BATCH = 250
OWN = "recallery serve started by the script (SQLite, worker on, temporary data directory)"
REQUEST_TIMEOUT_S = 30.0
#: An import batch embeds its 250 turns: over 30 s on two cores busy with other work.
PREFILL_TIMEOUT_S = 180.0
#: RSS readings over the load, and the share of it counted as warm-up.
RSS_SAMPLES, WARM_UP = 30, 0.25


@dataclass
class Tally:
    """Latencies of answered requests and errors, per route; shared by the load threads."""

    seconds: dict[str, list[float]] = field(default_factory=lambda: {r: [] for r in ROUTES})
    errors: dict[str, Counter[str]] = field(default_factory=lambda: {r: Counter() for r in ROUTES})
    hits: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def call(self, route: str, send: Callable[[], httpx.Response]) -> Any:
        """Send one request; its data when answered with code 0, else None (an error)."""
        t0 = time.perf_counter()
        try:
            response = send()
        except httpx.TransportError as exc:
            return self._error(route, type(exc).__name__)
        elapsed = time.perf_counter() - t0
        if response.status_code != 200:
            return self._error(route, f"HTTP {response.status_code}")
        body = response.json()
        if body["code"] != 0:
            return self._error(route, f"code {body['code']}")
        with self.lock:
            self.seconds[route].append(elapsed)
        return body["data"]

    def _error(self, route: str, status: str) -> None:
        with self.lock:
            self.errors[route][status] += 1


@dataclass(frozen=True)
class Load:
    """The memory under load, the texts to write and the questions to ask."""

    memory_id: str
    texts: list[str]
    questions: list[str]


def prefill(http: httpx.Client, load: Load, n: int) -> dict[str, Any]:
    """Import ``n`` distinct turns in JSONL batches; the seconds and turns per second."""
    turns = [
        {"content": text, "session_id": f"prefill-{i // 20}"}
        for i, text in enumerate(numbered(load.texts, n))
    ]
    t0 = time.perf_counter()
    imported = 0
    for start in range(0, n, IMPORT_BATCH):
        jsonl = "".join(json.dumps(t) + "\n" for t in turns[start : start + IMPORT_BATCH])
        sent = http.post(
            f"/memories/{load.memory_id}/import",
            content=jsonl.encode("utf-8"),
            headers={"Content-Type": "application/x-ndjson"},
            timeout=PREFILL_TIMEOUT_S,
        )
        imported += int(data(sent)["imported"])
    seconds = time.perf_counter() - t0
    return {
        "turns": imported,
        "batch": IMPORT_BATCH,
        "seconds": round(seconds, 2),
        "turns_per_s": round(imported / seconds, 1) if imported else None,
    }


def write_turns(
    http: httpx.Client, load: Load, tally: Tally, stop: threading.Event, w: int
) -> None:
    for n in itertools.count():
        if stop.is_set():
            return
        body = {
            "memory_id": [load.memory_id],
            "agent_id": f"soak-writer-{w}",
            "session_id": f"soak-{w}-{n // 20}",
            "user_input": f"{load.texts[(w * 997 + n) % len(load.texts)]} (soak w{w} #{n})",
            "agent_response": "Noted.",
        }
        tally.call(WRITE, partial(http.post, "/messages", json=body))


def search(http: httpx.Client, load: Load, tally: Tally, stop: threading.Event, s: int) -> None:
    for n in itertools.count():
        if stop.is_set():
            return
        query = load.questions[(s * 251 + n) % len(load.questions)]
        params: dict[str, str | float] = {"query": query, "memory_id": load.memory_id}
        params.update(SEARCH_DEFAULTS)
        found = tally.call(SEARCH, partial(http.get, "/messages/search", params=params))
        if found is not None:
            with tally.lock:
                tally.hits.append(len(found))


def run_load(
    url: str, api_key: str, load: Load, seconds: float, writers: int, searchers: int
) -> tuple[Tally, float]:
    """Writer and searcher threads, each with its own connection, for ``seconds``."""
    tally, stop = Tally(), threading.Event()
    jobs = [(write_turns, w) for w in range(writers)] + [(search, s) for s in range(searchers)]

    def worker(job: Callable[..., None], i: int) -> None:
        with client(url, api_key, REQUEST_TIMEOUT_S) as http:
            job(http, load, tally, stop, i)

    threads = [threading.Thread(target=worker, args=j, daemon=True) for j in jobs]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join(REQUEST_TIMEOUT_S + 5)
    return tally, time.perf_counter() - t0


def route_report(tally: Tally, route: str, elapsed: float) -> dict[str, Any]:
    ok = tally.seconds[route]
    errors = sum(tally.errors[route].values())
    out: dict[str, Any] = {
        "requests": len(ok) + errors,
        "per_s": round((len(ok) + errors) / elapsed, 1),
        "ok": len(ok),
        "errors": dict(tally.errors[route]),
    }
    if ok:
        out.update({f"p{q}_ms": quantile_ms(ok, q / 100, "floor") for q in (50, 95, 99)})
    return out


def report(tally: Tally, elapsed: float) -> dict[str, Any]:
    routes = {r: route_report(tally, r, elapsed) for r in ROUTES}
    total = sum(r["requests"] for r in routes.values())
    hits = tally.hits
    return {
        "elapsed_s": round(elapsed, 2),
        "requests": total,
        "per_s": round(total / elapsed, 1),
        "errors": sum(sum(r["errors"].values()) for r in routes.values()),
        "routes": routes,
        "search_hits_mean": round(sum(hits) / len(hits), 2) if hits else None,
    }


@contextmanager
def own_server() -> Iterator[LiveServer]:
    """A fresh ``recallery serve`` on a temporary data directory."""
    with tempfile.TemporaryDirectory(prefix="recallery-soak-") as tmp:
        live = LiveServer(Path(tmp) / "data", secrets.token_urlsafe(24))
        with live:
            yield live


class Probe:
    """The server's RSS and CPU time at each stage, and its RSS every few seconds of the load,
    when the script started it (else nothing)."""

    def __init__(self, server: LiveServer | None) -> None:
        self.server = server
        self.rss_mb: dict[str, float] = {}
        self.cpu_s: dict[str, float] = {}
        self.series: list[tuple[float, float]] = []
        """(seconds into the load, RSS MB)."""

    def mark(self, stage: str) -> None:
        if self.server is not None:
            self.rss_mb[stage] = self.server.rss_mb()
            self.cpu_s[stage] = self.server.cpu_s()

    @contextmanager
    def sampling(self, seconds: float) -> Iterator[None]:
        """Read the RSS about :data:`RSS_SAMPLES` times over a load of ``seconds``."""
        server = self.server
        if server is None:
            yield
            return
        done, start = threading.Event(), time.perf_counter()

        def sample() -> None:
            while True:
                self.series.append((round(time.perf_counter() - start, 1), server.rss_mb()))
                if done.wait(max(seconds / RSS_SAMPLES, 0.5)):
                    return

        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

    def growth(self, seconds: float) -> dict[str, float] | None:
        """RSS once the first :data:`WARM_UP` of the load has passed, at its end, and the
        ratio of the two (the goal: within 1.1)."""
        warm = [mb for t, mb in self.series if t >= WARM_UP * seconds]
        if "end" not in self.rss_mb or not warm:
            return None
        end = self.rss_mb["end"]
        return {"after_warm_up_mb": warm[0], "end_mb": end, "ratio": round(end / warm[0], 3)}

    def cpu_between(self, first: str, last: str) -> float:
        return round(self.cpu_s[last] - self.cpu_s[first], 1)


def soak(
    url: str,
    api_key: str,
    *,
    seconds: float,
    writers: int,
    searchers: int,
    prefill_turns: int,
    server: LiveServer | None = None,
) -> dict[str, Any]:
    """The whole soak against the server at ``url``; ``server``: the one the script started,
    whose RSS and CPU time are read from /proc."""
    texts, questions = corpus()
    probe = Probe(server)
    result: dict[str, Any] = {
        "config": {
            "seconds": seconds,
            "writers": writers,
            "searchers": searchers,
            "prefill": prefill_turns,
            "search": SEARCH_DEFAULTS,
        },
        "cpus": os.cpu_count(),
        "loadavg_start": load_average(),
    }
    probe.mark("started")
    with client(url, api_key, REQUEST_TIMEOUT_S) as http:
        memory_id = create_memory(http, f"soak {secrets.token_hex(4)}", ["raw"])
        load = Load(memory_id, texts, questions)
        result["prefill"] = prefill(http, load, prefill_turns)
        probe.mark("prefilled")
        client_cpu = time.process_time()
        with probe.sampling(seconds):
            tally, elapsed = run_load(url, api_key, load, seconds, writers, searchers)
        result["load"] = report(tally, elapsed)
        result["load"]["client_cpu_s"] = round(time.process_time() - client_cpu, 1)
        probe.mark("end")
        config = data(http.get(f"/memories/{memory_id}/config"))
        result["memory"] = {k: config[k] for k in ("entry_count", "used_bytes", "memory_size")}
        written = result["prefill"]["turns"] + result["load"]["routes"][WRITE]["ok"]
        result["memory"]["evicted"] = written - config["entry_count"]
        data(http.delete(f"/memories/{memory_id}"))
    if server is not None:
        result["rss_mb"] = probe.rss_mb
        result["rss_series_mb"] = probe.series
        result["rss_growth"] = probe.growth(seconds)
        result["load"]["server_cpu_s"] = probe.cpu_between("prefilled", "end")
    result["loadavg_end"] = load_average()
    return result


def table(result: dict[str, Any]) -> str:
    """The result as a readable table."""
    load, fill = result["load"], result["prefill"]
    lines = [
        f"prefill: {fill['turns']} turns in {fill['seconds']} s ({fill['turns_per_s']} turns/s)",
        f"load: {load['elapsed_s']} s, {load['requests']} requests, {load['per_s']} req/s, "
        f"{load['errors']} errors",
        "",
        "| route | requests | req/s | p50 ms | p95 ms | p99 ms | errors |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for route, r in load["routes"].items():
        errors = ", ".join(f"{k}: {n}" for k, n in r["errors"].items()) or "0"
        figures = [r.get(f"p{q}_ms", "–") for q in (50, 95, 99)]
        lines.append(
            f"| {route} | {r['requests']} | {r['per_s']} | "
            + " | ".join(str(f) for f in figures)
            + f" | {errors} |"
        )
    if "rss_mb" in result:
        lines.append("")
        lines.append("server RSS MB: " + ", ".join(f"{k} {v}" for k, v in result["rss_mb"].items()))
        if result.get("rss_growth"):
            g = result["rss_growth"]
            lines.append(
                f"server RSS after warm-up {g['after_warm_up_mb']} MB, at the end {g['end_mb']} MB"
                f" (x{g['ratio']})"
            )
        lines.append(f"server CPU during the load: {load['server_cpu_s']} s")
    lines.append(f"load generator CPU: {load['client_cpu_s']} s")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--searchers", type=int, default=4)
    parser.add_argument("--prefill", type=int, default=2000)
    parser.add_argument("--url", help="a running server's API, e.g. http://127.0.0.1:9380/api/v1")
    parser.add_argument("--api-key", help="the key to use with --url")
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--request-log",
        choices=("on", "off"),
        help="the script's own server with the request log on or off (default: the setting's)",
    )
    args = parser.parse_args(argv)
    if args.url and not args.api_key:
        parser.error("--url needs --api-key")
    if args.url and args.request_log:
        parser.error("--request-log sets up the script's own server: not with --url")
    if args.request_log:  # the server the script starts inherits this environment
        os.environ["RECALLERY_REQUEST_LOG"] = "1" if args.request_log == "on" else "0"
    options = {
        "seconds": args.seconds,
        "writers": args.writers,
        "searchers": args.searchers,
        "prefill_turns": args.prefill,
    }
    if args.url:
        result = {"server": args.url, **soak(args.url, args.api_key, **options)}
    else:
        with own_server() as live:
            result = {"server": OWN, **soak(live.url, live.api_key, server=live, **options)}
        result["request_log"] = os.environ.get("RECALLERY_REQUEST_LOG", "default (on)")
    print(table(result))
    if args.out:
        print(f"wrote {write_json(args.out, result)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
