"""Pages: one Jinja environment (autoescaped, so stored text is always text), the filters the
templates use, and the headers every page is sent with."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from recallery.access import WHY
from recallery.web.fields import changes, fields
from recallery.web.links import person_url
from recallery.web.outcomes import of_facts, of_page

#: No inline script or style anywhere: scripts and styles come from /static only.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def secure(response: Response) -> Response:
    """``response`` with the page headers (pages show stored content: never cached)."""
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("recallery.web", "templates"),
        autoescape=select_autoescape(["html"], default=True),
        undefined=StrictUndefined,
        auto_reload=False,  # shipped files: no stat of each template at each include
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        when=when,
        size=size,
        short=short,
        fields=fields,  # a task's result, one key: value row per field
        changes=changes,  # an audit event's before and after, one row per field
        duration=duration,
        percent=percent,
        turn_parts=turn_parts,
        entry_links=entry_links,
        outcomes=of_page,  # what became of each turn on a Messages page
        fact_outcomes=of_facts,  # and of the facts on a Facts page
    )
    # why an action needs its capability, for the reason a disabled control gives
    env.globals["why"] = {action.value: text for action, text in WHY.items()}
    env.globals["person_url"] = person_url  # every user, agent and session id links to its page
    return env


def when(value: datetime | None) -> str:
    """A time as people read it, in UTC."""
    return "" if value is None else value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def size(n: int) -> str:
    """Bytes in the largest unit that keeps a number above one."""
    value = float(n)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024 or unit == "MiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def short(text: str, limit: int = 160) -> str:
    """The start of a text, on one line."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def duration(ms: int) -> str:
    """Milliseconds as people read them (ms below a second, else seconds)."""
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


USER_MARK, AGENT_MARK = "User Input: ", "\nAgent Response: "


def turn_parts(content: str) -> tuple[str, str] | None:
    """A conversation turn's user and agent text, as ``add_turn`` wrote them (None for
    other text)."""
    if not content.startswith(USER_MARK) or AGENT_MARK not in content:
        return None
    user, agent = content[len(USER_MARK) :].split(AGENT_MARK, 1)
    return user, agent


#: "entry 36" or "message 36" in a job's log: the entry it names.
_NAMED_ENTRY = re.compile(r"\b(entry|entries|message) (\d+)\b")


def entry_links(text: str, memory_id: str) -> Markup:
    """``text`` escaped, with each entry it names ("judged to supersede entry 36") a link to
    that entry's page in ``memory_id``."""
    base = f"/memories/{escape(memory_id)}/entries/"
    return Markup(
        _NAMED_ENTRY.sub(
            lambda m: f'{m.group(1)} <a href="{base}{m.group(2)}">{m.group(2)}</a>',
            str(escape(text)),
        )
    )


def percent(part: int, whole: int) -> float:
    return 0.0 if whole <= 0 else min(100.0, 100.0 * part / whole)


def html(env: Environment, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """Template ``name`` rendered with ``context`` (the page headers come with every answer
    of the web routes)."""
    return HTMLResponse(env.get_template(name).render(**context), status_code=status)


def is_htmx(request: Request) -> bool:
    """Whether htmx sent the request (and wants a fragment, not a page)."""
    return request.headers.get("hx-request") == "true"
