"""Reads of users, teams and API keys: the part of a :class:`~.reader.Reader` that
authentication and the account pages use, apart from the memory and entry reads (what each
key did is the request log's: :mod:`.requestlog`)."""

from __future__ import annotations

from recallery.models import User
from recallery.store.rows import USER_COLUMNS, user_from_row
from recallery.store.sql import Conn, Row


class AccountReads:
    """Mixed into :class:`~.reader.Reader`, over its connection."""

    conn: Conn

    def user(self, user_id: str) -> User | None:
        rows = self.conn.execute(f"SELECT {USER_COLUMNS} FROM users WHERE id = ?", [user_id])
        return user_from_row(rows[0]) if rows else None

    def user_named(self, name: str) -> User | None:
        rows = self.conn.execute(f"SELECT {USER_COLUMNS} FROM users WHERE name = ?", [name])
        return user_from_row(rows[0]) if rows else None

    def users(self) -> list[User]:
        rows = self.conn.execute(f"SELECT {USER_COLUMNS} FROM users ORDER BY name")
        return [user_from_row(r) for r in rows]

    def user_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM users")[0][0])

    def teams_of(self, user_id: str) -> frozenset[str]:
        rows = self.conn.execute("SELECT tenant_id FROM memberships WHERE user_id = ?", [user_id])
        return frozenset(r[0] for r in rows) | {user_id}

    def members_of(self, tenant_id: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT user_id FROM memberships WHERE tenant_id = ? ORDER BY user_id", [tenant_id]
        )
        return [r[0] for r in rows]

    def api_key(self, key_hash: str) -> tuple[str, str, str | None, str | None] | None:
        """(key id, user id, scope json, capabilities json) of a live key with this hash."""
        rows = self.conn.execute(
            "SELECT id, user_id, scope, capabilities FROM api_keys "
            "WHERE key_hash = ? AND revoked_at IS NULL",
            [key_hash],
        )
        return (rows[0][0], rows[0][1], rows[0][2], rows[0][3]) if rows else None

    def key_revoked(self, key_hash: str) -> bool:
        """Whether a key with this hash exists and was revoked."""
        rows = self.conn.execute(
            "SELECT 1 FROM api_keys WHERE key_hash = ? AND revoked_at IS NOT NULL", [key_hash]
        )
        return bool(rows)

    def api_keys(self, user_id: str) -> list[Row]:
        return self.conn.execute(
            "SELECT id, name, scope, created_at, revoked_at, capabilities FROM api_keys "
            "WHERE user_id = ? "
            "ORDER BY created_at",
            [user_id],
        )
