"""The lobby's own error codes, their statuses and their sentences (English, Turkish).

The class gives the status (``platform.errors``): ``Invalid`` INVALID_ARGUMENT, ``Conflict``
FAILED_PRECONDITION, ``Missing`` NOT_FOUND, ``Denied`` PERMISSION_DENIED, ``Unauthorized``
UNAUTHENTICATED, ``Exists`` ALREADY_EXISTS (``status_of`` below: the platform has no class for
it), ``Limited`` RESOURCE_EXHAUSTED, ``NotReady`` UNAVAILABLE. Each renders its sentence from
``CATALOGUE`` here, falling back to the platform's and the engine's catalogues for codes they own
(TABLE_NOT_FOUND, PLAYER_NOT_FOUND, RATE_LIMITED, PAGE_TOKEN_INVALID, BAD_FIELD, ...).

No parameter ever holds a password, a secret or a token: parameters go back to the caller as
ErrorInfo metadata, and a length rule is named instead of the value.
"""

from __future__ import annotations

from typing import ClassVar

import grpc
from google.rpc import status_pb2

from okey101.engine.errors import InvalidInput, OkeyError, RuleViolation
from okey101.platform.errors import (
    Language,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
    rich_status,
)
from okey101.platform.sentences import PLATFORM, Catalogue, Catalogued

