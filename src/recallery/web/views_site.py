"""The pages around the product: the API docs (Swagger UI served from ``static/``, so they
work without a network), the favicon, the natural addresses of a memory's search and audit
log, and the page a person sees at an address that does not exist."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from fastapi import APIRouter, Request
from starlette.responses import FileResponse, RedirectResponse, Response

from recallery.web.frame import LoginRequired, WebRoute, _viewer, page
from recallery.web.render import html, secure

STATIC = Path(__file__).parent / "static"
#: The docs page's policy: the page headers' own, but Swagger UI sets style attributes and
#: shows the schema's images inline.
DOCS_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; object-src 'none'; "
    "form-action 'none'"
)

router = APIRouter(route_class=WebRoute)


@router.get("/docs")
def docs(request: Request) -> Response:
    """The REST API's docs: Swagger UI over ``/openapi.json``."""
    response = html(request.app.state.web.templates, "docs.html", 200)
    response.headers["Content-Security-Policy"] = DOCS_CSP
    return response


@router.get("/favicon.ico")
def favicon() -> Response:
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")


@router.get("/memories/{memory_id}/search")
def memory_search(memory_id: str) -> Response:
    return RedirectResponse(f"/search?memory_id={quote(memory_id, safe='')}", status_code=307)


@router.get("/memories/{memory_id}/audit")
def memory_audit(memory_id: str) -> Response:
    return RedirectResponse(f"/audit?memory_id={quote(memory_id, safe='')}", status_code=307)


def not_found(request: Request) -> Response:
    """An address under ``/`` that does not exist, as a page with the site's navigation (the
    viewer's, when logged in), never the API's JSON."""
    try:
        who = _viewer(request)
    except LoginRequired:
        who = None
    text = f"There is no page at {request.url.path}."
    return secure(page(request, who, "error.html", 404, title="Not found", text=text))
