"""LoCoMo retrieval benchmark: loader, recall@k evaluator, BM25 baseline and result tables.

Recall is computed as in the LoCoMo paper (Maharana et al., ACL 2024, `task_eval/evaluation.py`):
each conversation's turns form the pool, the question is the query, and
recall_q = |evidence ∩ top-k dia_ids| / |evidence| (1 for a question with no evidence).

Run: `python -m benchmarks.quality.locomo [--data PATH] [--convs 1-5] [--out results/bm25.json]`.
The data file is read where it lies (CC BY-NC 4.0: never copy it into the repository).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from benchmarks.support import REPO, quantile_ms, write_json

DEFAULT_DATA = REPO.parent / "shared" / "benchmarks" / "locomo" / "locomo10.json"
KS: tuple[int, ...] = (5, 10, 25, 50)
CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
TUNE = range(1, 6)
"""Conversations 1-5 (1-based position in the file) are for tuning; 6-10 are held out."""

DRAGON_PAPER: dict[int, float] = {5: 56.7, 10: 66.2, 25: 76.7, 50: 82.7}
"""LoCoMo paper Table 3, DRAGON retriever over dialog turns, overall recall@k (%)."""
BM25_README: dict[int, float] = {5: 52.7, 10: 59.3, 25: 67.2, 50: 71.4}
"""Plain BM25 on the same definition, as given in shared/benchmarks/locomo/README.md."""


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    blip_caption: str | None
    session: int
    position: int
    """1-based position within the session."""
    at: datetime
    """The session's date-time (UTC)."""


@dataclass(frozen=True)
class Session:
    index: int
    at: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    question: str
    category: int
    evidence: tuple[str, ...]
    answer: str | None


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    number: int
    """1-based position in the data file (1-5 tune, 6-10 held-out)."""
    speakers: tuple[str, str]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def turns(self) -> tuple[Turn, ...]:
        return tuple(t for s in self.sessions for t in s.turns)


# --- loading -------------------------------------------------------------------------------------

_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)
_MONTH_NAMES = (
    "january february march april may june july august september october november december"
)
_MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES.split(), 1)}
_SESSION_KEY = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def parse_datetime(value: str) -> datetime:
    """Parse LoCoMo's "1:56 pm on 8 May, 2023" into an aware UTC datetime."""
    m = _DATE.fullmatch(value.strip())
    if m is None:
        raise ValueError(f"unrecognised LoCoMo date-time: {value!r}")
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    return datetime(int(year), _MONTHS[month.lower()], int(day), h, int(minute), tzinfo=UTC)


def normalise_evidence(raw: Iterable[str]) -> tuple[str, ...]:
    """Split, repair and de-duplicate evidence ids ("D:11:26" -> "D11:26", "D30:05" -> "D30:5")."""
    out: list[str] = []
    for item in raw:
        for part in re.split(r"[;,\s]+", item):
            m = _EVIDENCE.fullmatch(part)
            if m is None:
                continue  # a bare "D" or an empty piece
            dia_id = f"D{int(m.group(1))}:{int(m.group(2))}"
            if dia_id not in out:
                out.append(dia_id)
    return tuple(out)


def _turn(raw: Mapping[str, Any], session: int, position: int, at: datetime) -> Turn:
    return Turn(
        dia_id=raw["dia_id"],
        speaker=raw["speaker"],
        text=raw["text"],
        blip_caption=raw.get("blip_caption") or None,
        session=session,
        position=position,
        at=at,
    )


def _sessions(conv: Mapping[str, Any]) -> tuple[Session, ...]:
    out = []
    for key, turns in conv.items():
        m = _SESSION_KEY.fullmatch(key)
        if m is None:
            continue  # date keys, speaker names; a date key with no session is ignored
        index = int(m.group(1))
        at = parse_datetime(conv[f"{key}_date_time"])
        out.append(
            Session(index, at, tuple(_turn(t, index, i, at) for i, t in enumerate(turns, 1)))
        )
    return tuple(sorted(out, key=lambda s: s.index))


def _question(raw: Mapping[str, Any]) -> Question:
    answer = raw.get("answer", raw.get("adversarial_answer"))
    return Question(
        question=raw["question"],
        category=int(raw["category"]),
        evidence=normalise_evidence(raw.get("evidence", [])),
        answer=None if answer is None else str(answer),
    )


