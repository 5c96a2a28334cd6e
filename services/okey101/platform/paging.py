"""AIP-158 paging: page sizes and opaque, keyset page tokens (the lobby's and scoring's lists).

A token holds the sort key of the last line sent and a fingerprint of the request's other fields
(everything but the page size, the token and the locale), as URL-safe base64 of compact JSON. The
next page continues strictly after that key, so a line whose key does not change is sent exactly
once whatever is inserted meanwhile. A token that does not decode, or that was made for a
different request (another list, another filter), is INVALID_ARGUMENT ``PAGE_TOKEN_INVALID``
(its sentence is the platform's), and a negative page size INVALID_ARGUMENT ``BAD_FIELD``.
Tokens are not secret: a made-up one can only start a page somewhere else in the same list.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from typing import Final

from okey101.platform.errors import InvalidArgument

VERSION: Final = 1
Key = list[str | int | float]


def page_size(requested: int, *, default: int, maximum: int, field: str = "page_size") -> int:
    """The page size to use: the default for 0, at most ``maximum``; negative is refused."""
    if requested < 0:
        raise InvalidArgument("BAD_FIELD", field=field, value=str(requested))
    if requested == 0:
        return default
    return min(requested, maximum)


def fingerprint(*parts: object) -> str:
    """A short digest of the request fields a token is bound to."""
    canonical = json.dumps([str(part) for part in parts], separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def encode_token(key: Sequence[str | int | float], bound_to: str) -> str:
    payload = json.dumps({"v": VERSION, "k": list(key), "f": bound_to}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def decode_token(token: str, bound_to: str, shape: Sequence[type]) -> Key | None:
    """The key in ``token`` (None for the first page), checked against ``bound_to`` and the
    types of ``shape`` (``float`` also takes an int)."""
    if not token:
        return None
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        payload = json.loads(raw)
    except (binascii.Error, ValueError):
        raise InvalidArgument("PAGE_TOKEN_INVALID") from None
    if (
        not isinstance(payload, dict)
        or payload.get("v") != VERSION
        or payload.get("f") != bound_to
        or not isinstance(payload.get("k"), list)
        or len(payload["k"]) != len(shape)
    ):
        raise InvalidArgument("PAGE_TOKEN_INVALID")
    key: Key = []
    for raw_value, kind in zip(payload["k"], shape, strict=True):
        if isinstance(raw_value, bool):
            raise InvalidArgument("PAGE_TOKEN_INVALID")
        value = float(raw_value) if kind is float and isinstance(raw_value, int) else raw_value
        if not isinstance(value, (str, int, float)) or not isinstance(value, kind):
            raise InvalidArgument("PAGE_TOKEN_INVALID")
        key.append(value)
    return key


__all__ = ["decode_token", "encode_token", "fingerprint", "page_size"]
