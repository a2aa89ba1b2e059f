"""Helpers shared by the web tests: logging in and reading a form's CSRF token (their
fixtures live in tests/web/conftest.py)."""

from __future__ import annotations

import re
from collections.abc import Callable

from fastapi.testclient import TestClient

Login = Callable[[str], TestClient]


def login_token(c: TestClient) -> str:
    """The token of a fresh login form (its cookie is kept by the client)."""
    return form_token(c.get("/login").text)


def form_token(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF token on the page"
    return found.group(1)
