"""The scoring service's own error codes, their statuses and their sentences (English, Turkish).

The class gives the status (``platform.errors``): ``Invalid`` INVALID_ARGUMENT, ``Conflict``
FAILED_PRECONDITION, ``Missing`` NOT_FOUND, ``NotReady`` UNAVAILABLE. Each renders its sentence
from ``CATALOGUE`` here, falling back to the platform's and the engine's catalogues for codes
they own (a converted HandState's UNKNOWN_TILE keeps the engine's class and sentence, and a
field holding a value it cannot is the engine's BAD_FIELD, parameters field and value).
"""

from __future__ import annotations

from okey101.engine.errors import InvalidInput, RuleViolation
from okey101.platform.errors import NotFound, Unavailable
from okey101.platform.sentences import PLATFORM, Catalogue, Catalogued

CATALOGUE: dict[str, dict[str, str]] = {
    # Malformed requests.
    "HAND_NOT_ENDED": {
        "en": "Hand {hand_id} has not ended: only a final state (phase ended, result set) is "
        "recorded.",
        "tr": "{hand_id} eli bitmemiş: yalnızca son durum (bitmiş evre, sonuç dolu) kaydedilir.",
    },
    "SCORE_MISMATCH": {
        "en": "The result does not follow from the hand under its rules: {field} is {reported}, "
        "the rules give {expected}.",
        "tr": "Sonuç, elin kurallarına göre tutmuyor: {field} {reported}, kurallara göre "
        "{expected} olmalı.",
    },
    "DEAL_SEED_MISMATCH": {
        "en": "The revealed server seed does not match the deal's commitment.",
        "tr": "Açıklanan sunucu tohumu dağıtımın taahhüdüyle eşleşmiyor.",
    },
    "REQUEST_ID_REUSED": {
        "en": "Request id {request_id} was already used for a different request: use a new id "
        "for a new change.",
        "tr": "{request_id} istek kimliği başka bir istek için kullanıldı: yeni bir değişiklik "
        "için yeni bir kimlik kullan.",
    },
    "DUPLICATE_PLAYER": {
        "en": "Player {player_id} holds more than one seat.",
        "tr": "{player_id} oyuncusu birden çok koltukta oturuyor.",
    },
    "SEASON_TIME_OUT_OF_RANGE": {
        "en": "season_time {value} is out of range: give an instant from 1970-01-01 to the end "
        "of the current week or month (UTC).",
        "tr": "season_time {value} geçerli aralıkta değil: 1970-01-01 ile içinde bulunulan "
        "haftanın ya da ayın sonu (UTC) arasında bir an ver.",
    },
    # State conflicts.
    "HAND_ALREADY_RECORDED": {
        "en": "Hand {hand_id} is already recorded with a different content.",
        "tr": "{hand_id} eli farklı bir içerikle zaten kaydedilmiş.",
    },
    "HAND_NUMBER_TAKEN": {
        "en": "Match {match_id} already has hand number {hand_number} ({recorded_hand_id}).",
        "tr": "{match_id} maçında {hand_number} numaralı el ({recorded_hand_id}) zaten var.",
    },
    "MATCH_MISMATCH": {
        "en": "This does not agree with match {match_id} as recorded: {field} differs.",
        "tr": "Bu, kayıtlı {match_id} maçıyla uyuşmuyor: {field} farklı.",
    },
    "MATCH_ALREADY_ENDED": {
        "en": "Match {match_id} has ended: no more hands are recorded for it.",
        "tr": "{match_id} maçı bitti: artık el kaydedilmez.",
    },
    "MATCH_ALREADY_RECORDED": {
        "en": "Match {match_id} is already recorded with a different result.",
        "tr": "{match_id} maçı farklı bir sonuçla zaten kaydedilmiş.",
    },
    "HANDS_MISSING": {
        "en": "Match {match_id} lists {count} hand(s) not recorded yet ({missing}): record them "
        "first.",
        "tr": "{match_id} maçı henüz kaydedilmemiş {count} el içeriyor ({missing}): önce onları "
        "kaydet.",
    },
    "MATCH_NOT_OVER": {
        "en": "Match {match_id} is not over under its rules after the hands it lists.",
        "tr": "{match_id} maçı, listelediği ellerden sonra kurallarına göre bitmiş değil.",
    },
    # Lookups.
    "MATCH_NOT_FOUND": {
        "en": "There is no match {match_id}.",
        "tr": "{match_id} numaralı bir maç yok.",
    },
    "PLAYER_NOT_RANKED": {
        "en": "Player {player_id} has no line on this leaderboard: no rated match in it, or "
        "fewer than its minimum.",
        "tr": "{player_id} oyuncusu bu sıralamada yer almıyor: bu sıralamada puanlı maçı yok ya "
        "da en az maç sayısının altında.",
    },
    # Serving.
    "SERVICE_STARTING": {
        "en": "The scoring service is still starting; try again in a moment.",
        "tr": "Puan servisi henüz açılıyor; birazdan tekrar dene.",
    },
    "DATABASE_UNAVAILABLE": {
        "en": "The score database cannot be reached just now; try again.",
        "tr": "Puan veritabanına şu anda ulaşılamıyor; tekrar dene.",
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
    """Well formed, but what is recorded does not allow it: FAILED_PRECONDITION."""


class Missing(_Catalogued, NotFound):
    """Nothing recorded under that id: NOT_FOUND."""


class NotReady(_Catalogued, Unavailable):
    """Starting, or the database cannot be reached: UNAVAILABLE (retry)."""


__all__ = ["CATALOGUE", "SENTENCES", "Conflict", "Invalid", "Missing", "NotReady", "render"]
