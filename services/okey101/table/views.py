"""What a table shows: its ``Table`` message and each seat's ``SeatView``, from the live table.

A seat's view is the engine's (``convert.serialized_seat_views``: the face-up part built once
for every seat and a spectator, then each seat's number and rack) with the table's own fields
filled into the face-up part: ids, sequence number and state version, who holds each seat (as
players see it: ``disguise``), the turn's deadline, the hand's fairness record (its server seed
once the hand has ended) and the match totals. ``SeatViews`` builds them once per revision of
the table, when first asked, and keeps their bytes: a move's answer, the next player's
GetSeatView and a stream's first view all use the same ones. A seat's hints (``engine.hints``,
from its own view) are computed likewise once per revision, when the seat first asks for them
(GetHints), never on the move path.
"""

from __future__ import annotations

from collections.abc import Sequence

from okey.v1 import common_pb2

from okey101.engine.hand import SEATS, HandState, Phase
from okey101.engine.hints import SeatHints, seat_hints
from okey101.platform import convert
from okey101.platform.auth import Claims
from okey101.platform.convert import wire
from okey101.table import disguise
from okey101.table.records import DealInfo, TableRecord


def table_message(record: TableRecord, claims: Claims | None) -> common_pb2.Table:
    """The table as ``claims`` may see it: the invite code only for its host, its players and
    services; a staked table's stake, fee and pot (``TableRecord.pot``); which seats are bots
    only for services where the rule set does not label bots (``disguise``)."""
    service = claims is None or claims.kind == "service"
    show_code = (
        claims is None
        or service
        or (record.host_player_id == claims.subject or record.played_by(claims.subject))
    )
    message = common_pb2.Table(
        table_id=record.table_id,
        match_id=record.match_id,
        name=record.name,
        rules=record.rules_message(),
        visibility=record.visibility,  # type: ignore[arg-type]
        invite_code=record.invite_code if show_code else "",
        state=record.state,  # type: ignore[arg-type]
        host_player_id=record.host_player_id,
        seats=(
            [seat.occupant(index) for index, seat in enumerate(record.seats)]
            if service
            else disguise.shown_occupants(record)
        ),
        hand_number=record.hand_number,
        match_totals=list(record.match.totals),
        last_sequence=record.last_sequence,
        state_version=record.state_version,
        tournament_id=record.tournament_id,
        tournament_round=record.tournament_round,
    )
    message.create_time.FromMicroseconds(record.created_us)
    if record.stake:
        message.stake = record.stake
        message.fee_percent = record.fee_percent
        message.pot = record.pot
    if record.match_result is not None:
        message.match_result.ParseFromString(record.match_result)
        if not service and not disguise.bots_labelled(record.rules_message()):
            disguise.hide_bots_in_result(message.match_result)
    if record.match_deadline_us is not None:
        message.match_deadline.FromMicroseconds(record.match_deadline_us)
    return message


def hand_live(state: HandState | None) -> bool:
    """A hand is dealt and has not ended."""
    return state is not None and state.phase is not Phase.ENDED


class SeatViews:
    """Every seat's view, and a spectator's, of one revision of a table, serialized on first
    use (module docstring)."""

    __slots__ = ("_built", "_hints", "deal", "record", "state")

    def __init__(self, record: TableRecord, state: HandState | None, deal: DealInfo | None):
        self.record = record
        self.state = state
        self.deal = deal
        self._built: tuple[Sequence[bytes], bytes] | None = None
        self._hints: dict[int, SeatHints] = {}

    @property
    def revision(self) -> int:
        return self.record.revision

    def of(self, seat: int | None) -> bytes:
        """``seat``'s view (None: a spectator's), serialized."""
        if self._built is None:
            self._built = self._build()
        seats, spectator = self._built
        return spectator if seat is None else seats[seat]

    def message(self, seat: int | None) -> common_pb2.SeatView:
        return common_pb2.SeatView.FromString(self.of(seat))

    def hints(self, seat: int) -> SeatHints | None:
        """``seat``'s hints from its view of this revision (None before the first deal),
        computed when first asked."""
        if self.state is None:
            return None
        hints = self._hints.get(seat)
        if hints is None:
            hints = self._hints[seat] = seat_hints(self.state, seat)
        return hints

    def _build(self) -> tuple[Sequence[bytes], bytes]:
        state = self.state
        if state is None:
            public = common_pb2.SeatView(
                rules=self.record.rules_message(),
                seats=[common_pb2.SeatPublic(seat=index) for index in range(SEATS)],
            )
            self._decorate(public)
            shared = public.SerializeToString()
            return [shared + wire.SEAT_NUMBERS[seat] for seat in range(SEATS)], shared
        return convert.serialized_seat_views(state, self._decorate)

    def _decorate(self, view: common_pb2.SeatView) -> None:
        """The table's fields of a view (module docstring)."""
        record = self.record
        view.table_id = record.table_id
        view.hand_id = record.hand_id
        view.hand_number = record.hand_number
        view.as_of_sequence = record.last_sequence
        view.state_version = record.state_version
        for index, occupant in enumerate(disguise.shown_occupants(record)):
            if index < len(view.seats):
                view.seats[index].occupant.CopyFrom(occupant)
        live = hand_live(self.state)
        if record.turn_deadline_us is not None and live:
            view.turn_deadline.FromMicroseconds(record.turn_deadline_us)
        if self.deal is not None and self.state is not None:
            view.deal.CopyFrom(self.deal.record(reveal=not live))
        view.match_totals.extend(record.match.totals)


__all__ = ["SeatViews", "hand_live", "table_message"]
