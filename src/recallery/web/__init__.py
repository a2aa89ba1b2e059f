"""The web UI for the people who curate memories, served at ``/`` beside the REST API.

Server-rendered pages (Jinja, autoescaped) over the engine and nothing lower, with the same
permission checks as the API: memories, a memory's overview, Messages page, entries, review
queue, search playground, jobs and configuration, the audit log, the account and users pages.
htmx (vendored in ``static/``) makes the row actions, the review queue and the bulk preview
update in place; every page and action also works without script.

:func:`install` adds the pages to an app (``recallery.api.create_app`` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recallery.extras import require

if TYPE_CHECKING:
    from fastapi import FastAPI, Request
    from starlette.responses import Response


def install(app: FastAPI, *, secret: bytes | None = None) -> None:
    """Serve the web UI from ``app`` (whose ``state.engine`` it uses): its pages at ``/``
    and its static files at ``/static``. ``secret`` signs session cookies (default: a new
    one, so a restart logs everyone out). Without the server extra's template, session and
    form packages this is one line saying what to install."""
    require("jinja2", "itsdangerous", "python_multipart", extra="server", what="the web UI")
    from recallery.web.site import mount

    mount(app, secret)


def not_found(request: Request) -> Response:
    """The page for an address under ``/`` that does not exist (with the site's navigation)."""
    from recallery.web.views_site import not_found as page

    return page(request)


__all__ = ["install", "not_found"]
