"""What a bot may remember between its turns (``BotMemory``), built from the events its seat
received or from successive views: never from anything private to another seat."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from okey101.engine.hand import SEATS, Event, EventKind
from okey101.engine.view import SeatView


@dataclass(frozen=True, slots=True)
class BotMemory:
    """What one seat has seen of the hand beyond the present view.

    ``thrown``: (seat, tile id) for every discard seen, oldest first. ``taken``: (seat, tile id)
    for every discard taken from a pile (and not given back): tiles the bot can no longer get,
    and a hint of what that seat collects. ``showed``: seats that showed the indicator's twin.
    ``turn``: (event kind, seat) of what happened since the last discard, which the view does
    not say: a bot taking over a seat in the middle of a turn (its player timed out after
    opening, say) knows what the turn already holds. Built from the events the seat received
    (``observe``) or from successive views (``observe_view``, which cannot see ``turn``);
    never from anything private to another seat.
    """

    seat: int
    thrown: tuple[tuple[int, int], ...] = ()
    taken: tuple[tuple[int, int], ...] = ()
    showed: tuple[int, ...] = ()
    turn: tuple[tuple[EventKind, int], ...] = ()

    @staticmethod
    def from_events(seat: int, events: Iterable[Event]) -> BotMemory:
        """The memory of ``seat`` after ``events`` (the hand's events as it received them)."""
        return BotMemory(seat).observe(events)

    def observe(self, events: Iterable[Event]) -> BotMemory:
        """This memory after more events (their public part only)."""
        thrown = list(self.thrown)
        taken = list(self.taken)
        showed = list(self.showed)
        turn = list(self.turn)
        for event in events:
            if event.kind is EventKind.HAND_ENDED:
                turn = []
            if event.seat is None:
                continue
            if event.kind is EventKind.DISCARDED:
                thrown.extend((event.seat, tile.id) for tile in event.tiles)
                turn = []
            elif event.kind is EventKind.TOOK:
                taken.extend((event.seat, tile.id) for tile in event.tiles)
            elif event.kind is EventKind.GAVE_BACK:
                back = {tile.id for tile in event.tiles}
                taken = [item for item in taken if item[1] not in back]
                turn = []
            elif event.kind is EventKind.SHOWED_INDICATOR and event.seat not in showed:
                showed.append(event.seat)
            if event.kind in _TURN_EVENTS:
                turn.append((event.kind, event.seat))
        return BotMemory(self.seat, tuple(thrown), tuple(taken), tuple(showed), tuple(turn))

    def observe_view(self, seat_view: SeatView) -> BotMemory:
        """This memory after seeing ``seat_view``: new discards are added, and a discard that
        has left its pile was taken by the next seat (the only way a discard leaves a pile)."""
        thrown = list(self.thrown)
        taken = list(self.taken)
        known = {tile_id for _seat, tile_id in thrown}
        taken_ids = {tile_id for _seat, tile_id in taken}
        piles = {other.seat: {tile.id for tile in other.discards} for other in seat_view.seats}
        for other in seat_view.seats:
            for tile in other.discards:
                if tile.id not in known:
                    thrown.append((other.seat, tile.id))
                    known.add(tile.id)
        for seat, tile_id in self.thrown:
            if tile_id not in piles.get(seat, set()) and tile_id not in taken_ids:
                taken.append(((seat + 1) % SEATS, tile_id))
                taken_ids.add(tile_id)
        # A taken tile back in its pile was given back.
        in_piles = set().union(*piles.values()) if piles else set()
        taken = [item for item in taken if item[1] not in in_piles]
        return BotMemory(self.seat, tuple(thrown), tuple(taken), self.showed, self.turn)


# The events that make up what a turn holds so far (``ThisTurn``).
_TURN_EVENTS = frozenset(
    {
        EventKind.DREW,
        EventKind.TOOK,
        EventKind.GAVE_BACK,
        EventKind.OPENED,
        EventKind.MELDED,
        EventKind.LAID_OFF,
        EventKind.TOOK_OKEY,
        EventKind.SHOWED_INDICATOR,
    }
)
