"""What every command of the ``okey101`` command line shares.

A command group is a module of ``okey101.cli`` with an ``add_*`` function per command: it adds
the command's parser to ``Commands`` and sets its handler, which takes the parsed arguments and
returns the exit status. A handler imports what it runs inside itself, so that ``okey101
--help`` and ``okey101 serve SERVICE`` load only what they use.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Final, TypeAlias

PROG: Final = "okey101"
USAGE_ERROR: Final = 2

Handler = Callable[[argparse.Namespace], int]
# The object ``add_subparsers`` returns, to which a command adds its parser.
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class CommandError(Exception):
    """Bad input found by the command line itself: reported as one line, exit status 2."""


def rule_override(text: str) -> tuple[str, object]:
    """An argparse type: ``KNOB=VALUE``, one rule knob (docs/rules.md) and its value, read as
    JSON where it is one (``true``, ``false``, a number) and as the enum's string otherwise.
    Whether the knob and value exist is the rule set's to say (``RuleSet.with_overrides``)."""
    knob, equals, raw = text.partition("=")
    if not equals or not knob:
        raise argparse.ArgumentTypeError(f"not KNOB=VALUE: {text!r}")
    try:
        value: object = json.loads(raw)
    except ValueError:
        value = raw
    return knob, value


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


__all__ = ["PROG", "USAGE_ERROR", "CommandError", "Commands", "Handler", "positive_int"]
