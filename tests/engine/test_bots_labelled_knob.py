"""The ``bots_labelled`` knob (issue 38): false in north_sultan, true elsewhere, the host's to
change either way, and read from a rule set that predates it as its preset's value."""

from __future__ import annotations

import pytest
from okey.v1 import common_pb2

from okey101.engine.errors import InvalidInput
from okey101.engine.rules import RuleSet
from okey101.platform import convert


@pytest.mark.parametrize(
    ("preset", "labelled"), [("oyna", True), ("boombala", True), ("north_sultan", False)]
)
def test_each_preset_labels_bots_as_its_text_says(preset: str, labelled: bool) -> None:
    rules = RuleSet.preset(preset)
    assert rules.bots_labelled is labelled
    assert rules.knobs()["bots_labelled"] is labelled
    # The host may set it either way.
    flipped = rules.with_overrides({"bots_labelled": not labelled})
    assert flipped.bots_labelled is not labelled
    assert flipped != rules and flipped.with_overrides({"bots_labelled": labelled}) == rules


def test_the_knob_takes_only_a_bool() -> None:
    with pytest.raises(InvalidInput) as caught:
        RuleSet.preset("oyna").with_overrides({"bots_labelled": 0})
    assert caught.value.code == "BAD_RULE_VALUE"


def test_the_knob_crosses_the_api_both_ways() -> None:
    message = convert.rules_to_proto(RuleSet.preset("north_sultan"))
    assert message.HasField("bots_labelled") and message.bots_labelled is False
    assert message.custom is False
    asked = common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_NORTH_SULTAN, bots_labelled=True)
    rules = convert.rules_from_proto(asked)
    assert rules.bots_labelled is True and convert.rules_to_proto(rules).custom is True
    asked = common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_OYNA, bots_labelled=False)
    assert convert.rules_from_proto(asked).bots_labelled is False


def test_a_rule_set_without_the_knob_reads_its_presets_value() -> None:
    # A table created before the knob stored its rules without it.
    for preset, labelled in (
        (common_pb2.RULE_PRESET_OYNA, True),
        (common_pb2.RULE_PRESET_NORTH_SULTAN, False),
    ):
        old = common_pb2.RuleSet(preset=preset)
        assert not old.HasField("bots_labelled")
        assert convert.rules_from_proto(old).bots_labelled is labelled
