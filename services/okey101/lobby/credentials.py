"""Secrets the lobby hands out and checks: passwords, guest secrets, refresh tokens.

- Passwords are hashed with Argon2id (argon2-cffi's ``PasswordHasher``, RFC 9106's second
  recommended profile by default) in a worker thread, so a login does not stall the event loop.
  A login for an unknown username verifies against a dummy hash all the same, so its timing does
  not tell whether the username exists. A hash made with older parameters is re-hashed on the next
  successful login.
- A guest secret is 32 random bytes (URL-safe base64); a refresh token is
  ``rt1.<token id>.<secret>`` with a 32-byte random secret. Both are high-entropy random values,
  so the database keeps their SHA-256 (a slow hash would add nothing but cost) and compares in
  constant time.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from typing import Final

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

REFRESH_PREFIX: Final = "rt1"
SECRET_BYTES: Final = 32


def new_id(prefix: str) -> str:
    """A fresh random id such as ``p_3f2a...`` (32 hex digits after the prefix)."""
    return f"{prefix}_{uuid.uuid4().hex}"


def new_secret() -> str:
    return secrets.token_urlsafe(SECRET_BYTES)


def digest(secret: str) -> str:
    """SHA-256 hex of a high-entropy secret (guest secrets, refresh tokens)."""
    return hashlib.sha256(secret.encode()).hexdigest()


def same_digest(secret: str, stored: str | None) -> bool:
    """Whether ``secret`` hashes to ``stored`` (constant time)."""
    return stored is not None and hmac.compare_digest(digest(secret), stored)


@dataclass(frozen=True)
class RefreshToken:
    """A refresh token as sent to the client, and its parts."""

    token_id: str
    secret: str

    def __str__(self) -> str:
        return f"{REFRESH_PREFIX}.{self.token_id}.{self.secret}"

    @classmethod
    def new(cls) -> RefreshToken:
        return cls(new_id("rt"), new_secret())

    @classmethod
    def parse(cls, text: str) -> RefreshToken | None:
        """The token's parts, or None if it is not shaped like one of ours."""
        prefix, _, rest = text.partition(".")
        token_id, _, secret = rest.partition(".")
        if prefix != REFRESH_PREFIX or not token_id or not secret or len(text) > 200:
            return None
        return cls(token_id, secret)


class Passwords:
    """Argon2id hashing of account passwords (module docstring)."""

    def __init__(self, hasher: PasswordHasher | None = None) -> None:
        self._hasher = hasher or PasswordHasher()
        self._dummy: str | None = None

    async def hash(self, password: str) -> str:
        return await asyncio.to_thread(self._hasher.hash, password)

    async def verify(self, stored: str | None, password: str) -> tuple[bool, str | None]:
        """Whether ``password`` matches ``stored`` (None: an unknown account, checked against a
        dummy hash for even timing), and a new hash when the stored one should be upgraded."""

        def check() -> tuple[bool, str | None]:
            if stored is None:
                if self._dummy is None:
                    self._dummy = self._hasher.hash(new_secret())
                with contextlib.suppress(VerificationError, InvalidHashError):
                    self._hasher.verify(self._dummy, password)
                return False, None
            try:
                self._hasher.verify(stored, password)
            except (VerificationError, InvalidHashError):
                return False, None
            if self._hasher.check_needs_rehash(stored):
                return True, self._hasher.hash(password)
            return True, None

        return await asyncio.to_thread(check)


__all__ = [
    "REFRESH_PREFIX",
    "Passwords",
    "RefreshToken",
    "digest",
    "new_id",
    "new_secret",
    "same_digest",
]
