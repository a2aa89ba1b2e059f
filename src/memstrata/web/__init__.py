"""The web UI for the people who curate memories, served at ``/`` beside the REST API.

Server-rendered pages (Jinja, autoescaped) over the engine and nothing lower, with the same
permission checks as the API: memories, a memory's overview, Messages page, entries, review
queue, search playground, jobs and configuration, the audit log, the account and users pages.
htmx (vendored in ``static/``) makes the row actions, the review queue and the bulk preview
update in place; every page and action also works without script.

:func:`install` adds the pages to an app (``memstrata.api.create_app`` does).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

from memstrata.web import views_account, views_entries, views_memories, views_messages, views_search
from memstrata.web.frame import Web
from memstrata.web.render import environment
from memstrata.web.session import Sessions

STATIC = Path(__file__).parent / "static"
ROUTERS = (
    views_account.router,
    views_memories.router,
    views_messages.router,
    views_entries.router,
    views_search.router,
)


def install(app: FastAPI, *, secret: bytes | None = None) -> None:
    """Serve the web UI from ``app`` (whose ``state.engine`` it uses): its pages at ``/``
    and its static files at ``/static``. ``secret`` signs session cookies (default: a new
    one, so a restart logs everyone out)."""
    app.state.web = Web(app.state.engine, Sessions(secret), environment())
    for router in ROUTERS:
        app.include_router(router, include_in_schema=False)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")


__all__ = ["install"]
