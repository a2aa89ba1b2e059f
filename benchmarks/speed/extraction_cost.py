"""What extraction costs per turn: 100 scripted turns through the fake OpenAI-compatible server.

    python -m benchmarks.speed.extraction_cost [--turns 100] [--embedder deterministic|local]

Every turn goes through the real path: Engine.add_turn, a Worker, OpenAIChatModel over HTTP to
:class:`recallery.testing.FakeLLM`, validation, consolidation (with judgement calls where a
candidate is close to an existing entry) and the apply transaction. The fake answers the
extraction prompt from a script keyed by the turn's text and judges like a careful model
would (a new city supersedes the old one; anything else is new). Its token counts are made up
(1.3 per word of prompt and reply), so read tokens as relative, not as a bill.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recallery import Engine
from recallery.jobs import Worker, WorkerConfig
from recallery.providers.base import Embedder
from recallery.providers.registry import ModelRegistry
from recallery.store.sqlite import SQLiteStore
from recallery.testing import DeterministicEmbedder, FakeLLM, FrozenClock, Reply

CITIES = ["Lisbon", "Berlin", "Porto", "Vienna", "Oslo"]
LIKES = ["jazz", "green tea", "climbing", "chess", "sourdough", "Rust", "birdwatching", "opera"]
EVENTS = ["ran a half marathon", "visited the dentist", "met Ana for lunch", "fixed the boiler"]
RULES = ["Answer in Portuguese", "Keep answers under 100 words", "Use metric units"]
_TURN = re.compile(r"<<<CONVERSATION\n(.*?)\nCONVERSATION>>>", re.S)
_OPTION = re.compile(r"^(\d+)\. \(valid from [^)]*\) (.*)$", re.M)


@dataclass(frozen=True)
class Turn:
    text: str
    reply: dict[str, list[dict[str, Any]]]


def _reply(semantic: list[str] = (), episodic: list[str] = (), procedural: list[str] = ()):  # type: ignore[assignment]
    def items(texts: list[str]) -> list[dict[str, Any]]:
        return [{"content": t, "valid_at": None, "invalid_at": None} for t in texts]

    return {
        "semantic": items(semantic),
        "episodic": items(episodic),
        "procedural": items(procedural),
    }


def script(turns: int) -> list[Turn]:
    """A deterministic mix: new facts, events, rules, repeats, moves and small talk."""
    out: list[Turn] = []
    for i in range(turns):
        kind = i % 10
        if kind in (0, 1, 2):
            like = LIKES[i % len(LIKES)]
            out.append(Turn(f"I really enjoy {like} ({i}).", _reply([f"The user enjoys {like}"])))
        elif kind == 3:
            city = CITIES[(i // 10) % len(CITIES)]
            out.append(Turn(f"I live in {city} now ({i}).", _reply([f"The user lives in {city}"])))
        elif kind in (4, 5):
            event = EVENTS[i % len(EVENTS)]
            out.append(Turn(f"Yesterday I {event} ({i}).", _reply(episodic=[f"The user {event}"])))
        elif kind == 6:
            rule = RULES[i % len(RULES)]
            out.append(Turn(f"Please: {rule.lower()} ({i}).", _reply(procedural=[rule])))
        elif kind == 7:
            like = LIKES[(i * 3) % len(LIKES)]
            out.append(
                Turn(f"As I said, {like} is my thing ({i}).", _reply([f"The user enjoys {like}"]))
            )
        elif kind == 8:
            out.append(Turn(f"Thanks, that helps ({i}).", _reply()))
        else:
            job = ["nurse", "teacher", "pilot"][i % 3]
            out.append(
                Turn(
                    f"I work as a {job} and I am {20 + i} years old.",
                    _reply([f"The user works as a {job}", f"The user is {20 + i} years old"]),
                )
            )
    return out


class Scripted:
    """The fake model's brain: extraction by turn text, judgement by a simple rule."""

    def __init__(self, turns: list[Turn]) -> None:
        self.replies = {t.text: t.reply for t in turns}
        self.kinds: Counter[str] = Counter()

    def __call__(self, body: dict[str, Any]) -> Reply:
        name = body.get("response_format", {}).get("json_schema", {}).get("name")
        user = body["messages"][-1]["content"]
        if name == "reconcile_decision":
            self.kinds["judgement"] += 1
            return Reply.json(_judge(user))
        self.kinds["extraction"] += 1
        match = _TURN.search(user)
        said = match.group(1).split("\n")[0].removeprefix("User Input: ") if match else ""
        return Reply.json(self.replies.get(said, _reply()))


def _judge(prompt: str) -> dict[str, Any]:
    candidate = prompt.split("): ", 1)[1].split("\n", 1)[0]
    for number, text in _OPTION.findall(prompt):
        same_topic = text.rsplit(" ", 1)[0] == candidate.rsplit(" ", 1)[0]
        if same_topic and candidate.startswith(
            ("The user lives in", "The user is", "The user works")
        ):
            return {"action": "supersedes", "entry": int(number)}
    return {"action": "add", "entry": None}


def embedder(kind: str) -> Embedder:
    if kind == "local":
        from recallery.providers.local import LocalEmbedder

        return LocalEmbedder()
    return DeterministicEmbedder(dimension=256)


def run(turns: int, embedder_kind: str) -> dict[str, Any]:
    plan = script(turns)
    brain = Scripted(plan)
    emb = embedder(embedder_kind)
    clock = FrozenClock()
    with FakeLLM(brain) as llm, tempfile.TemporaryDirectory() as tmp:
        models = ModelRegistry({"fake": llm.provider()}, builtin=lambda: emb)
        engine = Engine(SQLiteStore(Path(tmp) / "bench.db"), models=models, clock=clock)
        actor = engine.principal(engine.create_user("bench").id)
        memory = engine.create_memory(
            actor,
            name="bench",
            memory_type=["raw", "semantic", "episodic", "procedural"],
            embd_id="minilm@Builtin",
            llm_id="scripted@fake",
        )
        worker = Worker(engine, config=WorkerConfig(), owner="bench")
        started = time.perf_counter()
        for turn in plan:
            engine.add_turn(actor, [memory.id], user_input=turn.text, agent_response="Noted.")
            worker.run_until_idle()
            clock.advance(hours=1)
        elapsed = time.perf_counter() - started
        costs = engine.extraction_costs(actor, memory.id)
        counts: Counter[str] = Counter()
        for job in engine.jobs(actor, memory.id, page_size=10_000).items:
            counts.update(job.result.get("counts", {}))
        engine.close()
    return {
        "turns": turns,
        "embedder": embedder_kind,
        "outcomes": dict(costs.outcomes),
        "entries": dict(counts),
        "calls": costs.calls,
        "calls_by_kind": dict(brain.kinds),
        "calls_per_turn": round(costs.calls / turns, 2),
        "prompt_tokens_per_turn": round(costs.prompt_tokens / turns, 1),
        "completion_tokens_per_turn": round(costs.completion_tokens / turns, 1),
        "wall_s": round(elapsed, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--embedder", choices=["deterministic", "local"], default="deterministic")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    report = run(args.turns, args.embedder)
    if args.json:
        print(json.dumps(report))
        return
    for key, value in report.items():
        print(f"{key:28} {value}")


if __name__ == "__main__":
    main()
