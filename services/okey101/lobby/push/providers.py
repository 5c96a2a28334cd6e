"""Which push platforms this lobby sends through, from its settings, and their senders.

A platform is configured when its credentials are: FCM by ``push_fcm_credentials_file``, APNs by
``push_apns_key_file`` with the key id, team id and topic, webhooks by
``push_webhook_secret_file``. A file that is set but absent (in a cluster: an optional Secret
nobody created) leaves its platform off, said once in the log; a file that is there but cannot
be used, or an APNs key without its ids, stops the lobby at start (``ConfigError``), since its
operator meant to turn the platform on. ``RegisterPushDevice`` refuses a platform that is off
(FAILED_PRECONDITION, PUSH_PLATFORM_NOT_CONFIGURED).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from okey101.lobby.push.apns import ApnsSender
from okey101.lobby.push.delivery import Sender
from okey101.lobby.push.fcm import FcmSender
from okey101.lobby.push.webhook import WebhookSender, load_secret
from okey101.platform.config import ConfigError, Settings
from okey101.platform.logs import get_logger

_log = get_logger(service="lobby")


@dataclass
class PushProviders:
    """The senders of the configured platforms (by platform name: fcm, apns, webhook)."""

    senders: Mapping[str, Sender] = field(default_factory=dict)
    #: Whether webhooks may be http:// URLs on loopback hosts (tests).
    allow_loopback: bool = False

    @property
    def configured(self) -> frozenset[str]:
        return frozenset(self.senders)

    async def aclose(self) -> None:
        for sender in self.senders.values():
            await sender.aclose()


def _present(path: Path | None, platform: str) -> bool:
    if path is None:
        return False
    if not path.exists():
        _log.info("push platform off: its credentials are not there", platform=platform,
                  path=str(path))  # fmt: skip
        return False
    return True


def providers_for(settings: Settings) -> PushProviders:
    """The configured platforms' senders (module docstring)."""
    senders: dict[str, Sender] = {}
    if _present(settings.push_fcm_credentials_file, "fcm"):
        assert settings.push_fcm_credentials_file is not None
        senders["fcm"] = FcmSender(
            settings.push_fcm_credentials_file, settings.push_fcm_url, settings.push_ca_file
        )
    if _present(settings.push_apns_key_file, "apns"):
        assert settings.push_apns_key_file is not None
        key_id, team_id, topic = (
            settings.push_apns_key_id,
            settings.push_apns_team_id,
            settings.push_apns_topic,
        )
        if not (key_id and team_id and topic):
            raise ConfigError(
                "push_apns_key_file needs push_apns_key_id, push_apns_team_id and push_apns_topic"
            )
        senders["apns"] = ApnsSender(
            settings.push_apns_key_file,
            key_id=key_id,
            team_id=team_id,
            topic=topic,
            base_url=settings.push_apns_url,
            ca_file=settings.push_ca_file,
        )
    if _present(settings.push_webhook_secret_file, "webhook"):
        assert settings.push_webhook_secret_file is not None
        senders["webhook"] = WebhookSender(
            load_secret(settings.push_webhook_secret_file),
            settings.push_ca_file,
            allow_loopback=settings.push_webhook_allow_loopback,
        )
    if senders:
        _log.info("push notifications on", platforms=sorted(senders))
    return PushProviders(senders, allow_loopback=settings.push_webhook_allow_loopback)


__all__ = ["PushProviders", "providers_for"]
