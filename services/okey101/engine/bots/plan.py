"""A plan: a bot's actions applied one by one to the shadow state, each checked by ``apply``."""

from __future__ import annotations

from collections.abc import Sequence

from okey101.engine.actions import Action
from okey101.engine.errors import OkeyError
from okey101.engine.hand import HandState, apply, taken_unused
from okey101.engine.seat import Seat
from okey101.engine.tiles import Tile


class Plan:
    __slots__ = ("actions", "notes", "seat", "state")

    def __init__(
        self,
        state: HandState,
        seat: int,
        actions: Sequence[Action] = (),
        notes: Sequence[str] = (),
    ) -> None:
        self.state = state
        self.seat = seat
        self.actions: list[Action] = list(actions)
        self.notes: list[str] = list(notes)

    def copy(self) -> Plan:
        return Plan(self.state, self.seat, self.actions, self.notes)

    def step(self, action: Action) -> bool:
        try:
            state, _events = apply(self.state, self.seat, action)
        except OkeyError:
            return False
        self.state = state
        self.actions.append(action)
        return True

    @property
    def me(self) -> Seat:
        return self.state.seats[self.seat]

    @property
    def rack(self) -> tuple[Tile, ...]:
        return self.state.seats[self.seat].rack

    @property
    def ended(self) -> bool:
        return self.state.ended

    def taken_unused(self) -> Tile | None:
        """The tile taken from the left while unused (either copy put down uses it)."""
        return taken_unused(self.state.this_turn, self.rack)
