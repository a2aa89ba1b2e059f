"""Who is looking at the web UI: sessions opened with an API key, their signed cookies and the
CSRF tokens every state-changing request must carry.

The key someone logs in with stays in this process; the browser holds only a signed, random
session id (HttpOnly, SameSite=Strict, Secure over https). Each request authenticates the key
again, so a revoked key ends its sessions at once. The signing secret is made when the server
starts unless one is given: a restart logs everyone out.

The login form itself carries a token too (a signed nonce in a short-lived cookie, repeated in
the form), so no other site can log a browser in under someone else's key.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field

from itsdangerous import BadSignature, URLSafeTimedSerializer

from recallery.requests.subjects import SubjectReceipt

SESSION_COOKIE = "recallery_session"
LOGIN_COOKIE = "recallery_login"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
#: A session ends after this long without a request,
IDLE_S = 8 * 3600
#: and this long after its login, however busy it is.
LIFETIME_S = 24 * 3600
#: The login form's token lasts this long.
LOGIN_S = 3600


@dataclass
class Session:
    """One logged-in browser: the key it logged in with, its CSRF token, messages to show."""

    key: str
    csrf: str
    seen: float
    flashes: list[str] = field(default_factory=list)
    opened: float = field(default_factory=time.monotonic)
    #: The bulk action and reason last chosen, which the Messages page's bulk form keeps.
    bulk: dict[str, str] = field(default_factory=dict)
    #: The receipt of each data-subject request applied, by action and user: its page shows
    #: it again on reload instead of posting the request again.
    applied: dict[tuple[str, str], SubjectReceipt] = field(default_factory=dict)


class Sessions:
    """Live sessions by id, and the signing of the ids the cookies carry."""

    def __init__(
        self,
        secret: bytes | None = None,
        *,
        idle_s: float = IDLE_S,
        lifetime_s: float = LIFETIME_S,
    ) -> None:
        key = secret or secrets.token_bytes(32)
        self._signer = URLSafeTimedSerializer(key, salt="recallery.web.session")
        self._login = URLSafeTimedSerializer(key, salt="recallery.web.login")
        self._idle_s = idle_s
        self._lifetime_s = lifetime_s
        self._live: dict[str, Session] = {}
        self._lock = threading.Lock()

    def open(self, key: str) -> tuple[str, Session]:
        """A new session for ``key``: the cookie value and the session."""
        sid = secrets.token_urlsafe(32)
        now = time.monotonic()
        session = Session(key=key, csrf=secrets.token_urlsafe(32), seen=now, opened=now)
        with self._lock:
            self._prune()
            self._live[sid] = session
        return self._signer.dumps(sid), session

    def find(self, cookie: str | None) -> Session | None:
        """The live session a cookie names; None for a missing, tampered, idle or expired one."""
        sid = self._unsign(self._signer, cookie, None)
        if sid is None:
            return None
        now = time.monotonic()
        with self._lock:
            session = self._live.get(sid)
            if session is None or self._over(session, now):
                self._live.pop(sid, None)
                return None
            session.seen = now
            return session

    def close(self, cookie: str | None) -> None:
        sid = self._unsign(self._signer, cookie, None)
        if sid is not None:
            with self._lock:
                self._live.pop(sid, None)

    def login_token(self) -> tuple[str, str]:
        """A login form's token: (cookie value, the value the form repeats)."""
        nonce = secrets.token_urlsafe(24)
        return self._login.dumps(nonce), nonce

    def login_token_matches(self, cookie: str | None, sent: str | None) -> bool:
        nonce = self._unsign(self._login, cookie, LOGIN_S)
        return nonce is not None and sent is not None and same(nonce, sent)

    def _prune(self) -> None:
        now = time.monotonic()
        for sid in [s for s, x in self._live.items() if self._over(x, now)]:
            del self._live[sid]

    def _over(self, session: Session, now: float) -> bool:
        """Idle too long, or logged in too long ago."""
        return now - session.seen > self._idle_s or now - session.opened > self._lifetime_s

    @staticmethod
    def _unsign(signer: URLSafeTimedSerializer, value: str | None, age: int | None) -> str | None:
        if not value:
            return None
        try:
            loaded = signer.loads(value, max_age=age)
        except BadSignature:  # SignatureExpired is one
            return None
        return loaded if isinstance(loaded, str) else None


def same(a: str, b: str) -> bool:
    """Constant-time equality of two tokens."""
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))
