"""What the fault tests (``tests/abuse/test_faults.py``) and the load bench's test
(``test_faults_load.py``) share: the services of the stack, a client of it, the rules of their
tables and how their players play (``okey101.bench.load_stack``).
"""

from __future__ import annotations

from typing import Any

from okey.v1 import common_pb2

from okey101.bench.load_stack import Figures, Play, StackClient, engine_decider
from okey101.stack import LocalStack

SERVICES = ("rules", "bot", "scoring", "table", "lobby")


def client_for(stack: LocalStack, figures: Figures | None = None) -> StackClient:
    addresses = {name: stack.address(name) for name in SERVICES}
    return StackClient(addresses, stack.var_dir, figures or Figures())


def rules(hands: int, **knobs: Any) -> common_pb2.RuleSet:
    return common_pb2.RuleSet(
        preset=common_pb2.RULE_PRESET_OYNA,
        match_end=common_pb2.MATCH_END_FIXED_HANDS,
        match_hands=hands,
        **knobs,
    )


def play(**changes: Any) -> Play:
    return Play(decide=engine_decider(), **changes)
