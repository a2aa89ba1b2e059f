"""Addresses of the People pages, built in one place: an id travels as a query parameter,
percent-encoded whole, so an id with ``/``, ``?``, ``#``, ``..``, spaces or any script
reaches its page and its forms unchanged (a path segment ``..`` would be resolved away by
the browser before it is sent)."""

from __future__ import annotations

from urllib.parse import quote

#: What a person's page can be reached for: their page, or a data-subject request about them.
ACTIONS = ("", "forget", "erase")


def person_url(kind: str, value: str, action: str = "", *, done: bool = False) -> str:
    """The page of the user, agent or session ``value`` (``kind``), or, for a user, the dry
    run of ``action`` (forget or erase) about them; ``done``: its receipt once applied."""
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}")
    path = f"/people/{quote(kind, safe='')}" + (f"/{action}" if action else "")
    return f"{path}?id={quote(value, safe='')}" + ("&done" if done else "")


__all__ = ["person_url"]
