"""A rule violation as a validation answer's Violation."""

from __future__ import annotations

from okey.v1 import common_pb2

from okey101.engine.errors import OkeyError


def violation_to_proto(error: OkeyError, language: str = "en") -> common_pb2.Violation:
    """An engine error as a validation answer's Violation (code, parameters, sentence)."""
    return common_pb2.Violation(
        code=error.code,
        params={key: str(value) for key, value in error.params.items()},
        message=error.message(language),
    )
