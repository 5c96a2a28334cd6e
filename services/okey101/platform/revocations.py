"""The logins revoked lately, as one process knows them, and the streams they must end.

An access token is a signed JWT, valid until its ``exp`` wherever it is shown: logging out
(``LobbyService.Logout``) or a stolen refresh token (``REFRESH_TOKEN_REUSED``) revokes the
*login* in the lobby's database, but the access tokens it was given would live on for their
lifetime (15 minutes by default) and the streams they opened for longer. So every access token
names its login (claim ``sid``, the refresh-token family), the lobby lists the logins revoked
lately (``ListRevokedLogins``), and every service follows that list (``revocation_follower``)
into one ``RevokedLogins`` per process, which the auth interceptor consults: a call with a
revoked login's token is UNAUTHENTICATED ``TOKEN_REVOKED``, and an open stream of that login is
ended with the same error as soon as the revocation is known (within the poll interval).

A login is remembered until its last access token has expired (``forget_after``, which the lobby
gives with each entry): after that, expiry refuses its tokens anyway.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

#: How many revoked logins one process remembers at most (oldest forgotten first); far more than
#: the logouts of an access token's lifetime.
REMEMBERED_AT_MOST: Final = 200_000


@dataclass(frozen=True)
class RevokedLogin:
    """One revoked login: its id (the tokens' ``sid``) and when it may be forgotten (seconds
    since the epoch; its last access token has expired by then)."""

    session_id: str
    forget_after: float


Unwatch = Callable[[], None]


class RevokedLogins:
    """The revoked logins one process knows, and callbacks waiting for a login to be revoked
    (its open streams). Runs on the event loop's thread only: no locks."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._revoked: dict[str, float] = {}
        self._watchers: dict[str, dict[int, Callable[[], None]]] = {}
        self._next_watch = 0

    def __len__(self) -> int:
        return len(self._revoked)

    def is_revoked(self, session_id: str | None) -> bool:
        """Whether ``session_id`` names a login revoked and not yet forgotten."""
        if session_id is None or not self._revoked:
            return False
        forget_after = self._revoked.get(session_id)
        return forget_after is not None and self._clock() < forget_after

    def add(self, logins: Iterable[RevokedLogin]) -> int:
        """Remember ``logins`` and call the watchers of each; how many were new."""
        now = self._clock()
        new = 0
        for login in logins:
            if login.forget_after <= now:
                continue
            if login.session_id not in self._revoked:
                new += 1
            self._revoked[login.session_id] = max(
                login.forget_after, self._revoked.get(login.session_id, 0.0)
            )
            for callback in list(self._watchers.pop(login.session_id, {}).values()):
                callback()
        self._forget(now)
        return new

    def watch(self, session_id: str, on_revoked: Callable[[], None]) -> Unwatch:
        """Call ``on_revoked`` once if ``session_id`` is revoked (at once if it already is);
        the function returned stops watching."""
        if self.is_revoked(session_id):
            on_revoked()
            return lambda: None
        key = self._next_watch
        self._next_watch += 1
        self._watchers.setdefault(session_id, {})[key] = on_revoked

        def unwatch() -> None:
            watchers = self._watchers.get(session_id)
            if watchers is not None:
                watchers.pop(key, None)
                if not watchers:
                    del self._watchers[session_id]

        return unwatch

    @property
    def watched(self) -> int:
        """How many callbacks wait (one per open stream with a login)."""
        return sum(len(watchers) for watchers in self._watchers.values())

    def _forget(self, now: float) -> None:
        expired = [sid for sid, forget_after in self._revoked.items() if forget_after <= now]
        for sid in expired:
            del self._revoked[sid]
        while len(self._revoked) > REMEMBERED_AT_MOST:
            del self._revoked[next(iter(self._revoked))]


__all__ = ["REMEMBERED_AT_MOST", "RevokedLogin", "RevokedLogins", "Unwatch"]
