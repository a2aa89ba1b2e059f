"""Input checks shared by every adapter. Each failure names its field and changes nothing."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, TypeVar

from recallery.clock import ensure_utc
from recallery.errors import InvalidInput
from recallery.models import (
    EntryType,
    ForgettingPolicy,
    Fusion,
    JobState,
    Origin,
    Permission,
    Trust,
)

NAME_LIMIT = 128
MEMORY_SIZE_LIMIT = 10 * 1024 * 1024
MAX_IDS = 100
MAX_TOP_N = 100
#: Largest text accepted for one entry (a turn's input and response together).
MAX_CONTENT_BYTES = 256 * 1024
MAX_QUERY_BYTES = 8 * 1024
MAX_ID_TEXT = 256

_MEMORY_ID = re.compile(r"^[0-9a-f]{32}$")
_ASCII_DIGITS = re.compile(r"[0-9]{1,19}")
#: Message ids are the integers every JSON client holds exactly (JavaScript's
#: ``Number.MAX_SAFE_INTEGER``; the stores' 64-bit sequences never come near it). Past 2**53 a
#: client reading numbers as doubles cannot tell two ids apart, nor compare one with the schema's
#: maximum: 2**63 - 1 and 2**63 + 191 are the same double.
MAX_MESSAGE_ID = 2**53 - 1
#: Pages past this are refused (an offset must stay a 64-bit integer in every store).
MAX_PAGE = 10**9


def memory_id(value: object, field: str = "memory_id") -> str:
    if not isinstance(value, str) or not _MEMORY_ID.match(value):
        raise InvalidInput(field, f"{field} must be a 32-character hex id, got {value!r}.")
    return value


def memory_ids(values: object, field: str = "memory_id") -> list[str]:
    """A non-empty list of at most 100 well-formed, distinct memory ids (order kept)."""
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, (list, tuple, set, frozenset)) or not values:
        raise InvalidInput(field, f"{field} is required.")
    if len(values) > MAX_IDS:
        raise InvalidInput(field, f"{field} must contain at most {MAX_IDS} IDs")
    return list(dict.fromkeys(memory_id(v, field) for v in values))


def message_id(value: object, field: str = "message_id") -> int:
    """A non-negative 64-bit integer, or text of ASCII digits holding one."""
    if isinstance(value, str) and _ASCII_DIGITS.fullmatch(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_MESSAGE_ID:
        shown = value if not isinstance(value, str) or len(value) <= 40 else value[:40] + "..."
        raise InvalidInput(field, f"{field} must be a non-negative integer, got {shown!r}.")
    return value


def name(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("name", "Memory name cannot be empty or whitespace.")
    stripped = text(value, "name").strip()
    if len(stripped) > NAME_LIMIT:
        raise InvalidInput("name", f"Memory name '{stripped}' exceeds limit of {NAME_LIMIT}.")
    return stripped


def memory_types(value: object) -> tuple[EntryType, ...]:
    if not isinstance(value, (list, tuple)):
        raise InvalidInput("memory_type", "Memory type must be a list.")
    known = {t.value for t in EntryType}
    bad = [v for v in value if not isinstance(v, str) or v.lower() not in known]
    if bad:  # shown as RAGFlow prints them, a Python set (values may be unhashable here)
        shown = "{" + ", ".join(dict.fromkeys(repr(v) for v in bad)) + "}"
        raise InvalidInput("memory_type", f"Memory type '{shown}' is not supported.")
    chosen = {v.lower() for v in value}
    return tuple(t for t in EntryType if t.value in chosen)


def permission(value: object) -> Permission:
    try:
        return Permission(str(value))
    except ValueError:
        raise InvalidInput("permissions", f"Unknown permission '{value}'.") from None


def memory_size(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MEMORY_SIZE_LIMIT:
        raise InvalidInput(
            "memory_size", f"Memory size should be in range (0, {MEMORY_SIZE_LIMIT}] Bytes."
        )
    return value


def forgetting_policy(value: object) -> ForgettingPolicy:
    try:
        return ForgettingPolicy(str(value))
    except ValueError:
        raise InvalidInput(
            "forgetting_policy", f"Forgetting policy '{value}' is not supported."
        ) from None


def unit_float(value: object, field: str, message: str | None = None) -> float:
    """A number in [0, 1]; strings holding numbers are accepted (query parameters)."""
    text = message or f"{field} should be in range [0, 1]."
    if isinstance(value, bool):
        raise InvalidInput(field, text)
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidInput(field, text) from None
    if not 0.0 <= number <= 1.0:
        raise InvalidInput(field, text)
    return number


def temperature(value: object) -> float:
    """A number in [0, 1] (a JSON number: text holding one is refused)."""
    message = "Temperature should be in range [0, 1]."
    if not isinstance(value, (int, float)):
        raise InvalidInput("temperature", message)
    return unit_float(value, "temperature", message)


def top_n(value: object, field: str = "top_n") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TOP_N:
        raise InvalidInput(field, f"{field} must be between 1 and {MAX_TOP_N}")
    return value


MAX_SPAN = 5


def span(value: object, field: str = "neighbour_span") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SPAN:
        raise InvalidInput(field, f"{field} must be an integer between 0 and {MAX_SPAN}.")
    return value


def text(value: object, field: str, *, limit: int = MAX_CONTENT_BYTES, empty: bool = True) -> str:
    if not isinstance(value, str):
        raise InvalidInput(field, f"{field} must be a string.")
    if not empty and not value.strip():
        raise InvalidInput(field, f"{field} cannot be empty.")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput(field, f"{field} is not valid Unicode (a lone surrogate).") from None
    if size > limit:
        raise InvalidInput(field, f"{field} is larger than {limit} bytes.")
    if "\x00" in value:
        raise InvalidInput(field, f"{field} contains a NUL character.")
    return value


def optional_id_text(value: object, field: str) -> str:
    if value is None:
        return ""
    return text(value, field, limit=MAX_ID_TEXT)


def optional_text(value: object, field: str) -> str | None:
    return None if value is None else text(value, field)


def timestamp(value: object, field: str) -> datetime:
    """A datetime, or ISO 8601 / ``YYYY-MM-DD HH:MM:SS`` text; naive means UTC. It must lie
    in years 1 to 9999 once in UTC (an offset can push the edge days out of range)."""
    try:
        if isinstance(value, datetime):
            return ensure_utc(value)
        if isinstance(value, str):
            return ensure_utc(datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
    except OverflowError:
        raise InvalidInput(field, f"{field} is out of range in UTC, got {value!r}.") from None
    except ValueError:
        pass
    raise InvalidInput(field, f"{field} must be an ISO 8601 time, got {value!r}.")


def page(value: object, field: str = "page") -> int:
    """A page number from 1 to :data:`MAX_PAGE`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE:
        raise InvalidInput(field, f"{field} must be an integer between 1 and {MAX_PAGE}.")
    return value


