"""The throttle of failed authentications, over a clock the test moves."""

from __future__ import annotations

import pytest

from recallery.errors import Throttled
from recallery.web.edge.throttle import Throttle


def test_an_address_is_refused_after_its_failures_until_they_age_out() -> None:
    now = [0.0]
    t = Throttle(limit=3, window_s=60, clock=lambda: now[0])
    for _ in range(3):
        t.failed("a")  # the first three are plain failures
        now[0] += 1
    with pytest.raises(Throttled) as refused:
        t.failed("a")  # the fourth, at 3 s, is throttled; it counts too
    assert refused.value.retry_after == 58  # the oldest kept failure (1 s) ages out at 61 s
    t.failed("b")  # another address is not slowed
    now[0] = 62.5
    t.failed("a")  # the newest three were at 1, 2, 3 s: they aged out, a plain failure again


def test_a_guesser_who_goes_on_stays_refused_and_its_memory_stays_bounded() -> None:
    now = [0.0]
    t = Throttle(limit=3, window_s=60, clock=lambda: now[0])
    for _ in range(3):
        t.failed("a")
    for _ in range(200):  # a guess every 10 s for half an hour: each is refused
        now[0] += 10
        with pytest.raises(Throttled):
            t.failed("a")
    assert len(t._failures["a"]) == 3  # only the newest `limit` failures are kept


def test_it_remembers_a_bounded_number_of_addresses() -> None:
    t = Throttle(limit=1, window_s=60, clock=lambda: 0.0, max_clients=2)
    for client in ("a", "b", "c"):
        t.failed(client)
    t.failed("a")  # forgotten, the least recently failing: a plain failure again
    with pytest.raises(Throttled):
        t.failed("c")
