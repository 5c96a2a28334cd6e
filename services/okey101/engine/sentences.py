"""The sentence catalogue: one sentence per error code, in English and Turkish.

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
        "tr": "'{tile}' bir taş değil: renk harfi (R kırmızı, Y sarı, B mavi, K siyah) ve 1-13 "
        "arası bir sayı yaz (R7, K13) ya da sahte okey için FJ.",
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
        "tr": "'{preset}' adında bir kural seti yok; oyna, boombala ya da north_sultan seç.",
    },
    "UNKNOWN_RULE": {
        "en": "There is no rule called '{rule}'.",
        "tr": "'{rule}' adında bir kural yok.",
    },
    "BAD_RULE_VALUE": {
        "en": "The rule '{rule}' cannot be set to '{value}'.",
        "tr": "'{rule}' kuralı '{value}' değerini alamaz.",
    },
    "BAD_FIELD": {
        "en": "The field {field} cannot hold '{value}'.",
        "tr": "{field} alanı '{value}' değerini alamaz.",
    },
    "TOO_MANY_ITEMS": {
        "en": "{field} names {count} items; at most {limit} fit.",
        "tr": "{field} alanında {count} öge var; en fazla {limit} öge olabilir.",
    },
    "WRONG_SEAT_COUNT": {
        "en": "A hand has 4 seats, not {seats}.",
        "tr": "Bir elde 4 koltuk olur, {seats} değil.",
    },
    "DUPLICATE_TILE_ID": {
        "en": "Tile {tile_id} ({tile}) is named twice.",
        "tr": "{tile_id} numaralı taş ({tile}) iki kez geçiyor.",
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
    # The hand.
    "UNKNOWN_RULES_VERSION": {
        "en": "This hand was played under rules version '{version}', which this engine does not "
        "know; it will not guess.",
        "tr": "Bu el '{version}' kural sürümüyle oynanmış; bu motor o sürümü tanımıyor ve tahmin "
        "etmeyecek.",
    },
    "UNKNOWN_SEAT": {
        "en": "There is no seat {seat}: seats are 0 to 3.",
        "tr": "{seat} numaralı koltuk yok: koltuklar 0 ile 3 arasındadır.",
    },
    "HAND_OVER": {
        "en": "This hand is over.",
        "tr": "Bu el bitti.",
    },
    "NOT_YOUR_TURN": {
        "en": "It is not your turn: seat {turn} is to play.",
        "tr": "Sıra sende değil: sıra {turn} numaralı koltukta.",
    },
    "MUST_DRAW_FIRST": {
        "en": "Take a tile first: draw from the stock or take the tile on your left.",
        "tr": "Önce taş al: ortadan çek ya da solundaki taşı al.",
    },
    "NO_DRAW_ON_FIRST_TURN": {
        "en": "The starting player does not draw on the first turn: discard one of your 22 tiles.",
        "tr": "Başlayan oyuncu ilk turda taş çekmez: 22 taşından birini at.",
    },
    "ALREADY_DREW": {
        "en": "You have already taken a tile this turn.",
        "tr": "Bu turda zaten taş aldın.",
    },
    "STOCK_EMPTY": {
        "en": "The stock is empty.",
        "tr": "Ortada taş kalmadı.",
    },
    "NOTHING_TO_TAKE": {
        "en": "There is no tile on your left to take.",
        "tr": "Solunda alınacak taş yok.",
    },
    "TAKEN_TILE_UNUSABLE": {
        "en": "You may take {tile} only if you can use it this turn, and you cannot.",
        "tr": "{tile} taşını ancak bu turda kullanabileceksen alabilirsin; kullanamıyorsun.",
    },
    "TAKE_ONLY_TO_OPEN": {
        "en": "You have not opened: you may take {tile} only to open with it this turn.",
        "tr": "Henüz açmadın: {tile} taşını ancak bu turda onunla açmak için alabilirsin.",
    },
    "TAKEN_TILE_NOT_IN_OPENING": {
        "en": "You took {tile} from your left: your opening must use it.",
        "tr": "Solundan {tile} aldın: açışında onu kullanmalısın.",
    },
    "TAKEN_TILE_NOT_USED": {
        "en": "You took {tile} from your left: put it on the table before you discard.",
        "tr": "Solundan {tile} aldın: atmadan önce onu masaya koy.",
    },
    "TAKEN_TILE_MUST_GO_DOWN": {
        "en": "You took {tile} from your left: put it on the table, or give it back (+101).",
        "tr": "Solundan {tile} aldın: masaya koy ya da geri ver (+101).",
    },
    "TAKEN_TILE_THROWN_BACK": {
        "en": "You cannot throw {tile} straight back.",
        "tr": "{tile} taşını hemen geri atamazsın.",
    },
    "TAKEN_TILE_CANNOT_FINISH": {
        "en": "You cannot finish by throwing {tile}, the tile you took from your left.",
        "tr": "Solundan aldığın {tile} taşını atarak elini bitiremezsin.",
    },
    "GIVE_BACK_NOT_ALLOWED": {
        "en": "At this table a taken tile is not given back.",
        "tr": "Bu masada alınan taş geri verilmez.",
    },
    "NOTHING_TO_GIVE_BACK": {
        "en": "You have no taken tile to give back.",
        "tr": "Geri verecek, yandan aldığın bir taş yok.",
    },
    "GIVE_BACK_AFTER_PLAY": {
        "en": "You have already played this turn: the taken tile can no longer be given back.",
        "tr": "Bu turda zaten oynadın: aldığın taş artık geri verilemez.",
    },
    # A give-back refused: the taken tile can still go down this turn (Boombala: "If you
    # can't, you give it back"), and the sentence says how.
    "GIVE_BACK_CAN_OPEN": {
        "en": "You can open with {tile} this turn: open with it instead of giving it back.",
        "tr": "{tile} ile bu turda açabilirsin: geri vermek yerine onunla aç.",
    },
    "GIVE_BACK_CAN_LAY_OFF": {
        "en": "{tile} can be laid off on a meld on the table this turn: lay it off instead of "
        "giving it back.",
        "tr": "{tile} bu turda masadaki bir pere işlenebilir: geri vermek yerine onu işle.",
    },
    "GIVE_BACK_CAN_MELD": {
        "en": "{tile} makes a new run or set with tiles on your rack: put it down instead of "
        "giving it back.",
        "tr": "{tile} ıstakandaki taşlarla yeni bir seri ya da per oluyor: geri vermek yerine "
        "onu masaya koy.",
    },
    "GIVE_BACK_CAN_PAIR": {
        "en": "{tile} makes a pair with a tile on your rack: put the pair down instead of "
        "giving it back.",
        "tr": "{tile} ıstakandaki bir taşla çift oluyor: geri vermek yerine çifti masaya koy.",
    },
    "GIVE_BACK_CAN_TAKE_OKEY": {
        "en": "{tile} can take the place of an okey on the table: put it there and take the "
        "okey instead of giving it back.",
        "tr": "{tile} masadaki bir okeyin yerine konabilir: geri vermek yerine onu oraya koy ve "
        "okeyi al.",
    },
    "TILE_NOT_IN_RACK": {
        "en": "{tile} is not on your rack.",
        "tr": "{tile} ıstakanda yok.",
    },
    "DUPLICATE_TILE": {
        "en": "{tile} is named twice in one move.",
        "tr": "{tile} bir hamlede iki kez geçiyor.",
    },
    "EMPTY_MOVE": {
        "en": "This move names no tiles.",
        "tr": "Bu hamlede hiç taş yok.",
    },
    "MUST_KEEP_TILE": {
        "en": "You must keep a tile to discard.",
        "tr": "Atmak için ıstakanda bir taş kalmalı.",
    },
    "ALREADY_OPENED": {
        "en": "You have already opened.",
        "tr": "Zaten açtın.",
    },
    "OPENING_MIXES_PAIRS": {
        "en": "An opening is runs and sets, or pairs: never both.",
        "tr": "Açış ya seri ve perlerle ya da çiftlerle yapılır; ikisi birden olmaz.",
    },
    "OPENING_BELOW_101": {
        "en": "These melds are worth {value}; opening needs {minimum}.",
        "tr": "Bu perler {value} ediyor; açmak için {minimum} gerekir.",
    },
    "TOO_FEW_PAIRS": {
        "en": "That is {count} pairs; opening with pairs needs {minimum}.",
        "tr": "Bu {count} çift; çiftle açmak için {minimum} çift gerekir.",
    },
    "MUST_OPEN_FIRST": {
        "en": "You have not opened yet.",
        "tr": "Henüz açmadın.",
    },
    "NOT_IN_OPENING_TURN": {
        "en": "At this table you can add tiles and new melds only from the turn after you open.",
        "tr": "Bu masada taş işlemek ve yeni per koymak ancak açtığın turdan sonraki turda olur.",
    },
    "PAIRS_NOT_ALLOWED": {
        "en": "You opened with runs or sets: you may put pairs down only once someone has opened "
        "with pairs, where the table allows it.",
        "tr": "Seri ya da perle açtın: çifti ancak biri çiftle açtıktan sonra, masa izin "
        "veriyorsa koyabilirsin.",
    },
    "PAIRS_OPENER_NO_RUNS": {
        "en": "You opened with pairs: the only new melds you may put down are pairs.",
        "tr": "Çiftle açtın: yalnızca yeni çift koyabilirsin.",
    },
    "PAIRS_OPENER_NO_LAY_OFF": {
        "en": "You opened with pairs: at this table you cannot lay tiles off.",
        "tr": "Çiftle açtın: bu masada taş işleyemezsin.",
    },
    "LAY_OFF_LIMIT": {
        "en": "After a pairs opening you may lay off at most {limit} tiles a turn.",
        "tr": "Çiftle açtıktan sonra bir turda en fazla {limit} taş işleyebilirsin.",
    },
    "UNKNOWN_MELD": {
        "en": "There is no meld {meld} on the table.",
        "tr": "Masada {meld} numaralı per yok.",
    },
    "CANNOT_LAY_OFF_ON_PAIR": {
        "en": "Nothing can be laid off on a pair.",
        "tr": "Çifte taş işlenmez.",
    },
    "SET_IS_FULL": {
        "en": "This set already has all four colours.",
        "tr": "Bu perde dört renk de var.",
    },
    "TILE_DOES_NOT_FIT": {
        "en": "{tile} does not fit there.",
        "tr": "{tile} oraya uymuyor.",
    },
    "END_REQUIRED": {
        "en": "Say which end of the run the tile goes on: low or high.",
        "tr": "Taşın serinin hangi ucuna gideceğini seç: alt ya da üst.",
    },
    "OKEY_STAYS": {
        "en": "At this table an okey on the table stays there.",
        "tr": "Bu masada masadaki okey yerinde kalır.",
    },
    "NO_OKEY_IN_MELD": {
        "en": "There is no okey in that meld.",
        "tr": "O perde okey yok.",
    },
    "OKEY_FOR_OKEY": {
        "en": "Put the tile the okey stands for, not an okey.",
        "tr": "Okeyin yerine geçtiği taşı koy, okey değil.",
    },
    "OKEY_AMBIGUOUS": {
        "en": "What this okey stands for is not decided, so it cannot be taken.",
        "tr": "Bu okeyin hangi taşın yerine geçtiği belli değil, alınamaz.",
    },
    "ONE_TILE_FOR_AN_OKEY": {
        "en": "Put exactly one tile, the one the okey stands for.",
        "tr": "Tam bir taş koy: okeyin yerine geçtiği taşı.",
    },
    "NOT_WHAT_OKEY_STANDS_FOR": {
        "en": "No okey in that meld stands for {tile}.",
        "tr": "O perdeki hiçbir okey {tile} yerine geçmiyor.",
    },
    "SET_NEEDS_ALL_COLOURS": {
        "en": "An okey comes out of a set only when the set is completed to all four colours.",
        "tr": "Perdeki okey ancak per dört renge tamamlanınca alınır.",
    },
    "INDICATOR_SCORES_NOTHING": {
        "en": "At this table showing the indicator scores nothing.",
        "tr": "Bu masada gösterge göstermek puan kazandırmaz.",
    },
    "INDICATOR_FIRST_TURN_ONLY": {
        "en": "The indicator can be shown only once, on your first turn.",
        "tr": "Gösterge yalnızca bir kez, ilk turunda gösterilebilir.",
    },
    "NO_INDICATOR_TWIN": {
        "en": "You do not hold {tile}, the indicator's twin.",
        "tr": "Göstergenin eşi olan {tile} ıstakanda yok.",
    },
    "NO_LEGAL_DISCARD": {
        "en": "No tile on the rack can be discarded now.",
        "tr": "Şu anda ıstakadaki hiçbir taş atılamaz.",
    },
    "BAD_DECK": {
        "en": "A deck must hold all 106 tiles once each.",
        "tr": "Bir deste 106 taşın her birini bir kez içermelidir.",
    },
    "BAD_SEED": {
        "en": "{field} must be a seed in hex: 64 digits for a server seed, 16 to 64 for a "
        "player's.",
        "tr": "{field} onaltılık bir tohum olmalı: sunucu tohumu için 64, oyuncu tohumu için "
        "16-64 hane.",
    },
    "MATCH_OVER": {
        "en": "This match is over.",
        "tr": "Bu maç bitti.",
    },
}


#: The colours as a Turkish player names them: the notation's letters are English (R red, Y
#: yellow, B blue, K black), and K reads as *kırmızı* (red) in Turkish, so a Turkish sentence
#: names a tile by its colour's word ("siyah 13"), never by its letter.
TURKISH_COLOURS: dict[str, str] = {"R": "kırmızı", "Y": "sarı", "B": "mavi", "K": "siyah"}


def tile_name(notation: str, language: str) -> str:
    """How a sentence names a tile: its notation in English (``K13``), its colour's word and
    number in Turkish (``siyah 13``; ``sahte okey`` for ``FJ``). Anything that is not a tile's
    notation (a mistyped tile quoted back) is left as it is."""
    if language != "tr":
        return notation
    if notation == "FJ":
        return "sahte okey"
    colour, number = notation[:1], notation[1:]
    if colour in TURKISH_COLOURS and number.isdigit() and 1 <= int(number) <= 13:
        return f"{TURKISH_COLOURS[colour]} {int(number)}"
    return notation


def sentence_case(text: str, language: str) -> str:
    """``text`` with its first letter a capital, the Turkish way in Turkish (i -> İ, ı -> I):
    a sentence that starts with a tile's name ("siyah 13 ıstakanda yok.") starts a sentence."""
    if not text:
        return text
    special = {"i": "İ", "ı": "I"} if language == "tr" else {}
    return special.get(text[0], text[0].upper()) + text[1:]


