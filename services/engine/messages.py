"""The message catalogue: one sentence per error code, in English and Turkish.

Codes are stable (clients switch on them); sentences may be improved at any time. A sentence
names its parameters in braces; ``render`` fills them in. Every code the engine raises has an
entry here, and a test checks that both languages name the same parameters.
"""

from __future__ import annotations

from collections.abc import Mapping

LANGUAGES = ("en", "tr")

CATALOGUE: dict[str, dict[str, str]] = {
    # Malformed input.
    "UNKNOWN_TILE": {
        "en": "'{tile}' is not a tile: write a colour R, Y, B or K and a number 1-13 (R7, K13), "
        "or FJ for a false joker.",
        "tr": "'{tile}' bir taş değil: renk (R, Y, B, K) ve 1-13 arası bir sayı yazın (R7, K13) "
        "ya da sahte okey için FJ.",
    },
    "TOO_MANY_COPIES": {
        "en": "There are only two {tile} tiles in the set (the indicator counts).",
        "tr": "Takımda yalnızca iki {tile} taşı var (gösterge de sayılır).",
    },
    "INDICATOR_IS_FALSE_JOKER": {
        "en": "The indicator is never a false joker.",
        "tr": "Gösterge hiçbir zaman sahte okey olamaz.",
    },
    "UNKNOWN_PRESET": {
        "en": "There is no rule set called '{preset}'; choose oyna, boombala or north_sultan.",
        "tr": "'{preset}' adında bir kural seti yok; oyna, boombala ya da north_sultan seçin.",
    },
    "UNKNOWN_RULE": {
        "en": "There is no rule called '{rule}'.",
        "tr": "'{rule}' adında bir kural yok.",
    },
    "BAD_RULE_VALUE": {
        "en": "The rule '{rule}' cannot be set to '{value}'.",
        "tr": "'{rule}' kuralı '{value}' değerini alamaz.",
    },
    # Melds.
    "MELD_TOO_SHORT": {
        "en": "A run or a set needs at least three tiles.",
        "tr": "Bir seri ya da per en az üç taştan oluşur.",
    },
    "SET_TOO_LONG": {
        "en": "A set has at most four tiles, one of each colour.",
        "tr": "Bir per en fazla dört taştan oluşur, her renkten bir tane.",
    },
    "SET_REPEATS_COLOUR": {
        "en": "A set needs a different colour on every tile; {tile} is there twice.",
        "tr": "Perdeki her taş farklı renkte olmalı; {tile} iki kez var.",
    },
    "RUN_WRAPS_AROUND": {
        "en": "In 101 the 1 is only the lowest tile: 12-13-1 is not a run.",
        "tr": "101'de 1 yalnızca en küçük taştır: 12-13-1 seri değildir.",
    },
    "RUN_13_1_2": {
        "en": "13-1-2 is never a run: a run may end 12-13-1 at most.",
        "tr": "13-1-2 hiçbir zaman seri değildir: bir seri en fazla 12-13-1 ile biter.",
    },
    "RUN_OUT_OF_RANGE": {
        "en": "A run goes no lower than 1 and no higher than 13.",
        "tr": "Bir seri 1'in altına ve 13'ün üstüne çıkamaz.",
    },
    "NOT_A_MELD": {
        "en": "These tiles are neither a run (consecutive numbers of one colour, in order) nor a "
        "set (one number in different colours).",
        "tr": "Bu taşlar ne seri (aynı renkte sıralı sayılar) ne de per (farklı renklerde aynı "
        "sayı).",
    },
    "NOT_A_PAIR": {
        "en": "A pair is two identical tiles (an okey pairs with anything).",
        "tr": "Çift, birbirinin aynısı iki taştır (okey her taşla çift olur).",
    },
    "BAD_OKEY_AS": {
        "en": "The okey cannot stand for {tile} in this group.",
        "tr": "Okey bu grupta {tile} yerine geçemez.",
    },
}


def render(code: str, language: str, params: Mapping[str, object]) -> str:
    """The sentence for ``code`` in ``language`` (English if the language is not known)."""
    entry = CATALOGUE.get(code)
    if entry is None:
        return code
    template = entry.get(language, entry["en"])
    try:
        return template.format(**params)
    except (KeyError, IndexError):
        return entry["en"].format_map(_Lenient(params))


class _Lenient(dict[str, object]):
    """Leaves a missing parameter visible instead of failing to render a message."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"
