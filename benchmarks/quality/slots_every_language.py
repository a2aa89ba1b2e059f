"""The current fact first in nine languages (issue 52): a move and a job change through REST.

The data of :mod:`benchmarks.quality.slots_data`: per language one memory, three people, each
saying where they live and what they do in one turn, then changing job, then moving, with chat
between. Every turn is one ``POST /messages`` with its ``user_id``; every question ("where do I
live now?", "where do I work now?", in the language) is searched with the SDK's values
(``rest_locomo.SDK_SEARCH``) filtered by its asker's ``user_id``, at the defaults and with
``supersession=0``. Reported per language and embedder (MiniLM, multilingual-e5-small): R@1 (the
later turn first) and current-first (the later turn above the turn of two facts it replaced).
Usage::

    python -m benchmarks.quality.slots_every_language \
        --out benchmarks/results/slots-every-language.json
"""

from __future__ import annotations

import argparse
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.quality.rest_locomo import E5_EMBD_ID, EMBD_ID, Api, local_embedder, served
from benchmarks.quality.slots_data import LANGUAGES, WORDINGS, conversation
from benchmarks.support import write_json
from recallery.providers.base import Embedder

EMBEDDERS = {"minilm": EMBD_ID, "e5": E5_EMBD_ID}
SETTINGS = {"defaults": {}, "supersession 0": {"supersession": 0.0}}


def write(api: Api, lang: str, wording: str) -> tuple[str, dict[str, int]]:
    """The language's memory and the message id of each labelled turn."""
    memory = api.create_memory(f"slots-{lang}")
    ids = {}
    turns, _ = conversation(lang, wording)
    for s in turns:
        body = {
            "memory_id": [memory],
            "agent_id": "assistant",
            "user_id": s.user,
            "session_id": s.user,
            "user_input": s.text,
            "agent_response": "",
        }
        ids[s.label] = int(api._data(api._client().post("/messages", json=body))[0]["message_id"])
    return memory, ids


def measure(
    api: Api, languages: Sequence[str], wording: str
) -> dict[str, dict[str, dict[str, float]]]:
    """Per setting and language: R@1 and current-first, in per cent."""
    out: dict[str, dict[str, dict[str, float]]] = {s: {} for s in SETTINGS}
    for lang in languages:
        memory, ids = write(api, lang, wording)
        _, asked = conversation(lang, wording)
        for setting, params in SETTINGS.items():
            first = above = 0
            for q in asked:
                found = api.search(memory, q.text, user_id=q.user, **params)
                gold, stale = ids[q.gold], ids[q.stale]
                first += bool(found) and found[0] == gold
                above += gold in found and (
                    stale not in found or found.index(gold) < found.index(stale)
                )
            n = len(asked)
            out[setting][lang] = {"R@1": 100 * first / n, "current-first": 100 * above / n, "n": n}
    return out


def run(
    languages: Sequence[str], fake: Embedder | None = None, wording: str = "first"
) -> dict[str, Any]:
    """Each embedder's measures (``fake``: one embedder for both, the smoke test's)."""
    results = {}
    for name, embd_id in EMBEDDERS.items():
        embedder = fake or local_embedder(model="e5" if name == "e5" else "minilm")
        with served(embedder, embd_id=embd_id) as api:
            results[name] = measure(api, languages, wording)
    revision = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return {
        "revision": revision,
        "wording": wording,
        "languages": list(languages),
        "results": results,
    }


def table(result: Mapping[str, Any]) -> str:
    """R@1 / current-first per language (rows) and embedder and setting (columns)."""
    columns = [(e, s) for e in result["results"] for s in SETTINGS]
    lines = [
        "| language | " + " | ".join(f"{e}, {s}" for e, s in columns) + " |",
        "| --- |" + " --- |" * len(columns),
    ]
    for lang in result["languages"]:
        cells = []
        for e, s in columns:
            m = result["results"][e][s][lang]
            cells.append(f"{m['R@1']:.0f} / {m['current-first']:.0f}")
        lines.append(f"| {lang} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, embedder: Embedder | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    parser.add_argument(
        "--wording", choices=WORDINGS, default="first", help="the statements said otherwise"
    )
    parser.add_argument("--out", type=Path, help="write the result JSON here")
    args = parser.parse_args(argv)
    result = run(args.languages.split(","), embedder, args.wording)
    print(table(result))
    if args.out:
        write_json(args.out, result)
    return result


if __name__ == "__main__":
    main()
