"""Sentence catalogues: the one mechanism, and the platform's own sentences.

A ``Catalogue`` holds sentences by code and language and renders one with its parameters; a code
it does not hold goes to the catalogue below it. There are three layers: each service's own
(``lobby.errors``, ``scoring.errors``, ``table.errors``: its codes, and its own sentence for a
code such as ``DATABASE_UNAVAILABLE``), then the platform's (``PLATFORM``, below: the codes of
serving, tokens, access, lookups, stale states, limits, paging, shutdown), then the engine's
(``okey101.engine.sentences``, which stays pure and knows nothing of this). An error class whose
sentence is in a catalogue is a ``Catalogued`` and names its catalogue; each service's error
classes name the service's.

A code the platform raises (or a service shares with it) has its sentence here and its status in
``errors.STATUS_BY_CODE`` or in the ``errors`` class it is raised as. A test checks both
languages name the same parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar

from okey101.engine.errors import OkeyError
from okey101.engine.sentences import render as render_engine

#: ``render(code, language, params)``: a code's sentence in a language, its parameters filled in.
Render = Callable[[str, str, Mapping[str, object]], str]


class Catalogue:
    """Sentences by code, each in English and Turkish; a code not here is rendered by ``then``
    (the next catalogue's ``render``, last the engine's)."""

    def __init__(self, sentences: Mapping[str, Mapping[str, str]], *, then: Render) -> None:
        self.sentences = sentences
        self._then = then

    def render(self, code: str, language: str, params: Mapping[str, object]) -> str:
        """The sentence for ``code`` in ``language`` (English if the language is not known)."""
        entry = self.sentences.get(code)
        if entry is None:
            return self._then(code, language, params)
        template = entry.get(language, entry["en"])
        return template.format_map(_Lenient(params))


class Catalogued(OkeyError):
    """An error whose sentence is in ``catalogue`` (each service's error classes set theirs)."""

    catalogue: ClassVar[Catalogue]

    def message(self, language: str = "en") -> str:
        return self.catalogue.render(self.code, language, self.params)


CATALOGUE: dict[str, dict[str, str]] = {
    # Tokens and access.
    "TOKEN_MISSING": {
        "en": "This call needs a token: send it as the 'authorization: Bearer <token>' header.",
        "tr": "Bu çağrı bir anahtar (token) ister: 'authorization: Bearer <token>' başlığıyla "
        "gönder.",
    },
    "TOKEN_INVALID": {
        "en": "The token is not valid; sign in again.",
        "tr": "Anahtar (token) geçerli değil; yeniden giriş yap.",
    },
    "TOKEN_EXPIRED": {
        "en": "The token has expired; refresh it and try again.",
        "tr": "Anahtarın (token) süresi doldu; yenileyip tekrar dene.",
    },
    "TOKEN_REVOKED": {
        "en": "This login was ended (logged out); log in again.",
        "tr": "Bu oturum kapatıldı (çıkış yapıldı); yeniden giriş yap.",
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
        "tr": "{seat} numaralı koltuk senin değil.",
    },
    # Malformed input the platform checks itself (``platform.ids``, ``platform.names``).
    "FIELD_REQUIRED": {
        "en": "The request needs {field}.",
        "tr": "İstekte {field} alanı olmalı.",
    },
    "BAD_REQUEST_ID": {
        "en": "A request_id is 1 to 64 characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'.",
        "tr": "request_id, A-Z, a-z, 0-9, '.', '_', ':' ve '-' karakterlerinden 1 ile 64 tane "
        "olmalı.",
    },
    "BAD_LENGTH": {
        "en": "The field {field} must be {minimum} to {maximum} characters long.",
        "tr": "{field} alanı {minimum} ile {maximum} karakter arasında olmalı.",
    },
    "BAD_DISPLAY_NAME": {
        "en": "The field {field} is shown to other players and may not hold control, "
        "formatting or special space characters ({character} at position {position}).",
        "tr": "{field} alanı diğer oyunculara gösterilir; kontrol, biçimlendirme ya da özel "
        "boşluk karakteri içeremez ({position}. konumda {character}).",
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
        "yenileyip tekrar dene.",
    },
    "RATE_LIMITED": {
        "en": "Too many requests; wait a moment and try again.",
        "tr": "Çok fazla istek; biraz bekleyip tekrar dene.",
    },
    # Paging: a page token made for another request (``platform.paging``, the table's too).
    "PAGE_TOKEN_INVALID": {
        "en": "The page token is not one this call gave for the same request; start again from "
        "the first page.",
        "tr": "Sayfa anahtarı bu istek için verilmiş bir anahtar değil; ilk sayfadan yeniden "
        "başla.",
    },
    # Serving.
    "MESSAGE_TOO_LARGE": {
        "en": "The request is too large: {size} bytes, where at most {limit} are read.",
        "tr": "İstek çok büyük: {size} bayt; en fazla {limit} bayt okunur.",
    },
    "METADATA_TOO_LARGE": {
        "en": "The request's metadata (its headers) is too large: {size} bytes, where at most "
        "{limit} are read.",
        "tr": "İsteğin üst verisi (başlıkları) çok büyük: {size} bayt; en fazla {limit} bayt "
        "okunur.",
    },
    "MALFORMED_REQUEST": {
        "en": "The request could not be read: it is not a valid {message} message.",
        "tr": "İstek okunamadı: geçerli bir {message} mesajı değil.",
    },
    "SERVER_SHUTTING_DOWN": {
        "en": "This server is restarting: reconnect and carry on where you left off.",
        "tr": "Bu sunucu yeniden başlıyor: yeniden bağlan ve kaldığın yerden devam et.",
    },
    "INTERNAL": {
        "en": "Something went wrong on our side; please try again.",
        "tr": "Bizim tarafımızda bir sorun oluştu; lütfen tekrar dene.",
    },
}

#: The platform's sentences, over the engine's.
PLATFORM = Catalogue(CATALOGUE, then=render_engine)


def render(code: str, language: str, params: Mapping[str, object]) -> str:
    """The sentence for ``code``: the platform's catalogue first, then the engine's."""
    return PLATFORM.render(code, language, params)


class _Lenient(dict[str, object]):
    """Leaves a missing parameter visible instead of failing to render a message."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"
