"""What a push notification says: each pushed kind's title and body in English and Turkish (one
catalogue, kept as ``platform.sentences`` keeps sentences), the data an app deep-links with, and
the key that lets a newer notification about the same table (or tournament) replace an older
one on the device.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Final

from okey.v1 import lobby_pb2

from okey101.platform.sentences import Catalogue

#: Titles (``<KIND>_TITLE``) and bodies (``<KIND>_BODY``) by language. Parameters: ``round``.
CATALOGUE: Final[dict[str, dict[str, str]]] = {
    "TURN_STARTED_TITLE": {"en": "Your turn", "tr": "Sıra sende"},
    "TURN_STARTED_BODY": {
        "en": "It is your move at your Okey table.",
        "tr": "Okey masanda hamle sırası sende.",
    },
    "TOURNAMENT_SEATED_TITLE": {"en": "Your table is ready", "tr": "Masan hazır"},
    "TOURNAMENT_SEATED_BODY": {
        "en": "Round {round} of your tournament: take your seat.",
        "tr": "Turnuvanın {round}. turu başlıyor: yerine geç.",
    },
    "TOURNAMENT_STARTING_TITLE": {"en": "Your tournament is starting", "tr": "Turnuvan başlıyor"},
    "TOURNAMENT_STARTING_BODY": {
        "en": "The tables of the first round are being set now.",
        "tr": "İlk turun masaları şimdi kuruluyor.",
    },
    "TOURNAMENT_CHECK_IN_OPEN_TITLE": {
        "en": "Check in for your tournament",
        "tr": "Turnuvana katılımını onayla",
    },
    "TOURNAMENT_CHECK_IN_OPEN_BODY": {
        "en": "Check-in is open: check in before the start to keep your place.",
        "tr": "Katılım onayı açıldı: yerini korumak için başlangıçtan önce onayla.",
    },
    "TOURNAMENT_CANCELLED_TITLE": {
        "en": "Your tournament was cancelled",
        "tr": "Turnuvan iptal edildi",
    },
    "TOURNAMENT_CANCELLED_BODY": {
        "en": "Your entry fee, if you paid one, is back in your wallet.",
        "tr": "Giriş ücreti ödediysen cüzdanına geri döndü.",
    },
    "SEAT_AWAY_TITLE": {"en": "A bot is playing your seat", "tr": "Yerinde bir bot oynuyor"},
    "SEAT_AWAY_BODY": {
        "en": "Come back to the table to play your seat again.",
        "tr": "Yerini geri almak için masaya dön.",
    },
}


def _unknown(code: str, _language: str, _params: Mapping[str, object]) -> str:
    raise KeyError(code)


TEXTS: Final = Catalogue(CATALOGUE, then=_unknown)
#: The longest collapse key APNs takes (apns-collapse-id: 64 bytes).
COLLAPSE_MAX: Final = 64


def kind_name(kind: int) -> str:
    """``TURN_STARTED`` for ``PLAYER_EVENT_KIND_TURN_STARTED``."""
    return lobby_pb2.PlayerEventKind.Name(kind).removeprefix("PLAYER_EVENT_KIND_")


def title_and_body(event: lobby_pb2.PlayerEvent, language: str) -> tuple[str, str]:
    """The notification's title and body for ``event`` in ``language`` (en or tr)."""
    name = kind_name(event.kind)
    params = {"round": event.round or 1}
    return (
        TEXTS.render(f"{name}_TITLE", language, params),
        TEXTS.render(f"{name}_BODY", language, params),
    )


def data_of(event: lobby_pb2.PlayerEvent) -> dict[str, str]:
    """The event's fields an app opens the right screen with, as strings (FCM's data takes
    strings only): kind and sequence always, the table, seat, tournament, round, deadline and
    start time where the event has them."""
    data = {"kind": kind_name(event.kind), "sequence": str(event.sequence)}
    if event.table_id:
        data["table_id"] = event.table_id
        data["seat"] = str(event.seat)
    if event.tournament_id:
        data["tournament_id"] = event.tournament_id
    if event.round:
        data["round"] = str(event.round)
    if event.HasField("deadline"):
        data["deadline"] = event.deadline.ToJsonString()
    if event.HasField("start_time"):
        data["start_time"] = event.start_time.ToJsonString()
    return data


def collapse_key(event: lobby_pb2.PlayerEvent) -> str:
    """What a newer notification replaces an older one by: its table, else its tournament."""
    key = f"table-{event.table_id}" if event.table_id else f"tournament-{event.tournament_id}"
    if len(key.encode()) > COLLAPSE_MAX:
        key = hashlib.sha256(key.encode()).hexdigest()[:COLLAPSE_MAX]
    return key


__all__ = ["CATALOGUE", "TEXTS", "collapse_key", "data_of", "kind_name", "title_and_body"]
