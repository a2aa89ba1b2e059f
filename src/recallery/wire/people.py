"""The People listing on the wire, both ways: a page of users, agents or sessions
(``people``, ``total_count``), each with its counts and its last activity (ISO 8601)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recallery.models import Page
from recallery.requests.subjects import Person, SubjectKind
from recallery.wire.envelope import Json
from recallery.wire.times import iso, required_time


def person_dict(p: Person) -> Json:
    return {
        "kind": p.kind.value,
        "id": p.id,
        "facts": p.facts,
        "turns": p.turns,
        "entries": p.entries,
        "last_at": iso(p.last_at),
    }


def person_from_dict(d: Mapping[str, Any]) -> Person:
    return Person(
        kind=SubjectKind(d["kind"]),
        id=str(d["id"]),
        facts=int(d["facts"]),
        turns=int(d["turns"]),
        entries=int(d["entries"]),
        last_at=required_time(d["last_at"]),
    )


def people_page_dict(page: Page[Person]) -> Json:
    return {"people": [person_dict(p) for p in page.items], "total_count": page.total}


def people_page_from_dict(d: Mapping[str, Any]) -> Page[Person]:
    return Page(tuple(person_from_dict(p) for p in d["people"]), int(d["total_count"]))


__all__ = ["people_page_dict", "people_page_from_dict", "person_dict", "person_from_dict"]
