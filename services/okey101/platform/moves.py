"""A request's moves applied to a hand, as the rules service and the table both apply them.

Every action is converted first (so malformed input is refused before a forbidden move), then
applied in order with the engine; a refusal names the move it is about (``action_index``) and
nothing is applied. What each action caused comes with the state right after it, which is what
an event is shown against (the meld it names, the hand's result).
"""

from __future__ import annotations

from collections.abc import Sequence

from okey.v1 import common_pb2

from okey101.engine.actions import Action
from okey101.engine.errors import OkeyError
from okey101.engine.hand import Event, HandState, apply
from okey101.platform import convert


def at_action(error: OkeyError, index: int) -> OkeyError:
    """``error`` (same class and code) with the failing move's ``action_index``."""
    return type(error)(error.code, **{**error.params, "action_index": index})


def actions_from_proto(messages: Sequence[common_pb2.Action]) -> list[Action]:
    """The engine's actions of a request's ``actions`` (a refusal names ``actions[i]``)."""
    actions = []
    for index, message in enumerate(messages):
        try:
            actions.append(convert.action_from_proto(message, field=f"actions[{index}]"))
        except OkeyError as error:
            raise at_action(error, index) from None
    return actions


def apply_actions(
    state: HandState, seat: int, actions: Sequence[Action]
) -> tuple[HandState, list[tuple[Event, HandState]]]:
    """``actions`` applied for ``seat`` in order: the final state, and each event caused with
    the state right after the action that caused it."""
    caused: list[tuple[Event, HandState]] = []
    for index, action in enumerate(actions):
        try:
            state, events = apply(state, seat, action)
        except OkeyError as error:
            raise at_action(error, index) from None
        caused.extend((event, state) for event in events)
    return state, caused


__all__ = ["actions_from_proto", "apply_actions", "at_action"]