#: Sentences of a code that depend on what the error names (``variant``): the same code, the
#: same parameters, words that fit what the request carried.
VARIANTS: dict[str, dict[str, dict[str, str]]] = {
    "UNKNOWN_TILE": {
        # The request named the tile by its id (every request does; notation is for people).
        "id": {
            "en": "{tile} is not a tile id: tiles are numbered 0 to 105 (the false jokers are "
            "104 and 105).",
            "tr": "{tile} bir taş kimliği değil: taşlar 0 ile 105 arasında numaralıdır (sahte "
            "okeyler 104 ve 105).",
        },
    },
    "EMPTY_MOVE": {
        # A call's list of actions is empty.
        "actions": {
            "en": "This move has no actions: send at least one.",
            "tr": "Bu hamlede hiç eylem yok: en az bir eylem gönder.",
        },
        # One action sets none of its moves (draw, discard, open, ...).
        "action": {
            "en": "This action is empty: it sets none of draw, take, open, lay off, take the "
            "okey or discard.",
            "tr": "Bu eylem boş: çekme, alma, açma, işleme, okey alma ya da atma yok.",
        },
    },
}


def variant(code: str, params: Mapping[str, object]) -> str | None:
    """Which of ``VARIANTS[code]`` fits an error with ``params`` (None: the code's own)."""
    if code == "UNKNOWN_TILE":
        # A request's tile is an id, and its error names the field (notation never does).
        return "id" if "field" in params else None
    if code == "EMPTY_MOVE":
        field = str(params.get("field", ""))
        if field.endswith("actions"):
            return "actions"
        return "action" if field else None
    return None


def render(code: str, language: str, params: Mapping[str, object]) -> str:
    """The sentence for ``code`` in ``language`` (English if the language is not known); a
    ``tile`` parameter is named as ``tile_name`` says (the params themselves keep the
    notation, for clients and logs)."""
    entry = CATALOGUE.get(code)
    if entry is None:
        return code
    chosen = variant(code, params)
    if chosen is not None:
        entry = VARIANTS[code][chosen]
    template = entry.get(language, entry["en"])
    tile = params.get("tile")
    if language == "tr" and isinstance(tile, str) and code != "UNKNOWN_TILE":
        params = {**params, "tile": tile_name(tile, language)}
        if template.startswith("{tile}"):
            return sentence_case(template.format_map(_Lenient(params)), language)
    try:
        return template.format(**params)
    except (KeyError, IndexError):
        return template.format_map(_Lenient(params))


class _Lenient(dict[str, object]):
    """Leaves a missing parameter visible instead of failing to render a message."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"