CATALOGUE: dict[str, dict[str, str]] = {
    # Malformed requests.
    "BAD_USERNAME": {
        "en": "A username is 3 to 32 characters of a-z, 0-9, '_', '.' and '-'.",
        "tr": "Kullanıcı adı a-z, 0-9, '_', '.' ve '-' karakterlerinden 3 ile 32 tane olmalı.",
    },
    "PLAYER_EVENTS_EXPIRED": {
        "en": "The events after {after_sequence} are no longer kept (they are kept a day; the "
        "oldest is {oldest_sequence}): watch again with start_with_snapshot.",
        "tr": "{after_sequence} sonrasındaki olaylar artık saklanmıyor (bir gün saklanır; en "
        "eskisi {oldest_sequence}): start_with_snapshot ile yeniden izle.",
    },
    "PLAYER_SEQUENCE_AHEAD": {
        "en": "Sequence number {after_sequence} is ahead of your last event ({last_sequence}).",
        "tr": "{after_sequence} sıra numarası son olayından ({last_sequence}) ileride.",
    },
    "REQUEST_ID_REUSED": {
        "en": "This request_id was already used for a different request; use a new one.",
        "tr": "Bu request_id başka bir istek için kullanıldı; yenisini kullan.",
    },
    "DUPLICATE_SEAT": {
        "en": "Seat {seat} is named twice.",
        "tr": "{seat} numaralı koltuk iki kez geçiyor.",
    },
    "BAD_SEAT": {
        "en": "A seat is 0, 1, 2 or 3, not {seat}.",
        "tr": "Koltuk 0, 1, 2 ya da 3 olur, {seat} değil.",
    },
    "BAD_START_TIME": {
        "en": "The start time {value} is not valid: a tournament's {field} must be in the future "
        "and at most a year ahead.",
        "tr": "{value} başlangıç zamanı geçersiz: turnuvanın {field} değeri gelecekte ve en çok "
        "bir yıl sonra olmalı.",
    },
    "BAD_REGISTRATION_WINDOW": {
        "en": "The registration window is not valid ({problem}): registration opens before a "
        "scheduled start, and only a tournament with a start_time has a registration_open_time.",
        "tr": "Kayıt aralığı geçersiz ({problem}): kayıt, planlanmış başlangıçtan önce açılır; "
        "registration_open_time yalnızca start_time'ı olan bir turnuvada verilebilir.",
    },
    "BAD_CHECK_IN_WINDOW": {
        "en": "A check-in window of {minutes} minutes does not fit: it needs a scheduled start "
        "and may be at most as long as the registration window ({window} minutes), and at most "
        "1,440 minutes.",
        "tr": "{minutes} dakikalık katılım onayı aralığı sığmıyor: planlanmış bir başlangıç "
        "gerekir ve en çok kayıt aralığı kadar ({window} dakika), en çok da 1.440 dakika olabilir.",
    },
    "BAD_RECURRENCE": {
        "en": "The recurrence is not valid ({problem}): daily or weekly on ISO weekdays 1-7 "
        "(each once, at least one), a local time as HH:MM, an IANA time zone such as "
        "Europe/Istanbul, registration opening 0-336 hours ahead, 1-14 occurrences ahead, and "
        "no start_time or registration_open_time beside it.",
        "tr": "Tekrar kuralı geçersiz ({problem}): her gün ya da ISO hafta günlerinde (1-7, her "
        "biri bir kez, en az bir gün) haftalık, SS:DD biçiminde yerel saat, Europe/Istanbul gibi "
        "bir IANA saat dilimi, kaydın 0-336 saat önce açılması, önceden 1-14 turnuva; yanında "
        "start_time ya da registration_open_time olmadan.",
    },
    "BAD_PRIZE_OVER_ENTRIES": {
        "en": "The prizes pay more than the entries bring: {fixed} chips in fixed prizes and "
        "{shares}% of the pool, where {min_players} entrants at the least bring {pool} chips. An "
        "organiser's prizes come from the entry fees; only an operator guarantees more.",
        "tr": "Ödüller girişlerin getirdiğinden fazlasını ödüyor: sabit ödüllerde {fixed} çip ve "
        "havuzun %{shares}'i; en az {min_players} katılımcı {pool} çip getirir. Organizatörün "
        "ödülleri giriş ücretlerinden gelir; daha fazlasını yalnızca işletmeci garanti eder.",
    },
    "BAD_PACE": {
        "en": "The pace is not valid: {field} is {value}; a round's time limit is 0-600 "
        "minutes and a break between rounds 0-3,600 seconds.",
        "tr": "Tempo geçersiz: {field} değeri {value}; bir turun süre sınırı 0-600 dakika, "
        "turlar arası mola 0-3.600 saniye olabilir.",
    },
    "TOURNAMENT_NOT_RUNNING": {
        "en": "Tournament {tournament_id} is not running (it is {state}).",
        "tr": "{tournament_id} turnuvası şu an oynanmıyor (durumu: {state}).",
    },
    "REGISTRATION_NOT_OPEN": {
        "en": "Registration for tournament {tournament_id} opens at {opens}.",
        "tr": "{tournament_id} turnuvasının kaydı {opens} zamanında açılır.",
    },
    "CHECK_IN_NOT_OPEN": {
        "en": "Check-in for tournament {tournament_id} opens at {opens}.",
        "tr": "{tournament_id} turnuvasının katılım onayı {opens} zamanında açılır.",
    },
    "NO_CHECK_IN": {
        "en": "Tournament {tournament_id} has no check-in: being registered is enough.",
        "tr": "{tournament_id} turnuvasında katılım onayı yok: kayıtlı olmak yeterli.",
    },
    "SERIES_NOT_FOUND": {
        "en": "There is no tournament series {series_id}.",
        "tr": "{series_id} diye bir turnuva serisi yok.",
    },
    "BAD_NO_SHOW_POLICY": {
        "en": "The no-show policy is not valid: missed_turns is {missed_turns}; a player may lose "
        "their seat to a bot from 1 to {maximum} times in a match before they are forfeited (0 "
        "for the default, {default}).",
        "tr": "Gelmeyen oyuncu kuralı geçersiz: missed_turns {missed_turns}; bir oyuncunun yeri "
        "bir maçta hükmen yenik sayılmadan önce 1 ile {maximum} kez arasında bota geçebilir "
        "(varsayılan için 0: {default}).",
    },
    "BAD_PRIZE": {
        "en": "The prize for place {place} is not valid: a prize table names at most {maximum} "
        "places, each from 1 to {max_players} and only once, each with a fixed amount (1 to "
        "1,000,000,000,000 chips) or a share of the pool (1-100%), the shares adding up to 100% "
        "at most (so far {shares}%).",
        "tr": "{place}. sıranın ödülü geçersiz: ödül tablosu en çok {maximum} sıra sayar; her "
        "sıra 1 ile {max_players} arasında ve bir kez yer alır, ya sabit bir miktar (1 ile "
        "1.000.000.000.000 çip) ya da havuzdan bir pay (%1-100) kazanır; payların toplamı %100'ü "
        "geçemez (şu ana dek %{shares}).",
    },
    "BAD_CATEGORY": {
        "en": "A tournament's category is up to 32 characters of a-z, 0-9 and '-' (such as "
        "weekly or beginners), not {value}.",
        "tr": "Turnuva kategorisi a-z, 0-9 ve '-' karakterlerinden en çok 32 tane olur "
        "(örneğin weekly ya da beginners), {value} değil.",
    },
    # Push devices (RegisterPushDevice; docs/push.md).
    "BAD_PUSH_PLATFORM": {
        "en": "A push platform is FCM, APNS or WEBHOOK, not {value}.",
        "tr": "Bildirim platformu FCM, APNS ya da WEBHOOK olur, {value} değil.",
    },
    "BAD_PUSH_TOKEN": {
        "en": "This is not a {platform} token: an FCM registration token is letters, digits "
        "and -_:. without spaces; an APNs device token is hexadecimal digits.",
        "tr": "Bu bir {platform} anahtarı değil: FCM kayıt anahtarı boşluksuz harf, rakam ve "
        "-_:. karakterlerinden oluşur; APNs cihaz anahtarı onaltılık rakamlardan.",
    },
    "BAD_WEBHOOK_URL": {
        "en": "A webhook is an https:// URL with a host name and no user or password in it; "
        "addresses of private networks are refused.",
        "tr": "Webhook, içinde kullanıcı adı ya da şifre olmayan, bir sunucu adı taşıyan "
        "https:// adresidir; özel ağ adresleri kabul edilmez.",
    },
    "BAD_PUSH_LANGUAGE": {
        "en": "A device's notifications are in English (en) or Turkish (tr), not {language}.",
        "tr": "Cihaz bildirimleri İngilizce (en) ya da Türkçe (tr) olur, {language} değil.",
    },
    "PUSH_PLATFORM_NOT_CONFIGURED": {
        "en": "This server sends no notifications through {platform}: its operator has not "
        "configured it. Use another platform, or keep WatchPlayer open.",
        "tr": "Bu sunucu {platform} üzerinden bildirim göndermiyor: işletmecisi bunu "
        "yapılandırmamış. Başka bir platform kullan ya da WatchPlayer akışını açık tut.",
    },
    # Chips (docs/chips.md).
    "BAD_STAKE": {
        "en": "A table is played for one of these stakes: {stakes} chips (or 0, for no stake), "
        "not {stake}.",
        "tr": "Masa şu bahislerden biriyle oynanır: {stakes} çip (ya da bahissiz için 0), "
        "{stake} değil.",
    },
    "BAD_CHIP_AMOUNT": {
        "en": "An amount of chips is a whole number from -{maximum} to {maximum} and not 0; "
        "{amount} was sent.",
        "tr": "Çip miktarı -{maximum} ile {maximum} arasında, 0 olmayan bir tam sayıdır; "
        "{amount} gönderildi.",
    },
    "INSUFFICIENT_CHIPS": {
        "en": "You have {balance} chips; this needs {needed}.",
        "tr": "{balance} çipin var; bunun için {needed} çip gerekiyor.",
    },
    "DAILY_CHIPS_NOT_DUE": {
        "en": "You have claimed your daily chips; you can claim them again from {next_claim_time}.",
        "tr": "Günlük çiplerini aldın; {next_claim_time} itibarıyla yeniden alabilirsin.",
    },
    "DAILY_CHIPS_DISABLED": {
        "en": "This server gives no daily chips.",
        "tr": "Bu sunucu günlük çip vermiyor.",
    },
    "CHIP_POT_CLOSED": {
        "en": "The pot of table {table_id} takes no more stakes: its match has started or ended.",
        "tr": "{table_id} masasının potu artık bahis almıyor: maçı başladı ya da bitti.",
    },
    "CHIP_BALANCE_LIMIT": {
        "en": "This would take a balance past {limit} chips, the most the ledger holds.",
        "tr": "Bu, bir bakiyeyi defterin tutabileceği en çok miktar olan {limit} çipin "
        "ötesine taşır.",
    },
    # Who you are.
    "GUEST_SECRET_REQUIRED": {
        "en": "This device has logged in before: send the guest secret its first login gave.",
        "tr": "Bu cihaz daha önce giriş yaptı: ilk girişte verilen misafir sırrını gönder.",
    },
    "BAD_GUEST_SECRET": {
        "en": "The guest secret does not match this device.",
        "tr": "Misafir sırrı bu cihazla eşleşmiyor.",
    },
    "BAD_CREDENTIALS": {
        "en": "The username or the password is wrong.",
        "tr": "Kullanıcı adı ya da şifre yanlış.",
    },
    "REFRESH_TOKEN_INVALID": {
        "en": "The refresh token is not valid; log in again.",
        "tr": "Yenileme anahtarı geçerli değil; yeniden giriş yap.",
    },
    "REFRESH_TOKEN_EXPIRED": {
        "en": "The refresh token has expired; log in again.",
        "tr": "Yenileme anahtarının süresi doldu; yeniden giriş yap.",
    },
    "REFRESH_TOKEN_REVOKED": {
        "en": "The refresh token was revoked (logged out); log in again.",
        "tr": "Yenileme anahtarı iptal edildi (çıkış yapıldı); yeniden giriş yap.",
    },
    "REFRESH_TOKEN_REUSED": {
        "en": "This refresh token was already used, so every token of this login is now "
        "revoked; log in again.",
        "tr": "Bu yenileme anahtarı daha önce kullanıldı; bu yüzden bu girişin tüm anahtarları "
        "iptal edildi. Yeniden giriş yap.",
    },
    # State.
    "USERNAME_TAKEN": {
        "en": "The username {username} is taken.",
        "tr": "{username} kullanıcı adı alınmış.",
    },
    "GUEST_UPGRADED": {
        "en": "This device's guest has become the account {username}: log in with it.",
        "tr": "Bu cihazın misafiri {username} hesabına dönüştü: o hesapla giriş yap.",
    },
    "ALREADY_ACCOUNT": {
        "en": "You already have an account.",
        "tr": "Zaten bir hesabın var.",
    },
    "TOURNAMENT_FULL": {
        "en": "Tournament {tournament_id} is full ({max_players} players).",
        "tr": "{tournament_id} turnuvası dolu ({max_players} oyuncu).",
    },
    "NOT_REGISTERED": {
        "en": "You are not registered for tournament {tournament_id}.",
        "tr": "{tournament_id} turnuvasına kayıtlı değilsin.",
    },
    "TOURNAMENT_NOT_REGISTERING": {
        "en": "Tournament {tournament_id} no longer takes registrations (it is {state}).",
        "tr": "{tournament_id} turnuvası artık kayıt almıyor (durumu: {state}).",
    },
    "TOURNAMENT_TOO_FEW_PLAYERS": {
        "en": "Tournament {tournament_id} needs at least {minimum} registered players to start, "
        "it has {registered}.",
        "tr": "{tournament_id} turnuvasının başlaması için en az {minimum} kayıtlı oyuncu "
        "gerekir, {registered} var.",
    },
    "ORGANISER_NEEDS_ACCOUNT": {
        "en": "Player {player_id} is a guest: only a registered account can be an organiser.",
        "tr": "{player_id} oyuncusu misafir: yalnızca kayıtlı bir hesap organizatör olabilir.",
    },
    "TOURNAMENT_FINISHED": {
        "en": "Tournament {tournament_id} has finished; it can no longer be cancelled.",
        "tr": "{tournament_id} turnuvası bitti; artık iptal edilemez.",
    },
    # Permission.
    "NOT_TOURNAMENT_CREATOR": {
        "en": "Only the creator of tournament {tournament_id} may start or cancel it.",
        "tr": "{tournament_id} turnuvasını yalnızca onu kuran başlatabilir ya da iptal edebilir.",
    },
    "NOT_AN_ORGANISER": {
        "en": "Only organisers may create tournaments; ask an operator to make your account "
        "an organiser.",
        "tr": "Turnuvaları yalnızca organizatörler oluşturabilir; hesabını organizatör yapması "
        "için bir operatöre başvur.",
    },
    "NOT_YOUR_TICKET": {
        "en": "Quick-match ticket {ticket_id} is not yours.",
        "tr": "{ticket_id} hızlı oyun bileti senin değil.",
    },
    "PLAYER_TOKEN_REQUIRED": {
        "en": "This call needs a player's token.",
        "tr": "Bu çağrı bir oyuncu anahtarı (token) ister.",
    },
    # Lookups.
    "BAD_INVITE_CODE": {
        "en": "No table has the invite code {invite_code}.",
        "tr": "{invite_code} davet kodlu bir masa yok.",
    },
    "TOURNAMENT_NOT_FOUND": {
        "en": "There is no tournament {tournament_id}.",
        "tr": "{tournament_id} numaralı bir turnuva yok.",
    },
    "TICKET_NOT_FOUND": {
        "en": "There is no quick-match ticket {ticket_id}.",
        "tr": "{ticket_id} numaralı bir hızlı oyun bileti yok.",
    },
    # Serving.
    "SERVICE_STARTING": {
        "en": "The lobby is still starting; try again in a moment.",
        "tr": "Lobi henüz açılıyor; birazdan tekrar dene.",
    },
    "DATABASE_UNAVAILABLE": {
        "en": "The lobby's database cannot be reached just now; try again.",
        "tr": "Lobinin veritabanına şu anda ulaşılamıyor; tekrar dene.",
    },
    "PEER_UNAVAILABLE": {
        "en": "The {service} service cannot be reached just now; try again.",
        "tr": "{service} servisine şu anda ulaşılamıyor; tekrar dene.",
    },
}