def load_conversations(path: str | Path = DEFAULT_DATA) -> list[Conversation]:
    """Read locomo10.json into typed conversations, in file order."""
    samples = json.loads(Path(path).read_text(encoding="utf-8"))
    return [
        Conversation(
            sample_id=s["sample_id"],
            number=n,
            speakers=(s["conversation"]["speaker_a"], s["conversation"]["speaker_b"]),
            sessions=_sessions(s["conversation"]),
            questions=tuple(_question(q) for q in s["qa"]),
        )
        for n, s in enumerate(samples, 1)
    ]


def select(conversations: Sequence[Conversation], spec: str | None) -> list[Conversation]:
    """Pick conversations by 1-based number: "1-2", "6-10", "1,3,5" or None for all."""
    if not spec:
        return list(conversations)
    wanted: set[int] = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        wanted.update(range(int(lo), int(hi or lo) + 1))
    return [c for c in conversations if c.number in wanted]


def turn_text(turn: Turn) -> str:
    """The text the paper indexes for a turn."""
    text = f'{turn.speaker} said, "{turn.text}"'
    return f"{text} and shared {turn.blip_caption}" if turn.blip_caption else text


# --- evaluation ----------------------------------------------------------------------------------


class Retriever(Protocol):
    """What `evaluate` drives: index each conversation once, then search it."""

    def index(self, conv: Conversation) -> None: ...

    def search(self, conv_id: str, question: str, k: int) -> list[str]:
        """Return dia_ids, best first."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Scored:
    conv: int
    category: int
    recall: dict[int, float]


def recall_at(evidence: Sequence[str], ranked: Sequence[str], k: int) -> float:
    """|evidence ∩ top-k| / |evidence|; 1.0 when there is no evidence."""
    if not evidence:
        return 1.0
    top = set(ranked[:k])
    return sum(1 for e in evidence if e in top) / len(evidence)


def _mean_recall(rows: Sequence[Scored], ks: Sequence[int]) -> dict[str, Any]:
    if not rows:
        return {"n": 0, "recall": {str(k): None for k in ks}}
    recall = {str(k): round(100 * statistics.fmean(r.recall[k] for r in rows), 2) for k in ks}
    return {"n": len(rows), "recall": recall}


def summarise(rows: Sequence[Scored], ks: Sequence[int]) -> dict[str, Any]:
    """Mean recall (%) overall and per category."""
    out = _mean_recall(rows, ks)
    out["by_category"] = {
        str(c): {"name": name, **_mean_recall([r for r in rows if r.category == c], ks)}
        for c, name in CATEGORIES.items()
    }
    return out


def evaluate(
    retriever: Retriever,
    conversations: Sequence[Conversation],
    ks: Sequence[int] = KS,
) -> dict[str, Any]:
    """Index each conversation, ask its questions, and report recall@k and timings."""
    rows: list[Scored] = []
    latencies: list[float] = []
    index_s = index_cpu_s = 0.0
    for conv in conversations:
        t0, c0 = time.perf_counter(), time.process_time()
        retriever.index(conv)
        index_s += time.perf_counter() - t0
        index_cpu_s += time.process_time() - c0
        for q in conv.questions:
            t0 = time.perf_counter()
            ranked = retriever.search(conv.sample_id, q.question, max(ks))
            latencies.append(time.perf_counter() - t0)
            recall = {k: recall_at(q.evidence, ranked, k) for k in ks}
            rows.append(Scored(conv.number, q.category, recall))
    return {
        "ks": list(ks),
        "conversations": [c.sample_id for c in conversations],
        "overall": summarise(rows, ks),
        "splits": {
            "tune": summarise([r for r in rows if r.conv in TUNE], ks),
            "held-out": summarise([r for r in rows if r.conv not in TUNE], ks),
        },
        "timing": {
            "index_s": round(index_s, 3),
            "index_cpu_s": round(index_cpu_s, 3),
            "turns": sum(len(c.turns) for c in conversations),
            "query_p50_ms": quantile_ms(latencies, 0.50, "rank"),
            "query_p95_ms": quantile_ms(latencies, 0.95, "rank"),
        },
    }


# --- BM25 baseline -------------------------------------------------------------------------------

_STOP = """
a an the and or but if of to in on at by for with from as is are was were be been being am do does
did has have had it its this that these those there here what which who whom when where why how i
me my you your he him his she her we us our they them their so not no than then too very can will
would should could about into
"""
STOP_WORDS = frozenset(_STOP.split())
_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens without stop words."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOP_WORDS]


class BM25Index:
    """Okapi BM25 over a fixed list of documents (Lucene's non-negative idf)."""

    def __init__(self, docs: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tf = [Counter(tokenize(d)) for d in docs]
        self.length = [sum(c.values()) for c in self.tf]
        self.avg_length = statistics.fmean(self.length) if docs else 0.0
        df = Counter(term for c in self.tf for term in c)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.postings: dict[str, list[int]] = {}
        for i, c in enumerate(self.tf):
            for term in c:
                self.postings.setdefault(term, []).append(i)

    def scores(self, query: str) -> dict[int, float]:
        out: dict[int, float] = {}
        for term in tokenize(query):
            for i in self.postings.get(term, ()):
                tf = self.tf[i][term]
                norm = self.k1 * (1 - self.b + self.b * self.length[i] / self.avg_length)
                out[i] = out.get(i, 0.0) + self.idf[term] * tf * (self.k1 + 1) / (tf + norm)
        return out

    def top(self, query: str, k: int) -> list[int]:
        scores = self.scores(query)
        return sorted(scores, key=lambda i: (-scores[i], i))[:k]


class BM25Retriever:
    """The paper's pool (one conversation's `turn_text`s) ranked by plain BM25."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._indexes: dict[str, tuple[BM25Index, list[str]]] = {}

    def index(self, conv: Conversation) -> None:
        turns = conv.turns
        index = BM25Index([turn_text(t) for t in turns], self.k1, self.b)
        self._indexes[conv.sample_id] = (index, [t.dia_id for t in turns])

    def search(self, conv_id: str, question: str, k: int) -> list[str]:
        index, ids = self._indexes[conv_id]
        return [ids[i] for i in index.top(question, k)]

    def close(self) -> None:
        self._indexes.clear()


# --- reporting -----------------------------------------------------------------------------------


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _row(name: str, result: Mapping[str, Any], ks: Sequence[int]) -> list[str]:
    overall = result["overall"]["recall"]
    cats = result["overall"]["by_category"]
    held = result.get("splits", {}).get("held-out", {}).get("recall", {})
    return [
        name,
        *(_cell(overall.get(str(k))) for k in ks),
        *(_cell(cats[str(c)]["recall"].get("10")) for c in CATEGORIES),
        _cell(held.get("10")),
    ]


def _paper_row(name: str, figures: Mapping[int, float], ks: Sequence[int]) -> list[str]:
    return [name, *(_cell(figures.get(k)) for k in ks), *(["–"] * (len(CATEGORIES) + 1))]


def markdown_table(
    results: Mapping[str, Mapping[str, Any]], ks: Sequence[int] = KS, paper: bool = True
) -> str:
    """Rows = systems; columns = overall R@k, per-category R@10, held-out R@10 (all in %)."""
    header = [
        "system",
        *(f"R@{k}" for k in ks),
        *(f"{name} R@10" for name in CATEGORIES.values()),
        "held-out R@10",
    ]
    rows = [_row(name, r, ks) for name, r in results.items()]
    if paper:
        rows.append(_paper_row("DRAGON (paper, Table 3)", DRAGON_PAPER, ks))
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def timing_table(results: Mapping[str, Mapping[str, Any]]) -> str:
    """Rows = systems; index wall/CPU seconds, query p50/p95 ms, peak RSS of the process."""
    header = ["system", "index s", "index CPU s", "query p50 ms", "query p95 ms", "peak RSS MB"]
    rows = []
    for name, r in results.items():
        t, rss = r["timing"], r.get("process", {}).get("peak_rss_mb")
        cells = [t["index_s"], t.get("index_cpu_s"), t["query_p50_ms"], t["query_p95_ms"], rss]
        rows.append([name, *("–" if c is None else f"{c:g}" for c in cells)])
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="LoCoMo recall@k of the plain BM25 baseline.")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="path to locomo10.json")
    parser.add_argument("--convs", help='1-based conversations, e.g. "1-5" (default: all)')
    parser.add_argument("--out", type=Path, help="write the result JSON here")
    args = parser.parse_args(argv)
    conversations = select(load_conversations(args.data), args.convs)
    result = {"system": "bm25", **evaluate(BM25Retriever(), conversations)}
    print(markdown_table({"BM25 (k1 1.2, b 0.75)": result}))
    if args.out:
        print(f"wrote {write_json(args.out, result)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
