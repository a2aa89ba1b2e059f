"""Conformance: users, team memberships and API keys (found by hash while not revoked)."""

from __future__ import annotations

from recallery.models import User
from recallery.store.base import Store
from recallery.testing.conformance.support import T0, Conformance


class AccountConformance(Conformance):
    def test_users_teams_and_keys(self, store: Store) -> None:
        alice = User("alice", "Alice", False, T0)
        with store.write() as w:
            w.insert_user(alice)
            w.add_member("bob", "alice")
            w.add_member("bob", "alice")
            w.insert_api_key(key_id="k1", user_id="alice", key_hash="h", name="", scope=None, at=T0)
            w.insert_api_key(
                key_id="k2",
                user_id="alice",
                key_hash="h2",
                name="agent",
                scope='["m1"]',
                capabilities='["read"]',
                at=T0,
            )
        with store.read() as r:
            assert r.user("alice") == alice and r.user_named("Alice") == alice
            assert r.teams_of("alice") == frozenset({"alice", "bob"})
            assert r.api_key("h") == ("k1", "alice", None, None)
            assert r.api_key("h2") == ("k2", "alice", '["m1"]', '["read"]')
        with store.write() as w:
            assert w.revoke_api_key("k1", T0) is True
        with store.read() as r:
            assert r.api_key("h") is None
