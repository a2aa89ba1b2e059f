"""Every statement the PostgreSQL store issues on a table a Citus cluster would distribute by
tenant names the tenant (a predicate, or the column of an insert), or has one of the shapes
listed in WITHOUT_TENANT with the reason it cannot yet: recorded over the whole store
conformance suite, so a new statement shape without the key fails here until it is keyed or
listed (see docs/deployment.md, "Scale-out layout")."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from recallery.store.postgres import PostgresStore
from recallery.store.postgres.conn import PgConn
from recallery.testing.conformance import StoreConformance

pytestmark = pytest.mark.postgres

DISTRIBUTED = (
    "memories",
    "entries",
    "evidence",
    "tombstones",
    "audit",
    "jobs",
    "fts_docs",
    "fts_terms",
)
_TABLE = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|COPY)\s+([a-z_]+)", re.IGNORECASE)
_KEYED = re.compile(r"\btenant_id\s*(?:=|IN\b)", re.IGNORECASE)
_INSERT_COLUMNS = re.compile(
    r"^\s*(?:INSERT\s+INTO|COPY)\s+[a-z_]+(?:\s+AS\s+[a-z_]+)?\s*\(([^)]*)\)", re.IGNORECASE
)

#: Statement shapes that do not name the tenant yet, each with why. Under Citus these go to
#: every shard (each answers from its own indexes); routing them to one needs the tenant
#: beside the id they name.
WITHOUT_TENANT: dict[str, tuple[re.Pattern[str], str]] = {
    name: (re.compile(pattern, re.IGNORECASE | re.DOTALL), reason)
    for name, pattern, reason in (
        (
            "scope by memory id",
            r"\b(?:e\.|d\.|t\.)?memory_id(?:\s*\|\|\s*''\))?\s*(?:=|IN\b|= ANY)",
            "a Scope is a set of memory ids (access.readable builds it from the memories a "
            "caller may read, a keyword round checks them on the rows it reads: "
            "`(e.memory_id || '') IN`); Scope would have to carry their tenants",
        ),
        (
            "memory by id",
            r"\b(?:FROM|UPDATE)\s+memories\b.*\bWHERE\s+id\s*(?:=|IN\b)",
            "a memory id comes from a URL or a key's scope before its tenant is known "
            "(memories_id is unique)",
        ),
        (
            "entry or job by id",
            r"\b(?:message_id|id)\s*(?:=|IN\b|= ANY)",
            "message and job ids are global (sequences) and name one row: lookups by id from "
            "URLs, jobs and the writer's own follow-ups",
        ),
        (
            "job claim",
            r"FROM jobs WHERE \(state = \?",
            "a worker claims the oldest due job of any tenant (FOR UPDATE SKIP LOCKED); under "
            "Citus jobs would stay a coordinator table or claims go per tenant",
        ),
        (
            "audit across memories",
            r"FROM audit WHERE (?:actor|at|action)\b",
            "an administrator's audit search spans tenants",
        ),
        (
            "insert whose tenant a trigger fills",
            r"^\s*INSERT INTO (?:audit|evidence) \((?:at|message_id),",
            "the portable writer names the memory or entry, a BEFORE INSERT trigger copies its "
            "tenant; Citus routes an insert by its own values, so these must name it first",
        ),
        (
            "schema check",
            r"^SELECT \* FROM [a-z_]+ LIMIT 1$",
            "the conformance suite's column check",
        ),
    )
}


def tables(sql: str) -> set[str]:
    return {t.lower() for t in _TABLE.findall(sql)} & set(DISTRIBUTED)


def keyed(sql: str) -> bool:
    columns = _INSERT_COLUMNS.match(sql)
    if columns is not None:
        return "tenant_id" in {c.strip() for c in columns.group(1).split(",")}
    return _KEYED.search(sql) is not None


def recording(method: Callable[..., Any], seen: list[str]) -> Callable[..., Any]:
    def run(self: PgConn, sql: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(sql if method.__name__ != "copy_rows" else f"COPY {sql} ({', '.join(args[0])})")
        return method(self, sql, *args, **kwargs)

    return run


class TestTenantKeys(StoreConformance):
    """The conformance suite, each test's statements checked when it ends."""

    @pytest.fixture
    def store(
        self, postgres_store: PostgresStore, monkeypatch: pytest.MonkeyPatch
    ) -> Iterator[PostgresStore]:
        seen: list[str] = []
        for name in ("execute", "executemany", "execute_binary", "copy_rows"):
            monkeypatch.setattr(PgConn, name, recording(getattr(PgConn, name), seen))
        yield postgres_store
        assert [s for s in seen if not excused(s)] == []


def excused(sql: str) -> str | None:
    """Why ``sql`` may go without the tenant (None: it may not). Statements on no distributed
    table, and those that name the tenant, need no reason."""
    if not tables(sql) or keyed(sql):
        return "keyed"
    return next((name for name, (p, _) in WITHOUT_TENANT.items() if p.search(sql)), None)


def test_a_statement_without_the_tenant_and_no_listed_reason_is_caught() -> None:
    assert excused("SELECT count(*) FROM entries WHERE session_id = ?") is None
    assert excused("UPDATE fts_docs SET docs = 0") is None
    assert excused("SELECT 1 FROM entries WHERE tenant_id = ? AND memory_id = ?") == "keyed"
    assert excused("INSERT INTO jobs (kind, tenant_id, memory_id) VALUES (?,?,?)") == "keyed"
    assert excused("SELECT id FROM users WHERE name = ?") == "keyed"  # a reference table
    assert excused("SELECT * FROM entries e WHERE e.memory_id IN (?)") == "scope by memory id"
