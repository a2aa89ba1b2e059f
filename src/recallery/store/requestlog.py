"""The request log's rows: ``requests`` (one per call) and ``request_entries`` (the entry ids
a call returned or named, with its key and time, so an entry's access history is one indexed
read). An entry's ids leave ``request_entries`` when the entry goes (a trigger in SQLite, a
cascading foreign key in PostgreSQL), and an insert only takes ids whose entry still exists,
so the log never names an erased entry. The log holds no entry content; query text only
when the service passes it (``RECALLERY_REQUEST_LOG_QUERIES``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from recallery.clock import to_epoch
from recallery.requests.requestlog import NAMED, RETURNED, KeyReads, LoggedRequest, RequestQuery
from recallery.store.sql import Conn, Row, chunks, marks

_COLUMNS = "id, at, channel, route, status, latency_ms, key_id, user_id, memory_ids, query"
#: One request to write: its tenant (the caller's), the row, the ids it returned and named.
Logged = tuple[str, LoggedRequest, Sequence[int], Sequence[int]]


def _memories(ids: Sequence[str]) -> str:
    """Memory ids stored as ``,a,b,`` so that one is found by ``LIKE '%,a,%'``."""
    return f",{','.join(sorted(ids))}," if ids else ""


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class RequestLogReads:
    """Mixed into :class:`~.reader.Reader`, over its connection."""

    conn: Conn

    def requests(self, q: RequestQuery) -> tuple[list[LoggedRequest], int]:
        """Logged requests matching ``q``, newest first, with the total that match."""
        where, params = _where(q)
        total = int(self.conn.execute(f"SELECT count(*) FROM requests{where}", params)[0][0])
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM requests{where} ORDER BY at DESC, id DESC LIMIT ? OFFSET ?",
            [*params, q.limit, q.offset],
        )
        entries: dict[str, list[int]] = {}
        for chunk in chunks([r[0] for r in rows], 500):
            for request_id, message_id in self.conn.execute(
                f"SELECT request_id, message_id FROM request_entries "
                f"WHERE request_id IN ({marks(len(chunk))}) ORDER BY request_id, message_id",
                chunk,
            ):
                entries.setdefault(request_id, []).append(int(message_id))
        return [_request(r, entries.get(r[0], [])) for r in rows], total

    def entry_reads(self, message_id: int) -> tuple[dict[str, int], list[KeyReads]]:
        """How often the log has ``message_id`` by how (returned, named), and by key."""
        how = self.conn.execute(
            "SELECT how, count(*) FROM request_entries WHERE message_id = ? GROUP BY how",
            [message_id],
        )
        keys = self.conn.execute(
            "SELECT key_id, user_id, count(*), max(at) FROM request_entries "
            "WHERE message_id = ? GROUP BY key_id, user_id ORDER BY max(at) DESC",
            [message_id],
        )
        by_key = [KeyReads(k, u, int(n), _time(at)) for k, u, n, at in keys]
        return {str(h): int(n) for h, n in how}, by_key


def _where(q: RequestQuery) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    for column, value in (
        ("key_id", q.key_id),
        ("user_id", q.user_id),
        ("route", q.route),
        ("status", q.status),
    ):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if q.slow_ms is not None:
        clauses.append("latency_ms >= ?")
        params.append(q.slow_ms)
    if q.memory_id is not None:
        clauses.append("memory_ids LIKE ? ESCAPE '\\'")
        params.append(f"%,{_like(q.memory_id)},%")
    if q.entry_id is not None:
        clauses.append("id IN (SELECT request_id FROM request_entries WHERE message_id = ?)")
        params.append(q.entry_id)
    if q.within is not None:
        clause, more = _within(q.within, q.own_key)
        clauses.append(clause)
        params.extend(more)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def _within(scope: frozenset[str], own_key: str) -> tuple[str, list[object]]:
    """Requests that named memories, every one of them in ``scope``, or made with ``own_key``:
    with each scope id cut out of ``,a,b,``, a request within the scope leaves ``,``."""
    left, params = "memory_ids", list[object]()
    for memory_id in sorted(scope):  # at most 100: a key's scope is a list of memory ids
        left = f"REPLACE({left}, ?, ',')"
        params.append(f",{memory_id},")
    clause = f"(memory_ids <> '' AND {left} = ',')"
    if own_key:
        return f"({clause} OR key_id = ?)", [*params, own_key]
    return clause, params


def _request(r: Row, entry_ids: list[int]) -> LoggedRequest:
    return LoggedRequest(
        id=r[0],
        at=_time(r[1]),
        channel=r[2],
        route=r[3],
        status=int(r[4]),
        latency_ms=float(r[5]),
        key_id=r[6],
        user_id=r[7],
        memory_ids=tuple(m for m in str(r[8]).split(",") if m),
        entry_ids=tuple(entry_ids),
        query=r[9],
    )


class RequestLogWrites:
    """Mixed into :class:`~.writer.Writer`, inside its transaction."""

    conn: Conn

    def log_requests(self, batch: Sequence[Logged]) -> None:
        """Write a batch of requests; of their entry ids, only those whose entry exists."""
        self.conn.executemany(
            f"INSERT INTO requests (tenant_id, {_COLUMNS}) VALUES ({marks(11)})",
            [(tenant, *_values(row)) for tenant, row, _returned, _named in batch],
        )
        for _tenant, row, returned, named in batch:
            for how, ids in ((RETURNED, returned), (NAMED, named)):
                for chunk in chunks(sorted(set(ids)), 500):
                    self.conn.execute(
                        "INSERT INTO request_entries "
                        "(tenant_id, message_id, request_id, how, at, key_id, user_id) "
                        "SELECT e.tenant_id, e.message_id, ?, ?, ?, ?, ? FROM entries e "
                        f"WHERE e.message_id IN ({marks(len(chunk))})",
                        [row.id, how, to_epoch(row.at), row.key_id, row.user_id, *chunk],
                    )

    def prune_requests(self, before: datetime, keep: int, keep_anonymous: int) -> int:
        """Drop requests older than ``before``, all but the newest ``keep`` of the callers'
        who were authenticated and all but the newest ``keep_anonymous`` of the others': a
        flood without a valid key never pushes out what keys did. How many went."""
        ids: list[str] = []
        for who, most in (("user_id <> ''", keep), ("user_id = ''", keep_anonymous)):
            older, params = "at < ?", [to_epoch(before)]
            rows = self.conn.execute(
                f"SELECT at, id FROM requests WHERE {who} "
                "ORDER BY at DESC, id DESC LIMIT 1 OFFSET ?",
                [most],
            )
            if rows and float(rows[0][0]) >= to_epoch(before):
                older = "at < ? OR (at = ? AND id <= ?)"
                params = [rows[0][0], rows[0][0], rows[0][1]]
            found = self.conn.execute(f"SELECT id FROM requests WHERE {who} AND ({older})", params)
            ids.extend(r[0] for r in found)
        for chunk in chunks(ids, 500):
            listed = marks(len(chunk))
            self.conn.execute(f"DELETE FROM request_entries WHERE request_id IN ({listed})", chunk)
            self.conn.execute(f"DELETE FROM requests WHERE id IN ({listed})", chunk)
        return len(ids)


def _time(value: object) -> datetime:
    return datetime.fromtimestamp(float(value), UTC)  # type: ignore[arg-type]


def _values(row: LoggedRequest) -> tuple[object, ...]:
    return (
        row.id,
        to_epoch(row.at),
        row.channel,
        row.route,
        row.status,
        row.latency_ms,
        row.key_id,
        row.user_id,
        _memories(row.memory_ids),
        row.query,
    )


__all__ = ["Logged", "RequestLogReads", "RequestLogWrites"]
