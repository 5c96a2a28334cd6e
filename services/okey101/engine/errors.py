"""Errors the engine raises: a stable code, parameters, and a sentence from the catalogue.

Two kinds, because callers treat them differently (the services map them to gRPC statuses):

- ``InvalidInput``: the input is malformed (an unknown tile, a third copy, a bad meld index).
- ``RuleViolation``: the input is well formed but the rules forbid it now.

Both carry ``code`` (UPPER_SNAKE, stable: clients switch on it), ``params`` (what the sentence
names) and render the sentence in English or Turkish from ``sentences.CATALOGUE``.
"""

from __future__ import annotations

from okey101.engine.sentences import render

ParamValue = str | int


class OkeyError(Exception):
    """Base of the engine's errors."""

    def __init__(self, code: str, **params: ParamValue) -> None:
        self.code = code
        self.params: dict[str, ParamValue] = dict(params)
        super().__init__(self.message())

    def message(self, language: str = "en") -> str:
        """The player's sentence in ``language`` ("en" or "tr")."""
        return render(self.code, language, self.params)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (type(self), self.code, self.params))


def _rebuild(cls: type[OkeyError], code: str, params: dict[str, ParamValue]) -> OkeyError:
    return cls(code, **params)


class InvalidInput(OkeyError):
    """Malformed input: it names something that does not exist or cannot be."""


class RuleViolation(OkeyError):
    """A well-formed move or meld that the rules do not allow."""