def offset(value: object, field: str = "offset") -> int:
    """A row offset that every store can hold."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_PAGE**2:
        raise InvalidInput(field, f"{field} must be an integer between 0 and {MAX_PAGE**2}.")
    return value


def optional_timestamp(value: object, field: str) -> datetime | None:
    return None if value is None else timestamp(value, field)


def entry_types(value: object, field: str = "message_type") -> frozenset[EntryType] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [v for v in value.split(",") if v]
    if not isinstance(value, Iterable):
        raise InvalidInput(field, f"{field} must be a list of entry types.")
    out = set()
    for v in value:
        try:
            out.add(EntryType(v))
        except ValueError:
            raise InvalidInput(field, f"Unknown {field} '{v}'.") from None
    return frozenset(out)


def trust_states(
    value: object, field: str = "trust", *, searchable: bool = False
) -> frozenset[Trust] | None:
    """A trust filter: None, one state, comma-separated states or a list of them.
    ``searchable``: only states search can return (rejected entries are never retrieved)."""
    allowed = [t for t in Trust if not (searchable and t is Trust.REJECTED)]
    return _choices(value, field, allowed, "trust states")


def origins(value: object, field: str = "origin") -> frozenset[Origin] | None:
    """An origin filter: None, one origin, comma-separated origins or a list of them."""
    return _choices(value, field, list(Origin), "origins")


_E = TypeVar("_E", bound=enum.StrEnum)


def _choices(value: object, field: str, allowed: list[_E], what: str) -> frozenset[_E] | None:
    """Some of ``allowed``: one, comma-separated, or a list; None or nothing means none."""
    if value is None or value == "":
        return None
    items = [p for p in value.split(",") if p.strip()] if isinstance(value, str) else value
    if not isinstance(items, Iterable) or isinstance(items, (bytes, dict)):
        raise InvalidInput(field, f"{field} must be a list of {what}.")
    out = set()
    for item in items:
        name = item.strip() if isinstance(item, str) else item
        found = next((a for a in allowed if a == name), None)
        if found is None:
            names = ", ".join(f"'{a.value}'" for a in allowed)
            raise InvalidInput(field, f"{field} must be one of {names}, got {item!r}.")
        out.add(found)
    return frozenset(out) if out else None


def job_state(value: object, field: str = "state") -> JobState:
    try:
        return JobState(str(value))
    except ValueError:
        raise InvalidInput(
            field, f"{field} must be one of {[s.value for s in JobState]}, got {value!r}."
        ) from None


def trust_verdict(value: object) -> Trust:
    if value not in (Trust.CONFIRMED.value, Trust.REJECTED.value, Trust.CONFIRMED, Trust.REJECTED):
        raise InvalidInput("verdict", f"verdict must be 'confirmed' or 'rejected', got {value!r}.")
    return Trust(str(value))


def fusion(value: object) -> Fusion:
    try:
        return Fusion(str(value))
    except ValueError:
        raise InvalidInput(
            "fusion", f"fusion must be 'balanced', 'weighted' or 'rrf', got {value!r}."
        ) from None


def boolean(value: object, field: str, message: str | None = None) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(field, message or f"{field} must be a boolean.")
    return value


def only_known(changes: Mapping[str, Any], allowed: Iterable[str], what: str) -> None:
    unknown = sorted(set(changes) - set(allowed))
    if unknown:
        raise InvalidInput(unknown[0], f"Unknown {what} field '{unknown[0]}'.")
