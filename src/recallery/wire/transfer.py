"""The JSONL export format of a memory, and the plan for importing one. Pure functions.

A file is one JSON object per line. The first line describes the memory::

    {"record": "memory", "format": "recallery.memory", "version": 1,
     "exported_at": "...", "memory": {<the memory's configuration, as the config route>}}

Every other line is one current entry, oldest first, in the message shape of the REST API::

    {"record": "entry", "message_id": 7, "message_type": "raw", "source_id": null,
     "valid_at": "2026-01-01 12:00:00", "content": "...", ...}

Extracted entries name their raw turn in ``source_id``. Import writes the raw turns with their
original conversation time (``valid_at``), user, agent and session, keeps their enable and
forget state, and lets extraction re-derive the rest: extracted lines are counted and
reported, never written. Lines without ``record`` are read as entries, and an entry needs
only ``content``, so conversation logs from elsewhere import too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from recallery import validation as v
from recallery.errors import InvalidInput
from recallery.models import Entry, EntryType, Memory
from recallery.requests import ImportReport
from recallery.wire import entry_dict, iso, memory_dict

FORMAT = "recallery.memory"
VERSION = 1
MAX_RECORDS = 100_000
#: Configuration keys of the header that a new memory is created with.
MEMORY_OPTIONS = (
    "permissions",
    "memory_size",
    "forgetting_policy",
    "temperature",
    "avatar",
    "description",
    "system_prompt",
    "user_prompt",
)


def export_records(memory: Memory, entries: Sequence[Entry], at: datetime) -> list[dict[str, Any]]:
    """The header line and one line per entry, by message id (raw turns before their extracts)."""
    header = {
        "record": "memory",
        "format": FORMAT,
        "version": VERSION,
        "exported_at": iso(at),
        "memory": memory_dict(memory),
    }
    body = [{"record": "entry", **entry_dict(e)} for e in sorted(entries, key=_by_id)]
    return [header, *body]


def _by_id(e: Entry) -> int:
    return e.message_id


def to_jsonl(records: Iterable[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in records)


def parse_jsonl(text: str) -> list[dict[str, Any]]:
    """Records of a JSONL text; blank lines are skipped, a bad line names its number."""
    records: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput("records", f"line {number}: not valid JSON ({exc.msg}).") from exc
        records.append(record)
        if len(records) > MAX_RECORDS:
            raise InvalidInput("records", f"an import holds at most {MAX_RECORDS} records.")
    return records


@dataclass(frozen=True)
class ImportedTurn:
    """A raw turn to write, and the state it had where it came from."""

    content: str
    user_id: str
    agent_id: str
    session_id: str
    valid_at: datetime | None
    old_id: int | None
    enabled: bool
    forgotten: bool


@dataclass(frozen=True)
class ImportPlan:
    memory: Mapping[str, Any] | None
    turns: tuple[ImportedTurn, ...]
    skipped_extracted: int
    already_stored: int = 0
    """Turns left out because the memory imported into holds them already."""


def turn_key(
    content: str, user_id: str, agent_id: str, session_id: str, valid_at: datetime | None
) -> tuple[object, ...]:
    """What makes two raw turns the same turn: text, user, agent, session and conversation
    time to the second (the export's precision, RAGFlow's time format)."""
    second = None if valid_at is None else valid_at.replace(microsecond=0)
    return (content, user_id, agent_id, session_id, second)


def report_dict(r: ImportReport) -> dict[str, Any]:
    return {
        "memory_id": r.memory_id,
        "imported": r.imported,
        "id_map": {str(k): new for k, new in r.id_map.items()},
        "skipped_extracted": r.skipped_extracted,
        "already_stored": r.already_stored,
        "disabled": r.disabled,
        "forgotten": r.forgotten,
    }


def report_from_dict(d: Mapping[str, Any]) -> ImportReport:
    return ImportReport(
        memory_id=d["memory_id"],
        imported=int(d["imported"]),
        id_map={int(k): int(new) for k, new in d["id_map"].items()},
        skipped_extracted=int(d["skipped_extracted"]),
        already_stored=int(d.get("already_stored", 0)),
        disabled=int(d["disabled"]),
        forgotten=int(d["forgotten"]),
    )


def plan_import(records: Iterable[object]) -> ImportPlan:
    """Check every record and sort them into the header, raw turns and skipped extracts."""
    header: Mapping[str, Any] | None = None
    turns: list[ImportedTurn] = []
    skipped = 0
    for number, record in enumerate(records, start=1):
        if number > MAX_RECORDS:
            raise InvalidInput("records", f"an import holds at most {MAX_RECORDS} records.")
        if not isinstance(record, Mapping):
            raise InvalidInput("records", f"record {number}: must be a JSON object.")
        kind = record.get("record", "entry")
        if kind == "memory":
            header = _header(record, number)
        elif kind != "entry":
            raise InvalidInput("records", f"record {number}: unknown record kind {kind!r}.")
        elif _entry_type(record, number) is EntryType.RAW:
            turns.append(_turn(record, number))
        else:
            skipped += 1
    return ImportPlan(header, tuple(turns), skipped)


def _header(record: Mapping[str, Any], number: int) -> Mapping[str, Any]:
    if record.get("format", FORMAT) != FORMAT or record.get("version", VERSION) != VERSION:
        raise InvalidInput(
            "records",
            f"record {number}: unsupported format {record.get('format')!r} "
            f"version {record.get('version')!r} (expected {FORMAT!r} version {VERSION}).",
        )
    memory = record.get("memory")
    if not isinstance(memory, Mapping):
        raise InvalidInput("records", f"record {number}: 'memory' must be an object.")
    return memory


def _entry_type(record: Mapping[str, Any], number: int) -> EntryType:
    value = record.get("message_type", EntryType.RAW.value)
    try:
        return EntryType(value)
    except ValueError:
        raise InvalidInput("records", f"record {number}: unknown message_type {value!r}.") from None


def _turn(record: Mapping[str, Any], number: int) -> ImportedTurn:
    def field_of(name: str) -> str:
        return v.optional_id_text(record.get(name), f"record {number}: {name}")

    old_id = record.get("message_id")
    return ImportedTurn(
        content=v.text(record.get("content"), f"record {number}: content", empty=False),
        user_id=field_of("user_id"),
        agent_id=field_of("agent_id"),
        session_id=field_of("session_id"),
        valid_at=v.optional_timestamp(record.get("valid_at"), f"record {number}: valid_at"),
        old_id=None if old_id is None else v.message_id(old_id, f"record {number}: message_id"),
        enabled=record.get("status", True) is not False,
        forgotten=record.get("forget_at") not in (None, "", "None"),
    )


def memory_arguments(header: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments for ``Engine.create_memory`` from an export's header."""
    args = {k: header.get(k) for k in ("name", "memory_type", "embd_id", "llm_id")}
    args.update({k: header[k] for k in MEMORY_OPTIONS if header.get(k) is not None})
    return args
