"""The rules engine of Okey 101: pure, typed Python (frozen dataclasses, no I/O, randomness
injected).

A hand is a deterministic state machine::

    import random
    from okey101.engine import RuleSet, apply, deal, legal_actions, shuffled_deck, view

    state = deal(RuleSet.preset("oyna"), 0, shuffled_deck(random.Random(7)))
    seat = state.turn
    action = legal_actions(state, seat)[0]
    state, events = apply(state, seat, action)  # or a RuleViolation / InvalidInput
    seen = view(state, seat)  # all one seat may know

What is here, by module: ``rules`` (``RuleSet`` and the presets), ``tiles`` (tiles, faces and
their notation, the okey), ``melds``, ``actions`` (the moves), ``hand`` (``HandState``, ``apply``,
events), ``seat`` and ``result`` (a seat's part, how a hand ended), ``deal``, ``view``, ``legal``
(the moves of the moment), ``hints`` (what a seat may do now and what it costs, from its view),
``scoring``, ``match``, ``solver`` (the best opening and the other questions of melds), ``bots``,
``playout`` (seeded random players), ``errors``. The scenario runner, exports, fair deals,
invariants and the sentence catalogue are imported from their modules. ``okey101.engine.view``
and ``okey101.engine.deal`` are the functions: import the other names of those modules from
them (``from okey101.engine.view import SeatView``).
"""

from okey101.engine.actions import (
    Action,
    Discard,
    Draw,
    End,
    GiveBack,
    Group,
    LayDown,
    LayOff,
    Open,
    OpenPairs,
    ShowIndicator,
    TakeDiscard,
    TakeOkey,
    action_name,
)
from okey101.engine.bots.entry_points import decide, fallback_decision
from okey101.engine.bots.expert import ExpertBudget
from okey101.engine.bots.levels import BotLevel, Decision
from okey101.engine.bots.memory import BotMemory
from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.errors import InvalidInput, OkeyError, RuleViolation
from okey101.engine.hand import (
    RULES_VERSION,
    SEATS,
    Event,
    EventKind,
    HandState,
    Phase,
    TableMeld,
    ThisTurn,
    apply,
    extend_meld,
    finish_of,
)
from okey101.engine.hints import (
    DiscardHint,
    LayOffHint,
    OkeyStandIn,
    OpeningHint,
    SeatHints,
    TakeBackHint,
    TakeHint,
    hints_for,
    seat_hints,
)
from okey101.engine.legal import LegalMove, legal_actions, legal_moves, suggested_melds
from okey101.engine.match import MatchState, match_winners, new_match, record_hand
from okey101.engine.melds import Meld, MeldKind, make_group, make_meld, make_pair
from okey101.engine.playout import RandomPlayer
from okey101.engine.result import EndReason, Finish, HandResult
from okey101.engine.rules import (
    BOOMBALA,
    NORTH_SULTAN,
    OYNA,
    PRESETS,
    LeftDiscardPolicy,
    MatchEnd,
    OkeyInLosersHand,
    OneGoFinish,
    RuleSet,
    StockOutPolicy,
)
from okey101.engine.scoring import score_hand
from okey101.engine.seat import OpenedAs, PenaltyReason, Seat
from okey101.engine.solver.arrangement import Arrangement, Hand
from okey101.engine.solver.openings import best_opening, lay_down_all_but_one, least_leftover
from okey101.engine.solver.pairs import best_pairs
from okey101.engine.solver.playability import can_use, is_playable, playable_faces
from okey101.engine.tiles import (
    ALL_TILES,
    TILE_COUNT,
    Colour,
    Okey,
    Tile,
    face_name,
    parse_face,
    tile_by_id,
    tiles_from_names,
)
from okey101.engine.view import OtherSeat, SeatView, view

__all__ = [
    "ALL_TILES",
    "BOOMBALA",
    "NORTH_SULTAN",
    "OYNA",
    "PRESETS",
    "RULES_VERSION",
    "SEATS",
    "TILE_COUNT",
    "Action",
    "Arrangement",
    "BotLevel",
    "BotMemory",
    "Colour",
    "Decision",
    "Discard",
    "DiscardHint",
    "Draw",
    "End",
    "EndReason",
    "Event",
    "EventKind",
    "ExpertBudget",
    "Finish",
    "GiveBack",
    "Group",
    "Hand",
    "HandResult",
    "HandState",
    "InvalidInput",
    "LayDown",
    "LayOff",
    "LayOffHint",
    "LeftDiscardPolicy",
    "LegalMove",
    "MatchEnd",
    "MatchState",
    "Meld",
    "MeldKind",
    "Okey",
    "OkeyError",
    "OkeyInLosersHand",
    "OkeyStandIn",
    "OneGoFinish",
    "Open",
    "OpenPairs",
    "OpenedAs",
    "OpeningHint",
    "OtherSeat",
    "PenaltyReason",
    "Phase",
    "RandomPlayer",
    "RuleSet",
    "RuleViolation",
    "Seat",
    "SeatHints",
    "SeatView",
    "ShowIndicator",
    "StockOutPolicy",
    "TableMeld",
    "TakeBackHint",
    "TakeDiscard",
    "TakeHint",
    "TakeOkey",
    "ThisTurn",
    "Tile",
    "action_name",
    "apply",
    "best_opening",
    "best_pairs",
    "can_use",
    "deal",
    "decide",
    "extend_meld",
    "face_name",
    "fallback_decision",
    "finish_of",
    "hints_for",
    "is_playable",
    "lay_down_all_but_one",
    "least_leftover",
    "legal_actions",
    "legal_moves",
    "make_group",
    "make_meld",
    "make_pair",
    "match_winners",
    "new_match",
    "parse_face",
    "playable_faces",
    "record_hand",
    "score_hand",
    "seat_hints",
    "shuffled_deck",
    "suggested_melds",
    "tile_by_id",
    "tiles_from_names",
    "view",
]
