"""How a pot is split at a match's end (pure arithmetic; ``table_chips`` posts it).

- The table fee is ``floor(pot * fee_percent / 100)``, kept by the house (``house:fees``).
- The winners are the seats placed first; with partners, a team's two seats (0 and 2, 1 and
  3) win together even if the record names only one of them first.
- What is left after the fee is split equally per winning seat; the remainder of that integer
  division (fewer chips than there are winners) goes to the house's fees too: every winner gets
  the same, no chip is split, and no winner is favoured by their seat (docs/chips.md, The
  remainder rule).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Split:
    """A pot's split: the fee, the remainder (both the house's), each winning seat's share."""

    pot: int
    fee: int
    remainder: int
    shares: Mapping[int, int]

    @property
    def kept(self) -> int:
        """What the house keeps: the fee and the remainder."""
        return self.fee + self.remainder


def winning_seats(places: Iterable[tuple[int, int]], *, partners: bool) -> list[int]:
    """The seats that win, from (seat, place) pairs: those placed first, and with partners
    each such seat's partner (the seat opposite) if it is listed."""
    listed = dict(places)
    winners = {seat for seat, place in listed.items() if place == 1}
    if partners:
        winners |= {(seat + 2) % 4 for seat in winners if (seat + 2) % 4 in listed}
    return sorted(winners)


def split_pot(pot: int, fee_percent: int, winners: Iterable[int]) -> Split:
    """Split ``pot`` chips among the ``winners`` (seats) after a ``fee_percent`` fee."""
    seats = sorted(set(winners))
    if not seats:
        raise ValueError("a pot is split among one winner at least")
    if pot < 0 or not 0 <= fee_percent <= 100:
        raise ValueError(f"cannot split a pot of {pot} with a fee of {fee_percent}%")
    fee = pot * fee_percent // 100
    share, remainder = divmod(pot - fee, len(seats))
    return Split(pot, fee, remainder, {seat: share for seat in seats})


__all__ = ["Split", "split_pot", "winning_seats"]
