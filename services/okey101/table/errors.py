"""The table service's own error codes, their statuses and their sentences (English, Turkish).

The class gives the status (``platform.errors``): ``Invalid`` INVALID_ARGUMENT, ``Conflict``
FAILED_PRECONDITION, ``Missing`` NOT_FOUND, ``Denied`` PERMISSION_DENIED, ``Stale`` ABORTED,
``NotReady`` UNAVAILABLE. Codes the platform or the engine own (TABLE_NOT_FOUND, NOT_YOUR_SEAT,
STALE_VERSION, NOT_YOUR_TURN, ...) render from their catalogues.
"""

from __future__ import annotations

from okey101.engine.errors import InvalidInput, RuleViolation
from okey101.platform.errors import Aborted, NotFound, PermissionDenied, Unavailable
from okey101.platform.sentences import PLATFORM, Catalogue, Catalogued

CATALOGUE: dict[str, dict[str, str]] = {
    # Malformed requests.
    "REQUEST_ID_REUSED": {
        "en": "Request id {request_id} was already used for a different request: use a new id "
        "for a new change.",
        "tr": "{request_id} istek kimliği başka bir istek için kullanıldı: yeni bir değişiklik "
        "için yeni bir kimlik kullan.",
    },
    "SEQUENCE_AHEAD": {
        "en": "Sequence number {after_sequence} is ahead of the table's last event "
        "({last_sequence}).",
        "tr": "{after_sequence} sıra numarası masanın son olayından ({last_sequence}) ileride.",
    },
    # Staked tables (#36).
    "STAKE_TOO_LARGE": {
        "en": "A table's stake is at most {maximum} chips, not {stake}.",
        "tr": "Bir masanın bahsi en fazla {maximum} çip olabilir, {stake} değil.",
    },
    "BAD_FEE_PERCENT": {
        "en": "The table fee is at most {maximum} percent of the pot, not {fee_percent}.",
        "tr": "Masa ücreti potun en fazla yüzde {maximum} kadarı olabilir, {fee_percent} değil.",
    },
    "FEE_WITHOUT_STAKE": {
        "en": "A table fee needs a stake: a table that stakes no chips keeps no fee.",
        "tr": "Masa ücreti için bahis gerekir: çip bahsi olmayan masa ücret almaz.",
    },
    "STAKED_TABLE_JOIN_THROUGH_LOBBY": {
        "en": "Join staked tables through the lobby, which holds your stake.",
        "tr": "Bahisli masalara, bahsini tutan lobi üzerinden katıl.",
    },
    "TABLE_NOT_STAKED": {
        "en": "This table stakes no chips: sit without a stake hold.",
        "tr": "Bu masada çip bahsi yok: bahis tutmadan otur.",
    },
    # Match deadlines (#37: a tournament round's time limit).
    "MATCH_DEADLINE_PASSED": {
        "en": "The match deadline {deadline} has already passed: give a time still to come.",
        "tr": "{deadline} maç bitiş zamanı çoktan geçti: henüz gelmemiş bir zaman ver.",
    },
    "BAD_MATCH_DEADLINE": {
        "en": "The match deadline ({seconds} s, {nanos} ns) is not a time a Timestamp can hold "
        "(years 1 to 9999, nanos 0 to 999,999,999).",
        "tr": "Maç bitiş zamanı ({seconds} sn, {nanos} ns) bir Timestamp'in tutabileceği bir "
        "zaman değil (1 ile 9999 yılları arası, nanosaniye 0 ile 999.999.999 arası).",
    },
    # State conflicts.
    "SEAT_TAKEN": {
        "en": "Seat {seat} is taken.",
        "tr": "{seat} numaralı koltuk dolu.",
    },
    "NO_FREE_SEAT": {
        "en": "Every seat at this table is taken.",
        "tr": "Bu masadaki bütün koltuklar dolu.",
    },
    "ALREADY_SEATED": {
        "en": "You already sit at seat {seat} of this table.",
        "tr": "Bu masada zaten {seat} numaralı koltukta oturuyorsun.",
    },
    "NOT_SEATED": {
        "en": "You do not sit at this table.",
        "tr": "Bu masada oturmuyorsun.",
    },
    "SEAT_FORFEITED": {
        "en": "Seat {seat} was forfeited: a bot plays it to the end of the match, and it cannot "
        "be taken back.",
        "tr": "{seat} numaralı yer hükmen kaybedildi: maçın sonuna dek onu bir bot oynuyor ve "
        "geri alınamaz.",
    },
    "SEAT_NOT_AWAY": {
        "en": "Seat {seat} is not away: there is nothing to return to.",
        "tr": "{seat} numaralı koltuk boşta değil: dönülecek bir şey yok.",
    },
    "SEATS_EMPTY": {
        "en": "Seats {seats} are empty: fill them (or start with bots).",
        "tr": "{seats} numaralı koltuklar boş: doldur (ya da botlarla başlat).",
    },
    "ALREADY_STARTED": {
        "en": "The match at this table has already started.",
        "tr": "Bu masadaki maç zaten başladı.",
    },
    "TABLE_FINISHED": {
        "en": "The match at this table is over.",
        "tr": "Bu masadaki maç bitti.",
    },
    "TABLE_CLOSED": {
        "en": "This table is closed.",
        "tr": "Bu masa kapatıldı.",
    },
    "TABLE_NOT_PLAYING": {
        "en": "The match at this table is not being played.",
        "tr": "Bu masada oynanan bir maç yok.",
    },
    "TABLE_CONTENDED": {
        "en": "The table kept changing while your request was being applied: look at it again "
        "and retry.",
        "tr": "İsteğin uygulanırken masa sürekli değişti: masaya yeniden bakıp tekrar dene.",
    },
    "HAND_NOT_IN_PLAY": {
        "en": "No hand is in play at this table just now; the next one is being dealt.",
        "tr": "Bu masada şu anda oynanan bir el yok; sıradaki el dağıtılıyor.",
    },
    "HAND_IN_PLAY": {
        "en": "Hand {hand_id} is still in play: its record opens when it ends.",
        "tr": "{hand_id} eli hâlâ oynanıyor: kaydı el bitince açılır.",
    },
    "SEAT_NOT_RESERVED_FOR_YOU": {
        "en": "Seat {seat} is reserved for another player.",
        "tr": "{seat} numaralı koltuk başka bir oyuncuya ayrıldı.",
    },
    # Seats and invite codes (the lobby's statuses and parameters: INVALID_ARGUMENT, NOT_FOUND).
    "BAD_SEAT": {
        "en": "A seat is 0, 1, 2 or 3, not {seat}.",
        "tr": "Koltuk 0, 1, 2 ya da 3 olur, {seat} değil.",
    },
    "BAD_INVITE_CODE": {
        "en": "That invite code does not open this table.",
        "tr": "Bu davet kodu bu masayı açmıyor.",
    },
    # Permissions.
    "NOT_THE_HOST": {
        "en": "Only the table's host may do this.",
        "tr": "Bunu yalnızca masanın sahibi yapabilir.",
    },
    "PRIVATE_TABLE": {
        "en": "This table is private: only its players may watch it.",
        "tr": "Bu masa özel: yalnızca oyuncuları izleyebilir.",
    },
    "NOT_AT_HAND": {
        "en": "You did not sit at hand {hand_id}.",
        "tr": "{hand_id} elinde oturmadın.",
    },
    # Dependencies.
    "RULES_UNAVAILABLE": {
        "en": "The rules service cannot be reached just now; try again.",
        "tr": "Kural servisine şu anda ulaşılamıyor; tekrar dene.",
    },
    "BOT_UNAVAILABLE": {
        "en": "The bot service cannot be reached just now; try again.",
        "tr": "Bot servisine şu anda ulaşılamıyor; tekrar dene.",
    },
    "DATABASE_UNAVAILABLE": {
        "en": "The table database cannot be reached just now; try again.",
        "tr": "Masa veritabanına şu anda ulaşılamıyor; tekrar dene.",
    },
}

#: This service's sentences, over the platform's and the engine's.
SENTENCES = Catalogue(CATALOGUE, then=PLATFORM.render)
render = SENTENCES.render


class _Catalogued(Catalogued):
    catalogue = SENTENCES


class Invalid(_Catalogued, InvalidInput):
    """Malformed input: INVALID_ARGUMENT."""


class Conflict(_Catalogued, RuleViolation):
    """Well formed, but the table's state does not allow it now: FAILED_PRECONDITION."""


class Missing(_Catalogued, NotFound):
    """No such table or hand: NOT_FOUND."""


class Denied(_Catalogued, PermissionDenied):
    """Someone else's seat, or a table the caller may not see: PERMISSION_DENIED."""


class Stale(_Catalogued, Aborted):
    """Decided on a state that has since changed: ABORTED."""


class NotReady(_Catalogued, Unavailable):
    """A dependency cannot be reached: UNAVAILABLE (retry with the same request id)."""


__all__ = [
    "CATALOGUE",
    "SENTENCES",
    "Conflict",
    "Denied",
    "Invalid",
    "Missing",
    "NotReady",
    "Stale",
    "render",
]
