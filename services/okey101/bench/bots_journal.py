"""The journal of ``okey101 bench bots --journal PATH``: the deals a run has finished, so that a
run killed or stopped part way resumes where it stood instead of starting again.

The file is JSON lines. The first is a header, what the deals depend on: the two levels, the
preset, the seed, the expert's budget and a fingerprint of the code that plays them
(``engine``: of its syntax, so that comments and docstrings may change), with the file's kind
and format version. Each later line is one finished deal, appended and flushed as the deal
finishes, in the order deals finish.

``opened`` reads a journal for a run with a given header and appends to it. A journal whose header
is not that run's (other deals, or the same deals played by other code) is refused
(``JournalRefused``) and left as it is. A last line without its newline is a write cut short by a
kill: it is dropped and the file cut back to the lines before it, so that the deal is played again
and later lines append cleanly. A run holds its journal locked (``flock``) while it is open: a
second run given the same journal meanwhile is refused, and reading the file alone takes no lock.
"""

from __future__ import annotations

import ast
import dataclasses
import fcntl
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

import okey101.engine
from okey101.engine.bots.expert import ExpertBudget
from okey101.engine.bots.levels import BotLevel

KIND = "okey101 bench bots"
# 2: the engine's fingerprint is over its syntax trees, docstrings left out (1: its bytes).
FORMAT = 2

T = TypeVar("T")


class JournalRefused(Exception):
    """A file that is not the journal of this run's deals: one sentence, for stderr."""


def header(
    candidate: BotLevel,
    reference: BotLevel,
    preset: str,
    seed: int,
    budget: ExpertBudget,
    rule_overrides: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """The header of a journal of these deals: all that ``play_deal`` plays deal n from, but n.
    Knobs changed from the preset's (``--rule``) are ``rules``; a run of the preset as it
    stands writes no ``rules``, as before the knobs could be changed."""
    head: dict[str, object] = {
        "journal": KIND,
        "format": FORMAT,
        "candidate": str(candidate),
        "reference": str(reference),
        "preset": preset,
        "seed": seed,
        "budget": dataclasses.asdict(budget),
        "engine": engine_fingerprint(),
    }
    if rule_overrides:
        head["rules"] = dict(sorted(rule_overrides.items()))
    return head


def engine_fingerprint() -> str:
    """SHA-256 over the code that plays the deals: every .py file under the engine package's
    directory, by sorted relative path, and the bench's own ``bots_bench.py`` (how a deal is
    dealt, seeded and played out), each as its path and its syntax tree without docstrings.

    The tree, not the bytes: a run of 2,000 expert deals takes hours, and a comment, a
    docstring or a line's layout changes no deal, so editing them must not refuse its journal.
    ``ast.dump`` without positions is what Python will run; its spelling may change with
    Python's minor version (a journal begun on another one is refused, not misread)."""
    root = Path(okey101.engine.__file__).parent
    files = sorted((path.relative_to(root).as_posix(), path) for path in root.rglob("*.py"))
    files.append(("../bench/bots_bench.py", Path(__file__).with_name("bots_bench.py")))
    digest = hashlib.sha256()
    for relative, path in files:
        name = relative.encode()
        code = code_tree(path.read_bytes()).encode()
        # Lengths before contents: no two different trees give the same stream of bytes.
        digest.update(b"%d:%s%d:" % (len(name), name, len(code)))
        digest.update(code)
    return digest.hexdigest()


def code_tree(source: bytes) -> str:
    """``source``'s syntax tree without positions, comments or docstrings, as text."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, _WITH_DOCSTRING) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = node.body[1:]
    return ast.dump(tree, include_attributes=False)


_WITH_DOCSTRING = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


@contextmanager
def opened(
    path: Path, header: Mapping[str, object], parse: Callable[[dict[str, Any]], T]
) -> Iterator[tuple[list[T], Callable[[Mapping[str, object]], None]]]:
    """The journal at ``path`` for a run whose header is ``header``, held locked (``flock``)
    for the block: the deals it holds (each line through ``parse``) and a function that
    appends one deal's line and flushes it (a kill loses at most the deal being written). The
    file is begun with the header if it is new, cut back to its last whole line if a write was
    cut short.

    Refused (``JournalRefused``), the file untouched, if another run holds it, if it is not a
    journal or is another run's, or if it holds a whole line ``parse`` does not take
    (KeyError, TypeError or ValueError).
    """
    with path.open("a+b") as file:
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise JournalRefused(
                f"{path} is being written by another run: wait for it to end, or give another "
                "--journal path"
            ) from None
        deals = _read(path, file, header, parse)

        def add(record: Mapping[str, object]) -> None:
            file.write(_line(record))
            file.flush()

        yield deals, add  # the lock goes with the file when the block ends


def _read(
    path: Path,
    file: IO[bytes],
    header: Mapping[str, object],
    parse: Callable[[dict[str, Any]], T],
) -> list[T]:
    wanted = _line(header)
    file.seek(0)
    data = file.read()
    lines = data.split(b"\n")
    torn = lines.pop()  # what follows the last newline: a line cut short, or nothing
    if not lines:
        # Nothing whole, so nothing to keep: a new journal, or a header cut short. Any other
        # file is not ours to overwrite.
        if not wanted.startswith(torn):
            raise JournalRefused(f"{path} is not a journal of bench bots")
        file.truncate(0)
        file.write(wanted)
        file.flush()
        return []
    try:
        found = json.loads(lines[0])
    except ValueError:
        raise JournalRefused(f"{path} is not a journal of bench bots") from None
    _check_header(path, found, json.loads(wanted))
    deals: list[T] = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise TypeError("not an object")
            deals.append(parse(record))
        except (KeyError, TypeError, ValueError):
            raise JournalRefused(f"line {number} of {path} is not a deal") from None
    if torn:
        file.truncate(len(data) - len(torn))
    return deals


def _line(record: Mapping[str, object]) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def _check_header(path: Path, found: Any, wanted: dict[str, Any]) -> None:
    if not isinstance(found, dict) or found.get("journal") != KIND:
        raise JournalRefused(f"{path} is not a journal of bench bots")
    if found.get("format") != wanted["format"]:
        raise JournalRefused(
            f"{path} is a bench bots journal of format {found.get('format')!r}, which this "
            f"version (format {wanted['format']}) does not read"
        )
    written, expected = _flat(found), _flat(wanted)
    # Both ways: a key only the journal has (a knob it changed) is a difference too.
    differences = [
        f"{key} {_shown_in(written, key)}, not {_shown_in(expected, key)}"
        for key in [*expected, *(key for key in written if key not in expected)]
        if written.get(key) != expected.get(key)
    ]
    if differences:
        raise JournalRefused(
            f"{path} holds other deals than this run's ({'; '.join(differences)}): give the "
            "arguments it was begun with, or another --journal path"
        )


def _flat(header: Mapping[str, Any]) -> dict[str, Any]:
    """``budget``'s fields as ``budget.playouts`` (and ``rules``' knobs as ``rules.KNOB``), so
    that a difference names one."""
    flat: dict[str, Any] = {}
    for key, value in header.items():
        if isinstance(value, dict):
            flat.update((f"{key}.{field}", inner) for field, inner in value.items())
        else:
            flat[key] = value
    return flat


def _shown_in(header: Mapping[str, Any], key: str) -> str:
    return _shown(header[key]) if key in header else "unset"


def _shown(value: object) -> str:
    # A fingerprint is told apart by its first hex digits.
    if isinstance(value, str) and len(value) == 64:
        return value[:12] + "…"
    return json.dumps(value)
