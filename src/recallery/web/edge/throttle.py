"""Failed authentications, counted per client address: once an address has failed ``limit``
times within ``window`` seconds, its next failures are answered :class:`Throttled` (429) instead
of "invalid key", and each of them counts too, so a guesser who goes on stays refused until it
has stopped for a window.

Only failures are refused. The key is always looked up first, and a valid one is never refused
for its address's failures: behind a proxy every client shares one address, and someone else's
guessing must not lock out the rest. (A generated key carries 256 random bits: what throttling
protects is the server's time and short operator-chosen keys, which ``serve`` warns about.) A
success does not clear the count, so a valid key of one's own cannot be used to reset the
guessing of others'. Pure over a clock of seconds; every way a key is presented (REST, the web
login form, ``/mcp``, ``/metrics``) shares one per app.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from recallery.errors import Throttled

#: Failed authentications an address may make in :data:`WINDOW_S` seconds.
LIMIT = 20
WINDOW_S = 60.0
#: Addresses remembered at most (the least recently failing are forgotten first).
MAX_CLIENTS = 10_000


class Throttle:
    """Failures per client address in a sliding window."""

    def __init__(
        self,
        limit: int = LIMIT,
        window_s: float = WINDOW_S,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = MAX_CLIENTS,
    ) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self.max_clients = max_clients
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def failed(self, client: str) -> None:
        """Count one failed authentication of ``client``; :class:`Throttled` when it had
        failed ``limit`` times within the window already (the caller answers 429, not 401)."""
        with self._lock:
            now = self.clock()
            seen = self._recent(client, now)
            if seen is None:
                seen = self._failures[client] = deque(maxlen=self.limit)
            over = len(seen) >= self.limit
            seen.append(now)  # the oldest drops out: the newest ``limit`` failures are kept
            self._failures.move_to_end(client)
            while len(self._failures) > self.max_clients:
                self._failures.popitem(last=False)
            wait = max(1, math.ceil(seen[0] + self.window_s - now))
        if over:
            raise Throttled(
                f"Too many failed authentications from this address: {self.limit} in "
                f"{self.window_s:g} seconds. Try again in {wait} seconds.",
                retry_after=wait,
            )

    def _recent(self, client: str, now: float) -> deque[float] | None:
        seen = self._failures.get(client)
        if seen is None:
            return None
        while seen and seen[0] <= now - self.window_s:
            seen.popleft()
        if not seen:
            del self._failures[client]
            return None
        return seen
