"""Stored answers for request ids (common.proto's IDEMPOTENCY), kept so that a database dump does
not hand out live tokens.

A state-changing call's answer is stored under ``request_key`` = SHA-256 of (method, caller,
request id): the caller is the token's subject, or for calls without a token the identity the
request names (the device, the username, the refresh token's id). The stored payload is the
request's fingerprint and the answer, sealed with AES-256-GCM under a key derived (HKDF-SHA256)
from the request id itself, which the database never holds: an answer with tokens in it (a login,
a refresh) can only be read back by someone who sends the same request id again. Request ids of
logins should therefore be unguessable (a UUID4, as common.proto suggests).

The fingerprint is SHA-256 of the request with its request id, locale and secret fields (password,
guest secret, refresh token) cleared: the secrets are checked against the account before a stored
answer is looked up, so they need not (and must not, even hashed) be kept here. A stored answer
whose fingerprint differs from the retry's is INVALID_ARGUMENT ``REQUEST_ID_REUSED``.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from typing import Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from google.protobuf.message import Message

from okey101.lobby.errors import Invalid

REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
#: Fields never part of a fingerprint: the id itself, the language, and secrets.
UNFINGERPRINTED: Final = frozenset(
    {"request_id", "locale", "password", "guest_secret", "refresh_token"}
)
_SALT: Final = b"okey101-lobby-answers/1"
_NONCE: Final = 12
_FINGERPRINT: Final = 32


def check_request_id(request_id: str) -> str:
    """The request id, which must be there and well formed (INVALID_ARGUMENT otherwise)."""
    if not request_id:
        raise Invalid("FIELD_REQUIRED", field="request_id")
    if REQUEST_ID.fullmatch(request_id) is None:
        raise Invalid("BAD_REQUEST_ID")
    return request_id


def request_key(method: str, caller: str, request_id: str) -> str:
    """Where the answer to ``request_id`` from ``caller`` to ``method`` is stored."""
    text = "\0".join(("okey101-lobby-request", method, caller, request_id))
    return hashlib.sha256(text.encode()).hexdigest()


def fingerprint(request: Message, extra: Iterable[str] = ()) -> bytes:
    """SHA-256 of ``request`` without its request id, locale and secrets (``extra`` may add
    context the request does not carry, such as the caller)."""
    copy = type(request)()
    copy.CopyFrom(request)
    for name in UNFINGERPRINTED:
        if name in copy.DESCRIPTOR.fields_by_name:
            copy.ClearField(name)
    digest = hashlib.sha256(copy.SerializeToString(deterministic=True))
    for part in extra:
        digest.update(b"\0" + part.encode())
    return digest.digest()


def _cipher(method: str, caller: str, request_id: str) -> AESGCM:
    info = "\0".join((method, caller)).encode()
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=info).derive(
        request_id.encode()
    )
    return AESGCM(key)


def seal(method: str, caller: str, request_id: str, print_: bytes, answer: bytes) -> bytes:
    """The stored payload: a nonce, then the sealed fingerprint and answer."""
    nonce = os.urandom(_NONCE)
    key = request_key(method, caller, request_id).encode()
    return nonce + _cipher(method, caller, request_id).encrypt(nonce, print_ + answer, key)


def unseal(method: str, caller: str, request_id: str, payload: bytes) -> tuple[bytes, bytes]:
    """The fingerprint and answer of a stored payload (ValueError if it cannot be opened)."""
    nonce, sealed = payload[:_NONCE], payload[_NONCE:]
    key = request_key(method, caller, request_id).encode()
    try:
        opened = _cipher(method, caller, request_id).decrypt(nonce, sealed, key)
    except InvalidTag:
        raise ValueError("the stored answer cannot be opened with this request id") from None
    return opened[:_FINGERPRINT], opened[_FINGERPRINT:]


__all__ = [
    "REQUEST_ID",
    "check_request_id",
    "fingerprint",
    "request_key",
    "seal",
    "unseal",
]