#: This service's sentences, over the platform's and the engine's.
SENTENCES = Catalogue(CATALOGUE, then=PLATFORM.render)
render = SENTENCES.render


class _Catalogued(Catalogued):
    catalogue = SENTENCES
    #: A status that overrides the platform's mapping (only ALREADY_EXISTS needs one).
    status: ClassVar[grpc.StatusCode | None] = None


class Invalid(_Catalogued, InvalidInput):
    """Malformed input: INVALID_ARGUMENT."""


class Conflict(_Catalogued, RuleViolation):
    """Well formed, but the state does not allow it: FAILED_PRECONDITION."""


class Missing(_Catalogued, NotFound):
    """Nothing under that id or code: NOT_FOUND."""


class Denied(_Catalogued, PermissionDenied):
    """Someone else's (a seat, a ticket, a tournament to start): PERMISSION_DENIED."""


class Unauthorized(_Catalogued, Unauthenticated):
    """A credential that does not prove who you are: UNAUTHENTICATED."""


class Exists(_Catalogued, RuleViolation):
    """Creating what exists: ALREADY_EXISTS."""

    status = grpc.StatusCode.ALREADY_EXISTS


class Limited(_Catalogued, ResourceExhausted):
    """A rate limit: RESOURCE_EXHAUSTED with ``retry_after_ms``."""


class NotReady(_Catalogued, Unavailable):
    """Starting, or the database or a peer cannot be reached: UNAVAILABLE (retry)."""


class InsufficientChips(Conflict):
    """A player's balance does not cover a debit (a stake, an operator's take):
    FAILED_PRECONDITION ``INSUFFICIENT_CHIPS``, the balance and the amount in the sentence."""

    def __init__(
        self, code: str = "INSUFFICIENT_CHIPS", *, balance: int, needed: int
    ) -> None:  # ``code`` first, as OkeyError's pickling rebuilds it
        super().__init__(code, balance=balance, needed=needed)


def status_of(error: OkeyError, language: Language) -> status_pb2.Status:
    """The ``google.rpc.Status`` of ``error`` (the platform's, with a lobby override)."""
    status = rich_status(error, language)
    override = getattr(error, "status", None)
    if isinstance(override, grpc.StatusCode):
        status.code = override.value[0]
    return status


__all__ = [
    "CATALOGUE",
    "SENTENCES",
    "Conflict",
    "Denied",
    "Exists",
    "InsufficientChips",
    "Invalid",
    "Limited",
    "Missing",
    "NotReady",
    "Unauthorized",
    "render",
    "status_of",
]
