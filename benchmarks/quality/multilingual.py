"""Every language, measured (issue 52 item 5): keyword and question search in twelve languages
through REST at the defaults, beside MiniLM and beside a plain BM25.

The set is our own (``multilingual_set.json``): per language ten facts and ten distractors,
written as raw turns by three users into one memory, each fact with a word it contains, another
form of that word (a plural, a case, a particle, ال; none for Chinese, Japanese and Thai)
and a paraphrased question in its language and in English. The seven languages of issue 52
first, then Thai (written without spaces between words), Hindi (Devanagari), Spanish, French
and Turkish (whose function words are mostly endings). Per language and system it reports:

- ``keyword_exact``: the fact first when its word is searched with the keyword side alone
  (``keywords_similarity_weight=1``), the word as the fact has it;
- ``keyword_form``: the same with the word's other form (out of the facts that have one);
- ``same_language_top1``: the fact first for the paraphrased question at the REST defaults;
- ``english_top1``: the same for the English question.

Systems: recallery at the REST defaults with each local embedder (``minilm``: the English
all-MiniLM-L6-v2, ``e5``: multilingual-e5-small), and ``bm25``: SQLite FTS5's own bm25 with
its default ``unicode61`` tokenizer over the same turn texts, the query's words OR-ed (what a
store without an analyzer gives).

    python -m benchmarks.quality.multilingual --out benchmarks/results/multilingual.json
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from benchmarks.quality.rest_locomo import serving
from benchmarks.support import write_json
from recallery import Engine
from recallery.providers.base import Embedder
from recallery.providers.registry import ModelRegistry
from recallery.store.sqlite import SQLiteStore

SET = Path(__file__).with_name("multilingual_set.json")
LANGUAGES = ("en", "zh", "ja", "ko", "de", "ru", "ar", "th", "hi", "es", "fr", "tr")
EMBEDDERS = {"minilm": "all-MiniLM-L6-v2@Builtin", "e5": "multilingual-e5-small@Builtin"}
LLM_ID = "none@Unconfigured"
METRICS = ("keyword_exact", "keyword_form", "same_language_top1", "english_top1")


@dataclass(frozen=True)
class Fact:
    text: str
    word: str
    form: str | None
    question: str
    question_en: str


@dataclass(frozen=True)
class Language:
    code: str
    users: tuple[str, ...]
    ack: str
    facts: tuple[Fact, ...]
    distractors: tuple[str, ...]

    def turns(self) -> list[tuple[str, str]]:
        """(user, text) in writing order: facts and distractors interleaved, users in turn."""
        out: list[tuple[str, str]] = []
        for i, fact in enumerate(self.facts):
            out.append((self.users[i % len(self.users)], fact.text))
            if i < len(self.distractors):
                out.append((self.users[(i + 1) % len(self.users)], self.distractors[i]))
        return out


def load(
    path: Path = SET, languages: Sequence[str] = LANGUAGES, facts: int | None = None
) -> list[Language]:
    """The set, limited to ``languages`` and to the first ``facts`` facts and distractors."""
    raw = json.loads(path.read_text("utf-8"))["languages"]
    return [
        Language(
            code,
            tuple(raw[code]["users"]),
            raw[code]["ack"],
            tuple(Fact(**f) for f in raw[code]["facts"][:facts]),
            tuple(raw[code]["distractors"][:facts]),
        )
        for code in languages
    ]


# --- recallery through REST -----------------------------------------------------------------


class Rest:
    """An administrator's calls: one memory per language, turns, searches."""

    def __init__(self, url: str, key: str) -> None:
        self.http = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120
        )
        self.warnings: list[str] = []

    def _data(self, response: httpx.Response) -> Any:
        body = response.json()
        if body.get("code") != 0:
            raise RuntimeError(f"{response.request.url}: {body}")
        self.warnings += body.get("warnings") or []
        return body["data"]

    def memory(self, name: str, embd_id: str) -> str:
        body = {"name": name, "memory_type": ["raw"], "embd_id": embd_id, "llm_id": LLM_ID}
        return str(self._data(self.http.post("/memories", json=body))["id"])

    def add(self, memory: str, user: str, text: str, ack: str) -> int:
        body = {
            "memory_id": [memory],
            "agent_id": "assistant",
            "session_id": f"{user}-1",
            "user_id": user,
            "user_input": text,
            "agent_response": ack,
        }
        return int(self._data(self.http.post("/messages", json=body))[0]["message_id"])

    def first(self, memory: str, query: str, **params: Any) -> int | None:
        sent = {"query": query, "memory_id": memory, **params}
        found = self._data(self.http.get("/messages/search", params=sent))
        return int(found[0]["message_id"]) if found else None


@contextmanager
def served(registry: ModelRegistry) -> Iterator[Rest]:
    with tempfile.TemporaryDirectory(prefix="recallery-multilingual-") as tmp:
        engine = Engine(SQLiteStore(Path(tmp) / "recallery.db"), models=registry)
        try:
            _, key = engine.ensure_admin()
            assert key is not None
            with serving(engine) as url:
                rest = Rest(url, key)
                try:
                    yield rest
                finally:
                    rest.http.close()
        finally:
            engine.close()


