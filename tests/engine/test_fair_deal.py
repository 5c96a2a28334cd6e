"""Provably fair deck orders: the documented vectors, an independent implementation of the
documented text, and the properties a fair shuffle needs."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import Counter
from pathlib import Path

import pytest

from okey101.engine.deal import deal
from okey101.engine.errors import InvalidInput
from okey101.engine.fair_deal import commitment, deck_order, parse_seed
from okey101.engine.rules import OYNA
from okey101.engine.tiles import face_name, tile_by_id

DOC = Path(__file__).resolve().parents[2] / "docs" / "fair-deals.md"


def documented_vectors() -> list[dict[str, str]]:
    """The vectors as docs/fair-deals.md publishes them."""
    text = DOC.read_text(encoding="utf-8")
    vectors = []
    for block in re.split(r"\*\*Vector \d+\*\*", text)[1:]:
        head = re.match(r": table `([^`]+)`, hand (\d+)", block)
        assert head is not None
        fields = dict(re.findall(r"^- ([a-z ]+?) `([^\n]*)`$", block, re.MULTILINE))
        seeds = re.search(r"^- player seeds (.*)$", block, re.MULTILINE)
        vectors.append(
            {
                "table_id": head.group(1),
                "hand_number": head.group(2),
                "server_seed": fields["server seed"],
                "commitment": fields["commitment"],
                "deck": fields["deck"],
                "player_seeds": seeds.group(1) if seeds else "``, ``, ``, ``",
            }
        )
    return vectors


def independent_deck(table_id: str, hand: int, server: bytes, seeds: list[str]) -> list[int]:
    """The documented algorithm written again from the text, sharing no code with the engine."""
    prefix = "okey101-deal/1|" + table_id + "|" + str(hand) + "|" + "|".join(seeds)
    stream = b""
    counter = 0
    position = 0

    def word() -> int:
        nonlocal stream, counter, position
        if position + 4 > len(stream):
            stream += hmac.digest(server, (prefix + "|" + str(counter)).encode(), "sha256")
            counter += 1
        value = int.from_bytes(stream[position : position + 4], "big")
        position += 4
        return value

    deck = list(range(106))
    for i in range(105, 0, -1):
        u = word()
        while u >= 2**32 - (2**32 % (i + 1)):
            u = word()
        j = u % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def test_the_docs_publish_three_vectors() -> None:
    assert len(documented_vectors()) == 3


@pytest.mark.parametrize("vector", documented_vectors(), ids=lambda v: v["table_id"])
def test_documented_vectors_hold(vector: dict[str, str]) -> None:
    server = bytes.fromhex(vector["server_seed"])
    seeds = re.findall(r"`([0-9a-f]*)`", vector["player_seeds"])
    assert len(seeds) == 4
    deck = deck_order(
        vector["table_id"],
        int(vector["hand_number"]),
        server,
        [bytes.fromhex(seed) if seed else None for seed in seeds],
    )
    expected = [int(tile_id) for tile_id in vector["deck"].split()]
    assert [tile.id for tile in deck] == expected
    assert commitment(server) == vector["commitment"] == hashlib.sha256(server).hexdigest()
    assert independent_deck(vector["table_id"], int(vector["hand_number"]), server, seeds) == (
        expected
    )


@pytest.mark.parametrize("hand", range(1, 40))
def test_the_engine_matches_the_documented_text(hand: int) -> None:
    server = hashlib.sha256(f"server {hand}".encode()).digest()
    seeds = ["", f"{hand:016x}", "", "deadbeefdeadbeef"]
    deck = deck_order(
        f"table-{hand % 3}", hand, server, [bytes.fromhex(s) if s else None for s in seeds]
    )
    assert [tile.id for tile in deck] == independent_deck(f"table-{hand % 3}", hand, server, seeds)


def test_every_input_changes_the_order() -> None:
    server = bytes(32)
    base = deck_order("t", 1, server)
    assert sorted(tile.id for tile in base) == list(range(106))
    assert deck_order("t", 1, server) == base  # a function of its inputs
    assert deck_order("u", 1, server) != base
    assert deck_order("t", 2, server) != base
    assert deck_order("t", 1, bytes(31) + b"\x01") != base
    assert deck_order("t", 1, server, [None, None, None, b"\x00" * 8]) != base
    # The same seed from another seat is another input.
    assert deck_order("t", 1, server, [b"\x00" * 8, None, None, None]) != deck_order(
        "t", 1, server, [None, b"\x00" * 8, None, None]
    )


def test_every_tile_reaches_every_position_about_equally() -> None:
    """Over 4,000 decks, where tile 0 lands is close to uniform over the 106 positions (a
    chi-squared statistic far below what a biased shuffle gives; df=105, p=0.001 is ~153)."""
    counts: Counter[int] = Counter()
    runs = 4000
    for number in range(runs):
        deck = deck_order("uniform", number + 1, hashlib.sha256(str(number).encode()).digest())
        counts[[tile.id for tile in deck].index(0)] += 1
    expected = runs / 106
    chi_squared = sum((counts[position] - expected) ** 2 / expected for position in range(106))
    assert chi_squared < 160


@pytest.mark.parametrize(
    ("text", "server"),
    [("", False), ("abc", False), ("zz" * 8, False), ("00" * 7, False), ("00" * 33, False),
     ("00" * 31, True), ("0" * 65, True)],
)  # fmt: skip
def test_bad_seeds_are_refused(text: str, server: bool) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_seed(text, field="seed", server=server)
    assert caught.value.code == "BAD_SEED"


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(InvalidInput):
        deck_order("t", 1, bytes(16))
    with pytest.raises(InvalidInput):
        deck_order("t|x", 1, bytes(32))
    with pytest.raises(InvalidInput):
        deck_order("t", 0, bytes(32))
    assert parse_seed("AB" * 8, field="s") == b"\xab" * 8


def test_verify_deal_command(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from okey101.cli import main

    vector = documented_vectors()[1]
    seeds = re.findall(r"`([0-9a-f]*)`", vector["player_seeds"])
    flags = [
        "verify-deal", "--table-id", vector["table_id"], "--hand-number", vector["hand_number"],
        "--server-seed", vector["server_seed"], "--commitment", vector["commitment"],
        *(f"--player-seed={seat}:{seed}" for seat, seed in enumerate(seeds) if seed),
    ]  # fmt: skip
    assert main([*flags, "--deck", *vector["deck"].split()]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["commitment_matches"] and report["deck_matches"]
    # One seed left out: another deck, so the published one does not match.
    assert main([*flags[:-1], "--deck", *vector["deck"].split()]) == 1
    assert json.loads(capsys.readouterr().out)["deck_matches"] is False
    assert main([*flags, "--player-seed", "7:00"]) == 2
    assert "SEAT:HEX" in capsys.readouterr().err


def _names(tile_ids: list[int]) -> str:
    return " ".join(str(tile_by_id(tile_id)) for tile_id in tile_ids)


def _field(pattern: str, text: str) -> re.Match[str]:
    found = re.search(pattern, text, re.MULTILINE)
    assert found is not None, pattern
    return found


def test_the_documented_deal_is_the_engines_and_the_texts() -> None:
    """Vector 3's racks, indicator and stock as docs/fair-deals.md publishes them: what the
    engine deals from the deck, and what the section "From the deck to the deal" says, read
    again here as slices of positions. Vector 1's first rack too."""
    text = DOC.read_text(encoding="utf-8")
    block = re.split(r"\*\*Vector \d+\*\*", text)[3]
    deck = [int(tile_id) for tile_id in documented_vectors()[2]["deck"].split()]
    dealer = int(_field(r"dealt by seat (\d)", block).group(1))
    racks = {
        int(seat): names
        for seat, names in re.findall(r"^- seat (\d) \([^)]*\): `([^`]*)`$", block, re.MULTILINE)
    }
    indicator, okey = _field(
        r"^- indicator [^`]*`([^`]+)`, so the okey is `([^`]+)`$", block
    ).group(1, 2)
    stock = _field(r"^- stock[^`]*`([^`]*)`$", block).group(1)
    assert sorted(racks) == [0, 1, 2, 3]

    state = deal(OYNA, dealer, [tile_by_id(tile_id) for tile_id in deck])
    assert {seat: _names([t.id for t in state.seats[seat].rack]) for seat in range(4)} == racks
    assert str(state.okey.indicator) == indicator and face_name(state.okey.face) == okey
    assert _names([t.id for t in state.stock]) == stock

    # The text, written again: consecutive slices in order of play from the seat after the
    # dealer, the first non-false-joker of the rest, the others in deck order.
    first = (dealer + 1) % 4
    bounds = [0, 22, 43, 64, 85]
    for offset in range(4):
        seat = (first + offset) % 4
        assert _names(deck[bounds[offset] : bounds[offset + 1]]) == racks[seat]
    rest = deck[85:]
    place = next(index for index, tile_id in enumerate(rest) if tile_id < 104)
    assert str(tile_by_id(rest[place])) == indicator and place == 1  # 85 is a false joker
    assert _names(rest[:place] + rest[place + 1 :]) == stock

    first_rack = _field(r"^- the first rack \(dealer 3, [^`]*`([^`]*)`$", text).group(1)
    deck_1 = [int(tile_id) for tile_id in documented_vectors()[0]["deck"].split()]
    assert _names(deck_1[:22]) == first_rack
    dealt_1 = deal(OYNA, 3, [tile_by_id(tile_id) for tile_id in deck_1])
    assert _names([t.id for t in dealt_1.seats[0].rack]) == first_rack
