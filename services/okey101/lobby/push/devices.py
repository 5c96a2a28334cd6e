"""Players' push devices (``lobby_push_devices``): where a player's notifications go.

A device is a platform (fcm, apns, webhook), its token (the FCM registration token, the APNs
device token in hex, the webhook's URL) and a language (en, tr). A token is one device, whoever
registers it: the row is found by the digest of platform and token, so registering it again
updates its language (and its player: a phone that changed hands), under the same device id.
A token that moves to another player takes none of the first player's notifications with it.

A player keeps at most ``MAX_DEVICES``: registering one more removes the device registered (or
registered again) longest ago, as apps register a fresh token now and then without removing the
old one, and a refusal would leave the newest device, the one in the player's hand, without
notifications. A provider that says a token is gone removes its device (``remove``); so does
``UnregisterPushDevice``. Removing a device removes its notifications not yet sent (the
outbox's rows go with it: ON DELETE CASCADE).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from okey.v1 import lobby_pb2
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.credentials import new_id
from okey101.lobby.errors import Invalid
from okey101.lobby.models import push_devices, push_outbox
from okey101.lobby.push.webhook import url_problem
from okey101.lobby.records import now_us
from okey101.platform.database import Database
from okey101.platform.ids import shown_value

#: A player's devices at most (module docstring).
MAX_DEVICES: Final = 10
#: The longest token (an FCM token is about 160 characters, an APNs one 64; a URL more).
TOKEN_MAX: Final = 4096
#: The platforms by their okey.v1.PushPlatform value, and their names as errors give them.
PLATFORMS: Final[dict[int, str]] = {
    lobby_pb2.PUSH_PLATFORM_FCM: "fcm",
    lobby_pb2.PUSH_PLATFORM_APNS: "apns",
    lobby_pb2.PUSH_PLATFORM_WEBHOOK: "webhook",
}
SHOWN: Final = {"fcm": "FCM", "apns": "APNS", "webhook": "WEBHOOK"}
LANGUAGES: Final = ("en", "tr")
_FCM_TOKEN: Final = re.compile(r"[A-Za-z0-9_:.\-]+")
_APNS_TOKEN: Final = re.compile(r"(?:[0-9a-fA-F]{2}){16,100}")


@dataclass(frozen=True)
class Device:
    """A registered device."""

    device_id: str
    player_id: str
    platform: str
    token: str
    language: str


def platform_of(value: int) -> str:
    """The platform an okey.v1.PushPlatform names (BAD_PUSH_PLATFORM for none)."""
    platform = PLATFORMS.get(value)
    if platform is None:
        raise Invalid("BAD_PUSH_PLATFORM", value=str(value))
    return platform


def checked_token(platform: str, token: str, *, allow_loopback: bool) -> str:
    """``token``, if it can be ``platform``'s (FIELD_REQUIRED, BAD_LENGTH, BAD_PUSH_TOKEN,
    BAD_WEBHOOK_URL otherwise). APNs tokens are kept in lower case."""
    if not token:
        raise Invalid("FIELD_REQUIRED", field="token")
    if len(token) > TOKEN_MAX:
        raise Invalid("BAD_LENGTH", field="token", minimum=1, maximum=TOKEN_MAX)
    if platform == "webhook":
        if url_problem(token, allow_loopback=allow_loopback) is not None:
            raise Invalid("BAD_WEBHOOK_URL")
        return token
    pattern = _APNS_TOKEN if platform == "apns" else _FCM_TOKEN
    if pattern.fullmatch(token) is None:
        raise Invalid("BAD_PUSH_TOKEN", platform=SHOWN[platform])
    return token.lower() if platform == "apns" else token


def checked_language(value: str) -> str:
    """en or tr, from a tag such as ``tr`` or ``tr-TR`` (FIELD_REQUIRED, BAD_PUSH_LANGUAGE)."""
    if not value:
        raise Invalid("FIELD_REQUIRED", field="language")
    primary = value.strip().replace("_", "-").split("-", 1)[0].lower()
    if primary not in LANGUAGES or len(value) > 35:
        raise Invalid("BAD_PUSH_LANGUAGE", language=shown_value(value))
    return primary


def token_digest(platform: str, token: str) -> str:
    """SHA-256 hex of the platform and the token: a device's unique key."""
    return hashlib.sha256(f"{platform}\0{token}".encode()).hexdigest()