def measure_recallery(rest: Rest, embd_id: str, lang: Language) -> dict[str, Any]:
    memory = rest.memory(f"multilingual-{lang.code}-{embd_id}", embd_id)
    ids: dict[str, int] = {}
    for user, text in lang.turns():
        ids[text] = rest.add(memory, user, text, lang.ack)

    def hit(query: str, fact: Fact, **params: Any) -> bool:
        return rest.first(memory, query, **params) == ids[fact.text]

    keyword = {"keywords_similarity_weight": 1.0}
    return _counts(
        lang,
        exact=lambda f: hit(f.word, f, **keyword),
        form=lambda f: f.form is not None and hit(f.form, f, **keyword),
        same=lambda f: hit(f.question, f),
        english=lambda f: hit(f.question_en, f),
    )


# --- plain BM25 -----------------------------------------------------------------------------


def measure_bm25(lang: Language) -> dict[str, Any]:
    """FTS5's bm25 with its default tokenizer (``unicode61``), every query word OR-ed."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE f USING fts5 (content)")
    texts = [f"User Input: {t}\nAgent Response: {lang.ack}" for _, t in lang.turns()]
    db.executemany("INSERT INTO f (rowid, content) VALUES (?, ?)", enumerate(texts))
    position = {t: i for i, (_, t) in enumerate(lang.turns())}

    def hit(query: str, fact: Fact) -> bool:
        words = re.findall(r"\w+", query)
        if not words:
            return False
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = db.execute("SELECT rowid FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT 1", [match])
        first = rows.fetchone()
        return first is not None and first[0] == position[fact.text]

    try:
        return _counts(
            lang,
            exact=lambda f: hit(f.word, f),
            form=lambda f: f.form is not None and hit(f.form, f),
            same=lambda f: hit(f.question, f),
            english=lambda f: hit(f.question_en, f),
        )
    finally:
        db.close()


def _counts(
    lang: Language,
    *,
    exact: Callable[[Fact], bool],
    form: Callable[[Fact], bool],
    same: Callable[[Fact], bool],
    english: Callable[[Fact], bool],
) -> dict[str, Any]:
    """Each metric as found / asked (forms: out of the facts that have one)."""
    with_form = [f for f in lang.facts if f.form is not None]
    return {
        "keyword_exact": [sum(exact(f) for f in lang.facts), len(lang.facts)],
        "keyword_form": [sum(form(f) for f in with_form), len(with_form)],
        "same_language_top1": [sum(same(f) for f in lang.facts), len(lang.facts)],
        "english_top1": [sum(english(f) for f in lang.facts), len(lang.facts)],
    }


# --- the run --------------------------------------------------------------------------------


def run(
    languages: Sequence[Language],
    embedders: Mapping[str, str] = EMBEDDERS,
    registry: ModelRegistry | None = None,
) -> dict[str, Any]:
    """Every system over every language; ``registry`` (default: the real local models)."""
    results: dict[str, dict[str, Any]] = {
        "bm25": {lang.code: measure_bm25(lang) for lang in languages}
    }
    timings: dict[str, float] = {}
    warnings: dict[str, int] = {}
    with served(registry or ModelRegistry()) as rest:
        for name, embd_id in embedders.items():
            started = time.perf_counter()
            before = len(rest.warnings)
            results[name] = {
                lang.code: measure_recallery(rest, embd_id, lang) for lang in languages
            }
            timings[name] = round(time.perf_counter() - started, 2)
            warnings[name] = len(rest.warnings) - before
    return {
        "revision": _revision(),
        "set": SET.name,
        "languages": [lang.code for lang in languages],
        "facts_per_language": {lang.code: len(lang.facts) for lang in languages},
        "embedders": dict(embedders),
        "metrics": list(METRICS),
        "results": results,
        "seconds": timings,
        "write_warnings": warnings,
    }


def _revision() -> str:
    """The commit measured, with ``+dirty`` when the working tree had changes."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], capture_output=True, text=True, cwd=SET.parent)
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+dirty" if git("status", "--porcelain", "--", "../../src") else "")


def table(result: Mapping[str, Any]) -> str:
    """A Markdown table: a row per language and system, found / asked per metric."""
    lines = [
        "| language | system | keyword, exact word | keyword, other form | same-language top-1 "
        "| English question top-1 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for code in result["languages"]:
        for system in (*result["embedders"], "bm25"):
            cells = []
            for metric in METRICS:
                found, asked = result["results"][system][code][metric]
                cells.append(f"{found} / {asked}" if asked else "n/a")
            lines.append(f"| {code} | {system} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, embedder: Embedder | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    parser.add_argument("--facts", type=int, default=None, help="first N facts per language")
    parser.add_argument("--out", default=None, help="where to write the JSON results")
    args = parser.parse_args(argv)
    languages = load(languages=args.languages.split(","), facts=args.facts)
    registry = None
    if embedder is not None:  # the smoke test: one fake for both local models
        registry = ModelRegistry(builtin=lambda: embedder, e5=lambda: embedder)
    result = run(languages, registry=registry)
    if args.out:
        write_json(args.out, result)
    print(table(result))
    return result


if __name__ == "__main__":
    main()
