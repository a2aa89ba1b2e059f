"""The throttle of failed authentications, over a clock the test moves."""

from __future__ import annotations

import pytest

from recallery.errors import Throttled
from recallery.throttle import Throttle


def test_an_address_is_refused_after_its_failures_until_they_age_out() -> None:
    now = [0.0]
    t = Throttle(limit=3, window_s=60, clock=lambda: now[0])
    for _ in range(3):
        t.check("a")
        t.failed("a")
        now[0] += 1
    with pytest.raises(Throttled) as refused:
        t.check("a")
    assert refused.value.retry_after == 57  # the first failure ages out at 60 s
    t.check("b")  # another address is not slowed
    now[0] = 60.5
    t.check("a")  # the first failure aged out: one more guess is allowed


def test_it_remembers_a_bounded_number_of_addresses() -> None:
    t = Throttle(limit=1, window_s=60, clock=lambda: 0.0, max_clients=2)
    for client in ("a", "b", "c"):
        t.failed(client)
    t.check("a")  # forgotten, the least recently failing
    with pytest.raises(Throttled):
        t.check("c")
