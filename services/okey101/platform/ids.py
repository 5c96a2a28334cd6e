"""Request ids and the ids a request names: one check for every service.

A state-changing call carries a ``request_id`` (common.proto's IDEMPOTENCY): 1 to 64 characters
of ``A-Z a-z 0-9 . _ : -``. Missing, it is INVALID_ARGUMENT ``FIELD_REQUIRED``; malformed,
INVALID_ARGUMENT ``BAD_REQUEST_ID`` in every service (the sentence says the format; the value is
not quoted back). An id a request names (a table, a player, a hand) is at most
``schema.ID_LENGTH`` printable characters, else INVALID_ARGUMENT ``BAD_FIELD`` with the field and
the value as the caller sent it, cut to ``SHOWN_MAX`` characters.
"""

from __future__ import annotations

import re
from typing import Final

from okey101.platform.errors import InvalidArgument
from okey101.platform.schema import ID_LENGTH

#: A well-formed request id (common.proto).
REQUEST_ID: Final = re.compile(r"[A-Za-z0-9._:-]{1,64}")
#: The most of a refused value an error quotes back (with "..." after it when cut).
SHOWN_MAX: Final = 40


def check_request_id(value: str) -> str:
    """``value``, a request id that is there and well formed (module docstring)."""
    if not value:
        raise InvalidArgument("FIELD_REQUIRED", field="request_id")
    if REQUEST_ID.fullmatch(value) is None:
        raise InvalidArgument("BAD_REQUEST_ID")
    return value


def check_id(value: str, field: str, *, required: bool = True) -> str:
    """``value``, an id the request names in ``field`` (module docstring); "" may stand for
    none where it is not ``required``."""
    if not value:
        if required:
            raise InvalidArgument("FIELD_REQUIRED", field=field)
        return value
    if len(value) > ID_LENGTH or not value.isprintable():
        raise InvalidArgument("BAD_FIELD", field=field, value=shown_value(value))
    return value


def shown_value(value: str) -> str:
    """``value`` as an error quotes it back: its first ``SHOWN_MAX`` characters."""
    return value if len(value) <= SHOWN_MAX else value[: SHOWN_MAX - 3] + "..."


__all__ = ["REQUEST_ID", "SHOWN_MAX", "check_id", "check_request_id", "shown_value"]
