"""Reads of extraction jobs: one by id, the latest per turn, a memory's by state. Mixed into
the store's :class:`~.reader.Reader` beside the entry reads, as accounts and supersession are."""

from __future__ import annotations

from collections.abc import Sequence

from recallery.models import Job, JobState
from recallery.store.rows import JOB_COLUMNS, job_from_row
from recallery.store.sql import Conn, marks


class JobReads:
    """Mixed into :class:`~.reader.Reader`, over its connection."""

    conn: Conn

    def job(self, job_id: int) -> Job | None:
        rows = self.conn.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?", [job_id])
        return job_from_row(rows[0]) if rows else None

    def jobs_for_messages(self, message_ids: Sequence[int]) -> dict[int, Job]:
        if not message_ids:
            return {}
        where = f"message_id IN ({marks(len(message_ids))})"
        rows = self.conn.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE {where} ORDER BY id", list(message_ids)
        )
        return {int(j.message_id): j for j in map(job_from_row, rows) if j.message_id is not None}

    def jobs(
        self, memory_ids: frozenset[str] | None = None, state: JobState | None = None
    ) -> list[Job]:
        sql: list[str] = []
        params: list[object] = []
        if memory_ids is not None:
            ids = sorted(memory_ids)
            if not ids:
                return []
            sql.append(f"memory_id IN ({marks(len(ids))})")
            params.extend(ids)
        if state is not None:
            sql.append("state = ?")
            params.append(state.value)
        where = " AND ".join(sql) or "1 = 1"
        rows = self.conn.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE {where} ORDER BY id", params
        )
        return [job_from_row(r) for r in rows]
