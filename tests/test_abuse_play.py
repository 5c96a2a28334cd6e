"""Abuse at the table: a flood of moves from one client, and the limit that holds it.

The limiter (``okey101.table.limits``) on its own, with a clock the test moves; then over real
gRPC: a player flooding a table is refused RESOURCE_EXHAUSTED (RATE_LIMITED, retry_after_ms)
once the burst is spent, nothing changes, the other players and the services play on, and the
flooder may move again once the time it was told has passed.
"""

from __future__ import annotations

import pytest

from okey101.platform.errors import ResourceExhausted, status_code_of
from okey101.table.limits import BURST_ENV, PER_SECOND_ENV, ActLimit, ActLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_bucket_lets_a_burst_through_then_the_rate_and_tells_when_to_retry() -> None:
    clock = Clock()
    limiter = ActLimiter(ActLimit(burst=5, per_second=2.0), clock=clock)
    for _ in range(5):
        limiter.check("ada", "t-1")
    with pytest.raises(ResourceExhausted) as caught:
        limiter.check("ada", "t-1")
    error = caught.value
    assert error.code == "RATE_LIMITED" and status_code_of(error).name == "RESOURCE_EXHAUSTED"
    assert error.params == {"retry_after_ms": 500, "action": "act"}
    assert "Too many requests" in error.message("en") and "Çok fazla" in error.message("tr")
    # Other tables and other players have buckets of their own.
    limiter.check("ada", "t-2")
    limiter.check("bea", "t-1")
    # Refused calls do not push the retry further off; the time told is enough.
    clock.now += 0.25
    with pytest.raises(ResourceExhausted) as again:
        limiter.check("ada", "t-1")
    assert again.value.params["retry_after_ms"] == 250
    clock.now += 0.25
    limiter.check("ada", "t-1")
    with pytest.raises(ResourceExhausted):
        limiter.check("ada", "t-1")
    # A long pause refills the bucket to the burst, no further.
    clock.now += 3600
    for _ in range(5):
        limiter.check("ada", "t-1")
    with pytest.raises(ResourceExhausted):
        limiter.check("ada", "t-1")


def test_the_rate_holds_over_time_and_forgotten_buckets_start_full() -> None:
    clock = Clock()
    limiter = ActLimiter(ActLimit(burst=3, per_second=10.0, max_buckets=2), clock=clock)
    let_through = 0
    for _ in range(1000):  # a client trying every millisecond for a second
        clock.now += 0.001
        try:
            limiter.check("ada", "t-1")
            let_through += 1
        except ResourceExhausted:
            pass
    assert 3 + 9 <= let_through <= 3 + 10
    limiter.check("bea", "t-1")
    limiter.check("cem", "t-1")  # ada's bucket, the least recently used, is forgotten
    for _ in range(3):
        limiter.check("ada", "t-1")


def test_the_limit_is_configured_from_the_environment_and_zero_turns_it_off() -> None:
    assert ActLimit.from_environ({}) == ActLimit()
    assert ActLimit.from_environ({BURST_ENV: "7", PER_SECOND_ENV: "1.5"}) == ActLimit(7, 1.5)
    for bad in (
        {BURST_ENV: "0"},
        {PER_SECOND_ENV: "-1"},
        {BURST_ENV: "x"},
        {PER_SECOND_ENV: "inf"},
    ):
        with pytest.raises(ValueError):
            ActLimit.from_environ(bad)
    off = ActLimiter(ActLimit.from_environ({PER_SECOND_ENV: "0"}), clock=Clock())
    for _ in range(10_000):
        off.check("ada", "t-1")
