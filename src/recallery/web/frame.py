"""What every page depends on: the engine, the viewer (whose session must be live and whose
key must still authenticate), forms that carry their CSRF token, and one mapping from the
engine's exceptions to pages: a missing session goes to the login page, a memory the viewer
cannot see is a 404 page, a refusal a 403 page with its reason."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote, urlsplit

from fastapi import Depends, Request
from fastapi.routing import APIRoute
from jinja2 import Environment
from starlette.datastructures import FormData, UploadFile
from starlette.responses import RedirectResponse, Response

from recallery import wire
from recallery.engine import Engine
from recallery.errors import RecalleryError, Unauthorized
from recallery.models import Capability, Memory, Principal
from recallery.requests.requestlog import note_caller
from recallery.web.render import html, is_htmx, secure
from recallery.web.session import CSRF_FIELD, CSRF_HEADER, SESSION_COOKIE, Session, Sessions, same


class LoginRequired(Exception):
    """No live session (or its key no longer authenticates)."""


#: Most fields a form may post (a bulk change ticks up to 10,000 rows); the body itself is
#: limited before it is read (:mod:`recallery.web.edge.guard`).
MAX_FIELDS = 10_100


class FormExpired(Exception):
    """A state-changing request without the session's CSRF token."""


@dataclass(frozen=True)
class Web:
    """The web UI's parts, kept on ``app.state.web``."""

    engine: Engine
    sessions: Sessions
    templates: Environment


@dataclass(frozen=True)
class Viewer:
    """The logged-in caller and their session."""

    principal: Principal
    session: Session

    @property
    def csrf(self) -> str:
        return self.session.csrf

    def flash(self, message: str) -> None:
        """A message for the next page this session sees."""
        self.session.flashes.append(message)


def may(who: Viewer | None) -> dict[str, bool]:
    """What the session's key may do, by capability name (controls it may not use are shown
    disabled, with the missing capability as the reason)."""
    held = frozenset() if who is None else who.principal.capabilities
    return {c.value: c in held for c in Capability}


def web(request: Request) -> Web:
    found: Web = request.app.state.web
    return found


def _viewer(request: Request) -> Viewer:
    parts = web(request)
    cookie = request.cookies.get(SESSION_COOKIE)
    session = parts.sessions.find(cookie)
    if session is None:
        raise LoginRequired
    try:
        principal = parts.engine.authenticate(session.key)
    except Unauthorized:
        parts.sessions.close(cookie)
        raise LoginRequired from None
    note_caller(principal)  # the request log's caller of this page
    return Viewer(principal, session)


class Form:
    """A posted form: text fields by name (missing: empty), lists, flags and files."""

    def __init__(self, data: FormData) -> None:
        self.data = data

    def text(self, name: str, default: str = "") -> str:
        value = self.data.get(name)
        return value.strip() if isinstance(value, str) else default

    def raw(self, name: str) -> str:
        """A text field as typed (long text keeps its spacing)."""
        value = self.data.get(name)
        return value if isinstance(value, str) else ""

    def texts(self, name: str) -> list[str]:
        return [v.strip() for v in self.data.getlist(name) if isinstance(v, str) and v.strip()]

    def flag(self, name: str) -> bool:
        return self.text(name) in ("1", "on", "true", "yes")

    def file(self, name: str) -> UploadFile | None:
        value = self.data.get(name)
        return value if isinstance(value, UploadFile) else None


async def _posted(request: Request, who: Annotated[Viewer, Depends(_viewer)]) -> Form:
    """The form of a state-changing request, once its CSRF token (a field, or the header
    htmx sends) matches the session's."""
    data = await request.form(max_files=1, max_fields=MAX_FIELDS)
    sent = data.get(CSRF_FIELD)
    token = sent if isinstance(sent, str) else request.headers.get(CSRF_HEADER)
    if not token or not same(token, who.csrf):
        raise FormExpired
    return Form(data)


WebDep = Annotated[Web, Depends(web)]
Who = Annotated[Viewer, Depends(_viewer)]
Posted = Annotated[Form, Depends(_posted)]


def page(
    request: Request, who: Viewer | None, name: str, status: int = 200, **ctx: Any
) -> Response:
    """A template as a page (or, for htmx, the fragment the template renders), with the
    viewer, its CSRF token and any flashed messages."""
    flashes: list[str] = []
    if who is not None:
        flashes, who.session.flashes[:] = list(who.session.flashes), []
    memory = ctx.get("memory")
    if isinstance(memory, Memory) and "memory_warnings" not in ctx:
        ctx["memory_warnings"] = web(request).engine.memory_warnings(memory)
    return html(
        web(request).templates,
        name,
        status,
        who=who,
        csrf="" if who is None else who.csrf,
        flashes=flashes,
        may=may(who),
        path=request.url.path,
        htmx=is_htmx(request),
        **ctx,
    )


def back(url: str) -> Response:
    """After a change: the page to show next (a 303, so reloading does not post again)."""
    return RedirectResponse(url, status_code=303)


def number(text: str | None, kind: type[int] | type[float], default: object = None) -> object:
    """A number from a form or query field: ``default`` when it is empty, else the number,
    or the text itself for the engine to refuse, naming the field."""
    if text is None or not text.strip():
        return default
    try:
        return kind(text)
    except ValueError:
        return text


def local(url: str, fallback: str = "/") -> str:
    """``url`` if it is a path of this site (never another site, for a redirect)."""
    ok = url.startswith("/") and not url.startswith("//") and "\\" not in url
    return url if ok else fallback


class WebRoute(APIRoute):
    """A web route: the page headers on every answer, and errors shown as pages."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                response = await handler(request)
            except LoginRequired:
                response = _to_login(request)
            except FormExpired:
                text = "This form has expired (or came from elsewhere). Reload the page and retry."
                response = page(
                    request,
                    _who(request),
                    "error.html",
                    403,
                    title="Form expired",
                    text=text,
                    way_back=way_back(request),
                )
            except RecalleryError as exc:
                status, _ = wire.error_envelope(exc)
                title = {403: "Not allowed", 404: "Not found"}.get(status, "Something is wrong")
                response = page(
                    request,
                    _who(request),
                    "error.html",
                    status,
                    title=title,
                    text=str(exc),
                    way_back=way_back(request),
                )
            return secure(response)

        return route


def way_back(request: Request) -> str:
    """Where a refused request's page links back to: the page of this site the request came
    from (its Referer), else, for a form posted to ``/x/y/action``, the page ``/x/y``."""
    referer = urlsplit(request.headers.get("referer", ""))
    if referer.netloc == request.url.netloc and referer.path:
        came = referer.path + (f"?{referer.query}" if referer.query else "")
        if came != str(request.url.path):
            return local(came)
    path = request.url.path
    if request.method != "GET":
        path = path.rsplit("/", 1)[0] or "/"
    return local(path) if path != request.url.path else "/"


def _who(request: Request) -> Viewer | None:
    """The viewer of a refused request, when there is one (so its page keeps the site's
    navigation); None when no session is live."""
    try:
        return _viewer(request)
    except LoginRequired:
        return None


def _to_login(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    url = "/login" if target == "/" else f"/login?next={quote(target, safe='')}"
    if is_htmx(request):
        return Response(status_code=200, headers={"HX-Redirect": url})
    return RedirectResponse(url, status_code=303)
