"""What a google.protobuf.Timestamp may hold: seconds from 0001-01-01 to 9999-12-31 (UTC) and
nanos in [0, 10^9), as its definition says. A request's Timestamp outside that is malformed:
the services refuse it (INVALID_ARGUMENT) rather than fail on it (``ToMicroseconds``, a
database's integer, a datetime) further in.
"""

from __future__ import annotations

from typing import Final, Protocol

#: The seconds a Timestamp may hold.
TIMESTAMP_SECONDS: Final = range(-62_135_596_800, 253_402_300_800)


class _Stamp(Protocol):
    seconds: int
    nanos: int


def holds(stamp: _Stamp) -> bool:
    """``stamp`` is a Timestamp as its definition allows."""
    return stamp.seconds in TIMESTAMP_SECONDS and 0 <= stamp.nanos < 1_000_000_000


__all__ = ["TIMESTAMP_SECONDS", "holds"]