class PushDevices:
    """Players' devices (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def register(self, player_id: str, platform: str, token: str, language: str) -> str:
        """The id of the device of ``platform`` and ``token``, now ``player_id``'s, in
        ``language``: made, or found and updated (module docstring). Idempotent by itself:
        the same registration again changes nothing and answers the same id."""
        digest = token_digest(platform, token)

        async def work(session: AsyncConnection) -> str:
            now = now_us()
            c = push_devices.c
            found = (
                await session.execute(
                    select(c.device_id, c.player_id)
                    .where(c.token_digest == digest)
                    .with_for_update()
                )
            ).one_or_none()
            if found is None:
                device_id = new_id("pd")
                await session.execute(
                    push_devices.insert().values(
                        device_id=device_id,
                        player_id=player_id,
                        platform=platform,
                        token=token,
                        token_digest=digest,
                        language=language,
                        created_us=now,
                        registered_us=now,
                    )
                )
            else:
                device_id = str(found.device_id)
                if found.player_id != player_id:
                    # Another player's phone until now: none of their notifications go to it.
                    await session.execute(
                        delete(push_outbox).where(push_outbox.c.device_id == device_id)
                    )
                await session.execute(
                    update(push_devices)
                    .where(c.device_id == device_id)
                    .values(player_id=player_id, language=language, registered_us=now)
                )
            await self._keep_newest(session, player_id)
            return device_id

        try:
            return await self.database.transaction(work)
        except IntegrityError:
            # The same token registered twice at once: the other call made the row.
            return await self.database.transaction(work)

    @staticmethod
    async def _keep_newest(session: AsyncConnection, player_id: str) -> None:
        """Remove the player's devices beyond the ``MAX_DEVICES`` registered last."""
        c = push_devices.c
        extra = (
            await session.scalars(
                select(c.device_id)
                .where(c.player_id == player_id)
                .order_by(c.registered_us.desc(), c.device_id.desc())
                .offset(MAX_DEVICES)
            )
        ).all()
        if extra:
            await session.execute(delete(push_devices).where(c.device_id.in_(extra)))

    async def unregister(self, player_id: str, *, device_id: str = "", token: str = "") -> bool:
        """Remove the player's device ``device_id`` (or the one with ``token``): whether one
        was."""
        c = push_devices.c
        if device_id:
            which = c.device_id == device_id
        else:
            digests = [token_digest(platform, token) for platform in SHOWN]
            digests.append(token_digest("apns", token.lower()))
            which = c.token_digest.in_(digests)

        async def work(session: AsyncConnection) -> bool:
            removed = await session.execute(
                delete(push_devices).where(which, c.player_id == player_id)
            )
            return bool(removed.rowcount)

        return await self.database.transaction(work)

    @staticmethod
    async def remove(session: AsyncConnection, device_ids: Sequence[str]) -> None:
        """Remove devices whose tokens a provider says are gone (with their notifications)."""
        if device_ids:
            await session.execute(
                delete(push_devices).where(push_devices.c.device_id.in_(list(device_ids)))
            )

    async def of_player(self, player_id: str) -> list[Device]:
        """The player's devices, registered last first."""
        c = push_devices.c
        async with self.database.read() as session:
            rows = await session.execute(
                select(c.device_id, c.player_id, c.platform, c.token, c.language)
                .where(c.player_id == player_id)
                .order_by(c.registered_us.desc())
            )
            return [Device(*row) for row in rows]


__all__ = [
    "LANGUAGES",
    "MAX_DEVICES",
    "PLATFORMS",
    "SHOWN",
    "TOKEN_MAX",
    "Device",
    "PushDevices",
    "checked_language",
    "checked_token",
    "platform_of",
    "token_digest",
]
