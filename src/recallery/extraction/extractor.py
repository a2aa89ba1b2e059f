"""Validation of an extraction reply: pure functions from the model's text to candidates.

Every reply ends in exactly one of: candidates (possibly after dropping empty items), ``empty``
(valid, nothing to keep), ``unparseable`` (not JSON) or ``invalid`` (JSON of the wrong shape:
not an object, a key that is not an enabled type, an item that is not ``{content, valid_at,
invalid_at}``, more items than the cap). Nothing is guessed: a wrong shape is never read as
"nothing extracted".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from recallery.clock import ensure_utc
from recallery.models import EntryType, Outcome

_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n?(.*?)\n?```$", re.S)


@dataclass(frozen=True)
class Candidate:
    """One validated item of the reply, timestamps normalised to UTC."""

    type: EntryType
    content: str
    valid_at: datetime
    invalid_at: datetime | None = None


@dataclass(frozen=True)
class Parsed:
    """The verdict on a reply: ``outcome`` is ``None`` when ``candidates`` may be used."""

    candidates: tuple[Candidate, ...] = ()
    outcome: Outcome | None = None
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    """What was repaired (dropped empty items, times that fell back); logged on the job."""


def parse_reply(
    text: str,
    enabled: Iterable[EntryType],
    *,
    max_items: int,
    conversation_time: datetime,
) -> Parsed:
    """Validate the model's reply against the memory's ``enabled`` extracted types."""
    try:
        data = json.loads(strip_fence(text))
    except json.JSONDecodeError as exc:
        return Parsed(outcome=Outcome.UNPARSEABLE, problems=(f"reply is not JSON: {exc}",))
    if not isinstance(data, dict):
        return Parsed(
            outcome=Outcome.INVALID, problems=(f"reply is a {_kind(data)}, not an object",)
        )
    allowed: dict[str, EntryType] = {t.value: t for t in enabled if t is not EntryType.RAW}
    problems = [p for key, items in data.items() for p in _shape_problems(key, items, allowed)]
    problems += _cap_problems(data, max_items)
    if problems:
        return Parsed(outcome=Outcome.INVALID, problems=tuple(problems))
    candidates: list[Candidate] = []
    notes: list[str] = []
    for key, items in data.items():
        for index, item in enumerate(items):
            found = _candidate(allowed[key], item, conversation_time, f"{key}[{index}]", notes)
            if found is not None:
                candidates.append(found)
    unique = _distinct(candidates, notes)
    return Parsed(unique, None if unique else Outcome.EMPTY, notes=tuple(notes))


def strip_fence(text: str) -> str:
    """The text inside a surrounding Markdown code fence, or the text itself."""
    stripped = text.strip()
    match = _FENCE.match(stripped)
    return match.group(1).strip() if match else stripped


def normalise_time(value: object) -> datetime | None:
    """An ISO 8601 text (or ``YYYY-MM-DD HH:MM:SS``) as aware UTC; ``None`` if unparsable."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return ensure_utc(datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
    except ValueError:
        return None


def _shape_problems(key: str, items: object, allowed: dict[str, EntryType]) -> list[str]:
    if key not in allowed:
        known = {t.value for t in EntryType.extracted()}
        why = "is not enabled for this memory" if key in known else "is not a memory type"
        return [f"type {key!r} {why}"]
    if not isinstance(items, list):
        return [f"{key} is a {_kind(items)}, not an array"]
    return [p for i, item in enumerate(items) for p in _item_problems(f"{key}[{i}]", item)]


def _item_problems(where: str, item: object) -> list[str]:
    if not isinstance(item, dict):
        return [f"{where} is a {_kind(item)}, not an object"]
    content = item.get("content")
    if content is not None and not isinstance(content, str):
        return [f"{where}.content is a {_kind(content)}, not a string"]
    return []


def _cap_problems(data: dict[str, object], max_items: int) -> list[str]:
    return [
        f"{key} has {len(items)} items, more than the cap of {max_items}"
        for key, items in data.items()
        if isinstance(items, list) and len(items) > max_items
    ]


def _candidate(
    kind: EntryType, item: dict[str, object], fallback: datetime, where: str, notes: list[str]
) -> Candidate | None:
    content = str(item.get("content") or "").strip()
    if not content:
        notes.append(f"{where}: empty content dropped")
        return None
    valid_at = normalise_time(item.get("valid_at"))
    if valid_at is None:
        if item.get("valid_at") not in (None, ""):
            notes.append(
                f"{where}: valid_at {item.get('valid_at')!r} unparsable, conversation time"
            )
        valid_at = fallback
    invalid_at = normalise_time(item.get("invalid_at"))
    if invalid_at is None and item.get("invalid_at") not in (None, ""):
        notes.append(f"{where}: invalid_at {item.get('invalid_at')!r} unparsable, set to null")
    if invalid_at is not None and invalid_at <= valid_at:
        notes.append(f"{where}: invalid_at not after valid_at, set to null")
        invalid_at = None
    return Candidate(kind, content, valid_at, invalid_at)


def _distinct(candidates: Sequence[Candidate], notes: list[str]) -> tuple[Candidate, ...]:
    """Drop repeats of the same statement within one reply (same type, same folded text)."""
    seen: set[tuple[EntryType, str]] = set()
    out: list[Candidate] = []
    for c in candidates:
        key = (c.type, fold(c.content))
        if key in seen:
            notes.append(f"{c.type.value}: repeated item dropped")
            continue
        seen.add(key)
        out.append(c)
    return tuple(out)


def fold(text: str) -> str:
    """Text compared for equality: case-folded, punctuation and extra spaces removed."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def _kind(value: object) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), "number" if isinstance(value, (int, float)) else "null"
    )
