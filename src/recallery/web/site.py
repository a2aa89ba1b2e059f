"""The web UI put together: its page routers, static files and session signing on an app."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

from recallery.web import (
    views_account,
    views_entries,
    views_facts,
    views_memories,
    views_messages,
    views_requestlog,
    views_search,
    views_site,
    views_subjects,
)
from recallery.web.frame import Web
from recallery.web.render import environment
from recallery.web.session import Sessions

STATIC = Path(__file__).parent / "static"
ROUTERS = (
    views_account.router,
    views_memories.router,
    views_messages.router,
    views_entries.router,
    views_facts.router,
    views_search.router,
    views_subjects.router,
    views_requestlog.router,
    views_site.router,
)


def mount(app: FastAPI, secret: bytes | None = None) -> None:
    """The pages at ``/`` (kept out of the API's OpenAPI schema) and ``/static``."""
    app.state.web = Web(app.state.engine, Sessions(secret), environment())
    for router in ROUTERS:
        app.include_router(router, include_in_schema=False)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
