"""Sentences for the platform's own error codes, in English and Turkish.

The engine's codes live in ``okey101.engine.messages``; these are the codes of serving: tokens,
access, lookups, stale states, limits, shutdown. A service that adds a code (say
``TOURNAMENT_FULL``) adds its sentence here and its status to ``errors.STATUS_BY_CODE`` or raises
it as the matching ``errors`` class. A test checks both languages name the same parameters.
"""

from __future__ import annotations

from collections.abc import Mapping

from okey101.engine.messages import render as render_engine

CATALOGUE: dict[str, dict[str, str]] = {
    # Tokens and access.
    "TOKEN_MISSING": {
        "en": "This call needs a token: send it as the 'authorization: Bearer <token>' header.",
        "tr": "Bu çağrı bir anahtar (token) ister: 'authorization: Bearer <token>' başlığıyla "
        "gönderin.",
    },
    "TOKEN_INVALID": {
        "en": "The token is not valid; sign in again.",
        "tr": "Anahtar (token) geçerli değil; yeniden giriş yapın.",
    },
    "TOKEN_EXPIRED": {
        "en": "The token has expired; refresh it and try again.",
        "tr": "Anahtarın (token) süresi doldu; yenileyip tekrar deneyin.",
    },
    "TOKEN_WRONG_KIND": {
        "en": "This call does not accept a {kind} token; it takes: {accepts}.",
        "tr": "Bu çağrı {kind} türünde anahtar kabul etmiyor; kabul ettikleri: {accepts}.",
    },
    "METHOD_NOT_DECLARED": {
        "en": "{method} does not say which tokens it accepts, so it is refused.",
        "tr": "{method} hangi anahtarları kabul ettiğini belirtmiyor; bu yüzden reddedildi.",
    },
    "NOT_YOUR_SEAT": {
        "en": "Seat {seat} is not yours.",
        "tr": "{seat} numaralı koltuk sizin değil.",
    },
    # Lookups.
    "TABLE_NOT_FOUND": {
        "en": "There is no table {table_id}.",
        "tr": "{table_id} numaralı bir masa yok.",
    },
    "HAND_NOT_FOUND": {
        "en": "There is no hand {hand_id}.",
        "tr": "{hand_id} numaralı bir el yok.",
    },
    "PLAYER_NOT_FOUND": {
        "en": "There is no player {player_id}.",
        "tr": "{player_id} numaralı bir oyuncu yok.",
    },
    # Concurrency and limits.
    "STALE_VERSION": {
        "en": "This was based on version {version} of the table, which is now at {current}: "
        "refresh and try again.",
        "tr": "Bu istek masanın {version} sürümüne dayanıyor, masa şimdi {current} sürümünde: "
        "yenileyip tekrar deneyin.",
    },
    "RATE_LIMITED": {
        "en": "Too many requests; wait a moment and try again.",
        "tr": "Çok fazla istek; biraz bekleyip tekrar deneyin.",
    },
    # Serving.
    "MALFORMED_REQUEST": {
        "en": "The request could not be read: it is not a valid {message} message.",
        "tr": "İstek okunamadı: geçerli bir {message} mesajı değil.",
    },
    "SERVER_SHUTTING_DOWN": {
        "en": "This server is restarting: reconnect and carry on where you left off.",
        "tr": "Bu sunucu yeniden başlıyor: yeniden bağlanın ve kaldığınız yerden devam edin.",
    },
    "INTERNAL": {
        "en": "Something went wrong on our side; please try again.",
        "tr": "Bizim tarafımızda bir sorun oluştu; lütfen tekrar deneyin.",
    },
}


def render(code: str, language: str, params: Mapping[str, object]) -> str:
    """The sentence for ``code``: the platform's catalogue first, then the engine's."""
    entry = CATALOGUE.get(code)
    if entry is None:
        return render_engine(code, language, params)
    template = entry.get(language, entry["en"])
    return template.format_map(_Lenient(params))


class _Lenient(dict[str, object]):
    """Leaves a missing parameter visible instead of failing to render a message."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"
