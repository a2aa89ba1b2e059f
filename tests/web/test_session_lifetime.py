"""A web session ends after 8 idle hours, and 24 hours after its login however busy it is."""

from __future__ import annotations

import pytest

from recallery.web import session as sessions_module
from recallery.web.session import IDLE_S, LIFETIME_S, Sessions


def test_a_busy_session_still_ends_a_day_after_its_login(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(sessions_module.time, "monotonic", lambda: now[0])
    sessions = Sessions(b"s" * 32)
    cookie, _ = sessions.open("rc-key")
    while now[0] + IDLE_S / 2 < 1000.0 + LIFETIME_S:  # a request every four hours
        now[0] += IDLE_S / 2
        assert sessions.find(cookie) is not None
    now[0] = 1000.0 + LIFETIME_S + 1
    assert sessions.find(cookie) is None


def test_an_idle_session_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    monkeypatch.setattr(sessions_module.time, "monotonic", lambda: now[0])
    sessions = Sessions(b"s" * 32)
    cookie, _ = sessions.open("rc-key")
    now[0] = IDLE_S + 1
    assert sessions.find(cookie) is None
