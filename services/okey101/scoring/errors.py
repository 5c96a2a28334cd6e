"""The scoring service's own error codes, their statuses and their sentences (English, Turkish).

The class gives the status (``platform.errors``): ``Invalid`` INVALID_ARGUMENT, ``Conflict``
FAILED_PRECONDITION, ``Missing`` NOT_FOUND, ``NotReady`` UNAVAILABLE. Each renders its sentence
from ``CATALOGUE`` here, falling back to the platform's and the engine's catalogues for codes
they own (a converted HandState's UNKNOWN_TILE keeps the engine's class and sentence, and a
field holding a value it cannot is the engine's BAD_FIELD, parameters field and value).
"""

from __future__ import annotations

from collections.abc import Mapping

from okey101.engine.errors import InvalidInput, OkeyError, RuleViolation
from okey101.platform.errors import NotFound, Unavailable
from okey101.platform.messages import render as render_platform

CATALOGUE: dict[str, dict[str, str]] = {
    # Malformed requests.
    "FIELD_REQUIRED": {
        "en": "The request needs {field}.",
        "tr": "İstekte {field} alanı olmalı.",
    },
    "PAGE_TOKEN_INVALID": {
        "en": "The page token is not one this call gave for the same request; start again from "
        "the first page.",
        "tr": "Sayfa anahtarı bu istek için verilmiş bir anahtar değil; ilk sayfadan yeniden "
        "başlayın.",
    },
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
    "DUPLICATE_PLAYER": {
        "en": "Player {player_id} holds more than one seat.",
        "tr": "{player_id} oyuncusu birden çok koltukta oturuyor.",
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
        "kaydedin.",
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
    # Serving.
    "SERVICE_STARTING": {
        "en": "The scoring service is still starting; try again in a moment.",
        "tr": "Puan servisi henüz açılıyor; birazdan tekrar deneyin.",
    },
    "DATABASE_UNAVAILABLE": {
        "en": "The score database cannot be reached just now; try again.",
        "tr": "Puan veritabanına şu anda ulaşılamıyor; tekrar deneyin.",
    },
}


def render(code: str, language: str, params: Mapping[str, object]) -> str:
    """The sentence for ``code``: this catalogue first, then the platform's and the engine's."""
    entry = CATALOGUE.get(code)
    if entry is None:
        return render_platform(code, language, params)
    template = entry.get(language, entry["en"])
    return template.format_map(_Lenient(params))


class _Lenient(dict[str, object]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class _Catalogued(OkeyError):
    def message(self, language: str = "en") -> str:
        return render(self.code, language, self.params)


class Invalid(_Catalogued, InvalidInput):
    """Malformed input: INVALID_ARGUMENT."""


class Conflict(_Catalogued, RuleViolation):
    """Well formed, but what is recorded does not allow it: FAILED_PRECONDITION."""


class Missing(_Catalogued, NotFound):
    """Nothing recorded under that id: NOT_FOUND."""


class NotReady(_Catalogued, Unavailable):
    """Starting, or the database cannot be reached: UNAVAILABLE (retry)."""


__all__ = ["CATALOGUE", "Conflict", "Invalid", "Missing", "NotReady", "render"]
