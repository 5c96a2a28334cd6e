"""Every RPC of every service fuzzed with random and malformed requests (hypothesis).

Each example makes one call to the real services (``support.abuse``), as one of several
callers (the service, a seated player, a stranger, no token, a junk token), with a request that
is either random, built field by field from the message's descriptor, or a valid request with a
few fields mutated. Field values lean towards trouble: empty and duplicate ids, ids of real
objects in the wrong field, another table's request id, bad request ids, unknown enum values,
negative and huge page sizes, garbage page tokens, tile ids off the set, long strings, long and
repeated lists. Then:

- a refused call ends with a status common.proto lists for refusals (never INTERNAL or UNKNOWN,
  never an outage), with exactly one ErrorInfo (domain okey101) and one LocalizedMessage in the
  language asked for, and a reason that means one status within a service;
- a refused call changes nothing: the table service's tables (every table's Table message, so
  state_version and last_sequence), the lobby's rows, the finished match's score sheet, the
  leaderboard and the players' statistics read the same before and after;
- what common.proto promises holds whatever else the request says: no token is UNAUTHENTICATED
  (TOKEN_MISSING), a junk token TOKEN_INVALID, a player's token on a service call
  PERMISSION_DENIED (TOKEN_WRONG_KIND); a bad request id, a negative page size or a garbage page
  token never succeeds.

Undecodable bytes, messages over gRPC's size limit, and lists and strings just under it, are sent
to every RPC too.
"""

from __future__ import annotations

import string
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import grpc
import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from okey.v1 import common_pb2, table_pb2

from okey101.platform.auth import SigningKey, TokenIssuer, dev_signing_key

from support.abuse import (
    READS,
    World,
    bearer,
    check_refusal,
    documented_access,
    every_rpc,
    method_of,
    open_world,
    request_class,
    soak,
)
from support.abuse_requests import (
    NUMBER_MARK,
    POOL_MARK,
    POOL_SLOTS,
    TEMPLATES,
    base_request,
    pools_of,
    resolve,
)

#: A refusal that changes state on purpose: a spent refresh token presented again revokes its
#: whole login (the thief and the owner both have to log in again).
CHANGES_ON_REFUSAL: Final = frozenset({"REFRESH_TOKEN_REUSED"})
INT_RANGES: Final = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}
STRINGS: Final = (
    "",
    " ",
    "a",
    "x" * 65,
    "x" * 129,
    "y" * 2000,
    "\x00",
    "\n",
    "İstanbul",
    "ıİşŞğĞ",
    "😀",
    "../../etc/passwd",
    "' OR 1=1 --",
    "%s%s%n",
    "null",
    "-1",
    "0",
    "R7",
    "FJ",
    "t-00000000000000000000000000000000",
    "p_none",
    "t_none",
    "q_none",
)
BAD_REQUEST_IDS: Final = ("", " ", "a b", "x" * 65, "é", "a/b", "id\n", "😀", "a" * 1000)
LOCALES: Final = ("", "tr", "en", "tr-TR", "en-GB", "xx", "tr;q=0", "*", "tr-TR,en;q=0.5")
PAGE_TOKENS: Final = ("junk", "eyJrIjpbMSwidCJdLCJmIjoiMCJ9", "=", "x" * 300, "\x00\x01", "e30")
SEEDS: Final = ("00" * 8, "ab" * 32, "0" * 15, "zz" * 10, "ab" * 33, "AB" * 8)

#: The callers an example may call as.
CALLERS: Final = ("service", "seated", "other", "stranger", "none", "junk", "expired", "forged")


# ---------------------------------------------------------------------------------------------
# The world, once per module


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with open_world(tmp_path_factory.mktemp("abuse-fuzz")) as opened:
        yield opened


@dataclass(frozen=True)
class Caller:
    name: str
    metadata: tuple[tuple[str, str], ...]


def caller(world: World, name: str) -> Caller:
    """``seated``: the player whose turn it is at the live table; ``other``: another seated
    player; ``stranger``: a guest at no table."""
    if name == "service":
        return Caller(name, world.service_auth())
    if name == "none":
        return Caller(name, ())
    if name == "junk":
        return Caller(name, bearer("not-a-jwt"))
    key = dev_signing_key(world.var_dir)
    if name == "expired":
        token = TokenIssuer(key).issue(
            world.guests[0].player_id, "player", ttl_seconds=60, now=time.time() - 3600
        )
        return Caller(name, bearer(token))
    if name == "forged":
        token = TokenIssuer(SigningKey(SigningKey.generate().private_key, key.kid)).issue(
            world.guests[0].player_id, "player"
        )
        return Caller(name, bearer(token))
    turn, seated = world.seat_to_move()
    guest = {
        "seated": seated,
        "other": world.guests[(turn + 1) % 4],
        "stranger": world.guests[4],
    }[name]
    return Caller(name, guest.auth)


# ---------------------------------------------------------------------------------------------
# Requests from descriptors
#
# What hypothesis draws never depends on the world (else a replay of an example would draw
# differently): a value that should be a real object's id is drawn as a reference, a marked
# string naming a pool and an index, which ``resolve`` replaces with what the world holds when
# the call is made. The live table's version and sequence numbers are marked numbers likewise
# (``support.abuse_requests``).


def pooled(name: str) -> st.SearchStrategy[str]:
    return st.integers(0, POOL_SLOTS - 1).map(lambda index: f"{POOL_MARK}{name}:{index}")


POOLED_FIELDS: Final = frozenset(
    {
        "table_id",
        "hand_id",
        "match_id",
        "player_id",
        "host_player_id",
        "tournament_id",
        "ticket_id",
        "invite_code",
        "refresh_token",
        "device_id",
        "guest_secret",
        "username",
        "password",
    }
)
GENERIC_STRINGS: Final = st.one_of(st.sampled_from(STRINGS), st.text(max_size=40), pooled("any"))


def strings_for(name: str) -> st.SearchStrategy[str]:
    if name == "request_id":
        return st.one_of(
            st.uuids().map(lambda value: value.hex),
            st.sampled_from(BAD_REQUEST_IDS),
            pooled("used_request_id"),
            st.text(
                alphabet=string.ascii_letters + string.digits + "._:-", min_size=1, max_size=70
            ),
        )
    if name == "locale":
        return st.one_of(st.sampled_from(LOCALES), st.text(max_size=12))
    if name == "page_token":
        return st.sampled_from(PAGE_TOKENS)
    if name == "deal_seed":
        return st.one_of(st.sampled_from(SEEDS), GENERIC_STRINGS)
    if name in POOLED_FIELDS:
        return st.one_of(pooled(name), GENERIC_STRINGS)
    return GENERIC_STRINGS


def integers_for(field: FieldDescriptor) -> st.SearchStrategy[int]:
    low, high = INT_RANGES[field.type]
    edges = [0, 1, 2, 3, 4, 5, -1, low, high, 2**31 - 1, 2**32 - 1]
    name = field.name
    if name == "page_size":
        edges += [-2, -100, 200, 201, 500, 10**6]
    if "tile" in name or name in ("indicator", "id"):
        edges += [104, 105, 106, 255]
    live: list[st.SearchStrategy[int]] = []
    if field.type == FieldDescriptor.TYPE_UINT64 and name in (
        "expected_state_version",
        "after_sequence",
        "state_version",
        "sequence",
    ):
        live.append(st.integers(NUMBER_MARK, NUMBER_MARK + 3))
    edges = [value for value in edges if low <= value <= high]
    return st.one_of(st.sampled_from(edges), st.integers(low, high), st.integers(0, 110), *live)


def scalars_for(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        return strings_for(field.name)
    if kind == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=64)
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return st.floats(allow_nan=True, allow_infinity=True, width=32)
    if kind == FieldDescriptor.TYPE_ENUM:
        known = [value.number for value in field.enum_type.values]
        return st.one_of(st.sampled_from(known), st.sampled_from([-1, 99, 2**31 - 1]))
    return integers_for(field)


@st.composite
def messages(draw: st.DrawFn, descriptor: Descriptor, depth: int = 0) -> Any:
    """A message of ``descriptor``'s type with a random selection of fields set (references
    unresolved)."""
    message = message_factory.GetMessageClass(descriptor)()
    for field in descriptor.fields:
        if not draw(st.booleans()):
            continue
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            if field.message_type.GetOptions().map_entry or depth >= 3:
                continue  # no request has maps
            element: Any = messages(field.message_type, depth + 1)
        else:
            element = scalars_for(field)
        if field.is_repeated:
            count = draw(st.one_of(st.integers(0, 4), st.sampled_from([23, 60, 300])))
            if draw(st.booleans()):  # duplicates: one value again and again
                values = [draw(element)] * count
            else:
                values = [draw(element) for _ in range(min(count, 8))]
                while values and len(values) < count:
                    values += values[: count - len(values)]
            target = getattr(message, field.name)
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                for value in values:
                    target.add().CopyFrom(value)
            else:
                target.extend(values)
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            getattr(message, field.name).CopyFrom(draw(element))
        else:
            setattr(message, field.name, draw(element))
    return message


# ---------------------------------------------------------------------------------------------
# Mutations of valid requests (``support.abuse_requests.TEMPLATES``)


def _paths(message: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every set field of a message, as paths (field names and list indexes)."""
    for field, value in message.ListFields():
        path = (*prefix, field.name)
        yield path
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        items = list(value) if field.is_repeated else [value]
        for index, item in enumerate(items[:6]):
            yield from _paths(item, (*path, index) if field.is_repeated else path)


@dataclass(frozen=True)
class Mutation:
    """One change to a valid request, drawn without looking at it: which field (an index
    into its set fields, whatever they are then), what to do, and a value of each kind."""

    which: int
    action: str
    text: str
    number: int
    flag: bool
    count: int


mutations = st.builds(
    Mutation,
    which=st.integers(0, 10_000),
    action=st.sampled_from(["replace", "clear", "repeat", "empty"]),
    text=strings_for("any"),
    number=st.one_of(
        st.sampled_from([0, 1, 3, 4, 5, 104, 105, 106, -1, 2**31 - 1, 2**32 - 1, 2**63 - 1]),
        st.integers(-(2**63), 2**64 - 1),
        st.integers(NUMBER_MARK, NUMBER_MARK + 3),
    ),
    flag=st.booleans(),
    count=st.integers(1, 40),
)


def _fit(number: int, field: FieldDescriptor) -> int:
    """``number`` as a value the field's type holds (wrapped around its range)."""
    if field.type == FieldDescriptor.TYPE_ENUM:
        low, high = -(2**31), 2**31 - 1
    else:
        low, high = INT_RANGES[field.type]
    if low <= number <= high:
        return number
    return (number - low) % (high - low + 1) + low


def mutate(template: Any, changes: list[Mutation]) -> Any:
    """``template`` with ``changes`` made (references in their values unresolved)."""
    message = type(template)()
    message.CopyFrom(template)
    for change in changes:
        paths = list(_paths(message))
        if not paths:
            break
        path = paths[change.which % len(paths)]
        parent = message
        for step in path[:-1]:
            parent = parent[step] if isinstance(step, int) else getattr(parent, step)
        name = path[-1]
        field = parent.DESCRIPTOR.fields_by_name[name]
        values = getattr(parent, name)
        if change.action == "clear":
            parent.ClearField(name)
        elif field.is_repeated and change.action == "repeat" and len(values):
            chosen = values[change.which % len(values)]
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                for _ in range(change.count):
                    values.add().CopyFrom(chosen)
            else:
                values.extend([chosen] * change.count)
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            if field.is_repeated:
                values.add()  # an empty element
            else:
                values.Clear()
                values.SetInParent()  # present, but empty
        else:
            if field.type == FieldDescriptor.TYPE_STRING:
                value: Any = "" if change.action == "empty" else change.text
            elif field.type == FieldDescriptor.TYPE_BOOL:
                value = change.flag
            elif field.type == FieldDescriptor.TYPE_BYTES:
                value = change.text.encode()
            elif field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
                value = float(change.number % 1000)
            else:
                value = 0 if change.action == "empty" else _fit(change.number, field)
            if field.is_repeated:
                values.append(value)
            else:
                setattr(parent, name, value)
    return message


# ---------------------------------------------------------------------------------------------
# One call, and what must hold of it

_ACCESS = documented_access()


def check_call(
    world: World, service: str, method: str, request: Any, who: Caller
) -> tuple[bool, str]:
    """Call, check the outcome and the state; (succeeded, reason)."""
    stateful = service in ("table", "lobby", "scoring")
    before = world.snapshot(service) if stateful else {}
    outcome = world.call(service, method, request, who.metadata)
    what = f"{service}.{method} as {who.name}: {request!s:.600}"
    kinds = _ACCESS[(service, method)]
    # A request too large to read is refused before its token is looked at (as bytes that do
    # not parse are): its size is all that is known of it.
    unread = outcome.reason == "MESSAGE_TOO_LARGE"
    if unread:
        assert outcome.code == grpc.StatusCode.RESOURCE_EXHAUSTED, what
        assert int(outcome.metadata["size"]) > int(outcome.metadata["limit"]), what
        assert request.ByteSize() > int(outcome.metadata["limit"]), what
    if kinds not in ({"none"}, {"none", "player"}) and not unread:
        if who.name == "none":
            assert (outcome.code, outcome.reason) == (
                grpc.StatusCode.UNAUTHENTICATED,
                "TOKEN_MISSING",
            ), what
        if who.name in ("junk", "forged"):
            assert (outcome.code, outcome.reason) == (
                grpc.StatusCode.UNAUTHENTICATED,
                "TOKEN_INVALID",
            ), what
        if who.name == "expired":
            assert (outcome.code, outcome.reason) == (
                grpc.StatusCode.UNAUTHENTICATED,
                "TOKEN_EXPIRED",
            ), what
        if who.name in ("seated", "other", "stranger") and "player" not in kinds:
            assert (outcome.code, outcome.reason) == (
                grpc.StatusCode.PERMISSION_DENIED,
                "TOKEN_WRONG_KIND",
            ), what
        if who.name == "service" and "service" not in kinds:
            assert (outcome.code, outcome.reason) == (
                grpc.StatusCode.PERMISSION_DENIED,
                "TOKEN_WRONG_KIND",
            ), what
    fields = request.DESCRIPTOR.fields_by_name
    if outcome.ok:
        if "request_id" in fields:
            assert request.request_id in world.used_request_ids or _valid_id(request.request_id), (
                f"{what}: a bad request id was accepted"
            )
        if "page_size" in fields:
            assert request.page_size >= 0, f"{what}: a negative page size was accepted"
        if "page_token" in fields:
            assert request.page_token == "", f"{what}: a garbage page token was accepted"
        if method not in READS:
            if "request_id" in fields:
                world.used_request_ids.append(request.request_id)
            made = getattr(outcome.response, "table", None)
            if isinstance(made, common_pb2.Table) and made.table_id:
                world.extra_ids.setdefault("table_id", []).append(made.table_id)
            if stateful:
                world.settle(service)
            world.ensure_fixtures()
        return True, "OK"
    check_refusal(outcome, request, what)
    if outcome.reason == "RATE_LIMITED":
        assert int(outcome.metadata.get("retry_after_ms", "0")) > 0, what
    elif outcome.code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        assert outcome.reason == "MESSAGE_TOO_LARGE", what
    # A reason means one status for a method (PlayableTiles' table melds that are not melds
    # are malformed input; a move laying the same group down is a move the rules forbid).
    seen = world.reasons.setdefault(f"{service}.{method}:{outcome.reason}", set())
    seen.add(outcome.code)
    assert len(seen) == 1, f"{what}: {outcome.reason} came as {sorted(c.name for c in seen)}"
    if stateful and outcome.reason not in CHANGES_ON_REFUSAL:
        after = world.snapshot(service)
        assert after == before, f"{what}: refused ({outcome}) but the state changed"
    return False, outcome.reason


def _valid_id(value: str) -> bool:
    return 1 <= len(value) <= 64 and all(
        ch in string.ascii_letters + string.digits + "._:-" for ch in value
    )


def fuzz(max_examples: int) -> settings:
    """Hypothesis settings for calls into a live world: no deadline (a call takes what it
    takes), no example database and no health checks (the world is not hypothesis's)."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
        print_blob=True,
    )


# ---------------------------------------------------------------------------------------------
# The tests


def random_or_mutated(world: World, service: str, method: str, data: st.DataObject) -> None:
    """One example: a random request, or a valid one mutated, from a random caller."""
    template = TEMPLATES.get((service, method))
    name = data.draw(st.sampled_from(("default", *CALLERS)), label="caller")
    if template is not None and data.draw(st.booleans(), label="mutate a valid request"):
        changes = data.draw(st.lists(mutations, min_size=1, max_size=3), label="changes")
        valid, default_caller = template(world)
        request = mutate(valid, changes)
    else:
        descriptor = method_of(service, method).input_type
        request = data.draw(messages(descriptor), label="request")
        default_caller = "seated"
    resolve(request, pools_of(world))
    # Over gRPC's 4 MiB the transport refuses it before any service code runs: the oversized
    # test's business, not this one's.
    assume(request.ByteSize() < 4 * 1024 * 1024 - 1024)
    who = caller(world, default_caller if name == "default" else name)
    check_call(world, service, method, request, who)


@pytest.mark.parametrize(("service", "method"), every_rpc())
@fuzz(max_examples=12)
@given(data=st.data())
def test_random_and_mutated_requests_are_refused_cleanly_and_change_nothing(
    world: World, service: str, method: str, data: st.DataObject
) -> None:
    random_or_mutated(world, service, method, data)


@soak
@pytest.mark.parametrize(("service", "method"), every_rpc())
@fuzz(max_examples=250)
@given(data=st.data())
def test_soak_random_and_mutated_requests(
    world: World, service: str, method: str, data: st.DataObject
) -> None:
    random_or_mutated(world, service, method, data)


def test_the_templates_are_valid_requests_that_succeed(world: World) -> None:
    """Each mutation starts from a request the service accepts (else the fuzz would only ever
    see requests that fail at the first check)."""
    for (service, method), template in TEMPLATES.items():
        if (service, method) in (("scoring", "RecordHand"), ("scoring", "RecordMatch")):
            continue  # recorded already: accepted again as a retry, below
        request, name = template(world)
        if method not in READS and method not in (
            "ApplyAction",
            "ViewHand",
            "ViewHints",
            "BestOpening",
            "PlayableTiles",
            "ValidateOpening",
            "NextStep",
        ):
            continue  # would change the world; the fuzz makes these succeed now and then
        outcome = world.call(service, method, request, caller(world, name).metadata)
        assert outcome.ok, f"{service}.{method}: {outcome}"
    for method in ("RecordHand", "RecordMatch"):
        request, name = TEMPLATES[("scoring", method)](world)
        before = world.snapshot("scoring")
        outcome = world.call("scoring", method, request, caller(world, name).metadata)
        assert outcome.ok, f"scoring.{method} retried: {outcome}"
        assert world.snapshot("scoring") == before


UNDECODABLE = st.one_of(
    st.binary(min_size=1, max_size=200),
    st.sampled_from(
        [
            b"\xff\xff\xff\xff",  # a field number 0 wire type 7
            b"\x0a\xff\xff\xff\x0f",  # a length beyond the end
            b"\x08" + b"\xff" * 11,  # a varint of 11 bytes
            b"\x12\x03\xc3\x28a",  # a string that is not UTF-8
            b"\x0b",  # a group start
            b"\x0c",  # a group end with no start
        ]
    ),
)


@pytest.mark.parametrize(("service", "method"), every_rpc())
@fuzz(max_examples=4)
@given(payload=UNDECODABLE)
def test_undecodable_bytes_are_invalid_argument_never_unknown(
    world: World, service: str, method: str, payload: bytes
) -> None:
    bytes_sent(world, service, method, payload)


@soak
@pytest.mark.parametrize(("service", "method"), every_rpc())
@fuzz(max_examples=60)
@given(payload=UNDECODABLE)
def test_soak_undecodable_bytes(world: World, service: str, method: str, payload: bytes) -> None:
    bytes_sent(world, service, method, payload)


def bytes_sent(world: World, service: str, method: str, payload: bytes) -> None:
    """Bytes that are not the request message: INVALID_ARGUMENT (MALFORMED_REQUEST) before the
    token is even looked at, never UNKNOWN; bytes that happen to decode are a request like any
    other."""
    parses = True
    try:
        request_class(service, method).FromString(payload)
    except Exception:
        parses = False
    kinds = _ACCESS[(service, method)]
    metadata = world.service_auth() if "service" in kinds else world.guests[4].auth
    before = world.snapshot(service) if service in ("table", "lobby", "scoring") else {}
    outcome = world.call(service, method, request_class(service, method)(), metadata, raw=payload)
    what = f"{service}.{method} with {payload!r}"
    if parses:
        assert outcome.ok or outcome.code in {
            grpc.StatusCode.INVALID_ARGUMENT,
            grpc.StatusCode.NOT_FOUND,
            grpc.StatusCode.FAILED_PRECONDITION,
            grpc.StatusCode.PERMISSION_DENIED,
            grpc.StatusCode.UNAUTHENTICATED,
            grpc.StatusCode.RESOURCE_EXHAUSTED,
        }, f"{what}: {outcome}"
        if not outcome.ok:
            check_refusal(outcome, request_class(service, method)(), what)
        return
    assert (outcome.code, outcome.reason) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
    ), f"{what}: {outcome}"
    check_refusal(outcome, request_class(service, method)(), what)
    if before:
        assert world.snapshot(service) == before, what
    bare = world.call(service, method, request_class(service, method)(), (), raw=payload)
    if method_of(service, method).client_streaming:
        # A client stream is admitted (its token checked) before its messages come.
        assert (bare.code, bare.reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")
    else:
        assert (bare.code, bare.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_REQUEST")


def variants(request: Any) -> Iterator[tuple[str, Any]]:
    """The request with one field made wrong in each of the ways the fuzz also tries at
    random: an unknown enum value, an empty id, a duplicated list entry, a bad request id."""

    def fields_of(message: Any, prefix: str) -> Iterator[tuple[str, Any, FieldDescriptor]]:
        for field in message.DESCRIPTOR.fields:
            yield f"{prefix}{field.name}", message, field
            nested = field.type == FieldDescriptor.TYPE_MESSAGE and not field.is_repeated
            if nested and not prefix:  # one level down (a rule set's knobs, a state's phase)
                yield from fields_of(getattr(message, field.name), f"{field.name}.")

    for index, (name, _, field) in enumerate(list(fields_of(request, ""))):

        def copy_at(position: int = index) -> tuple[Any, Any, FieldDescriptor]:
            changed = type(request)()
            changed.CopyFrom(request)
            return changed, *list(fields_of(changed, ""))[position][1:]

        if field.type == FieldDescriptor.TYPE_ENUM:
            for value in (99, -1):
                changed, parent, descriptor = copy_at()
                if descriptor.is_repeated:
                    getattr(parent, descriptor.name).append(value)
                else:
                    setattr(parent, descriptor.name, value)
                yield f"{name}={value}", changed
        elif field.type == FieldDescriptor.TYPE_STRING and not field.is_repeated:
            if name.endswith("_id") or name in POOLED_FIELDS:
                changed, parent, descriptor = copy_at()
                setattr(parent, descriptor.name, "")
                yield f"{name} empty", changed
            if name == "request_id":
                for bad in ("a b", "x" * 65, "é"):
                    changed, parent, descriptor = copy_at()
                    setattr(parent, descriptor.name, bad)
                    yield f"request_id {bad!r}", changed
        elif field.is_repeated:
            changed, parent, descriptor = copy_at()
            values = getattr(parent, descriptor.name)
            if len(values):
                first = values[0]
                if descriptor.type == FieldDescriptor.TYPE_MESSAGE:
                    values.add().CopyFrom(first)
                else:
                    values.append(first)
            elif descriptor.type == FieldDescriptor.TYPE_MESSAGE:
                values.add()
                values.add()
            else:
                values.extend([1, 1])
            yield f"{name} duplicated", changed


@pytest.mark.parametrize(("service", "method"), every_rpc())
def test_unknown_enums_empty_ids_duplicates_and_bad_request_ids_in_every_field(
    world: World, service: str, method: str
) -> None:
    """Each field of a request that gets past the first checks made wrong in turn."""
    base, name = base_request(world, service, method)
    for label, request in variants(base):
        if "request_id" in request.DESCRIPTOR.fields_by_name and "request_id" not in label:
            request.request_id = uuid.uuid4().hex
        succeeded, reason = check_call(world, service, method, request, caller(world, name))
        if label == "request_id empty":
            assert (succeeded, reason) == (False, "FIELD_REQUIRED"), label
        elif label.startswith("request_id "):
            # One check in every service (platform.ids): one reason for a malformed id.
            assert (succeeded, reason) == (False, "BAD_REQUEST_ID"), label


def _huge(service: str, method: str) -> Any:
    """The request with its first string field (or, with none, a list) over 5 MiB."""
    request = request_class(service, method)()
    for field in request.DESCRIPTOR.fields:
        if field.type == FieldDescriptor.TYPE_STRING and not field.is_repeated:
            setattr(request, field.name, "x" * (5 * 1024 * 1024))
            return request
    for field in request.DESCRIPTOR.fields:
        if field.is_repeated and field.type != FieldDescriptor.TYPE_MESSAGE:
            getattr(request, field.name).extend([1] * (3 * 1024 * 1024))
            return request
    if "open" in request.DESCRIPTOR.fields_by_name:  # a client stream's first item (Play)
        request.open.table_id = "x" * (5 * 1024 * 1024)
        return request
    raise AssertionError(f"{service}.{method}: nothing to make large")


def _large(base: Any) -> Iterator[tuple[str, Any]]:
    """``base`` with each string field 200,000 characters long in turn, and each list 30,000
    entries long (an unknown value, an id off the set, or empty messages), under gRPC's limit."""
    for field in base.DESCRIPTOR.fields:
        request = type(base)()
        request.CopyFrom(base)
        target = getattr(request, field.name)
        if field.type == FieldDescriptor.TYPE_STRING and not field.is_repeated:
            setattr(request, field.name, "é" * 200_000)
        elif field.is_repeated and field.type == FieldDescriptor.TYPE_MESSAGE:
            for _ in range(30_000):
                target.add()
        elif field.is_repeated:
            value = "x" * 10 if field.type == FieldDescriptor.TYPE_STRING else 99
            target.extend([value] * 30_000)
        elif (
            field.type == FieldDescriptor.TYPE_MESSAGE
            and field.containing_oneof is not None
            and base.HasField(field.name)
        ):
            # A client stream's item (Play's open): its own fields made large in turn.
            for name, large in _large(getattr(base, field.name)):
                request = type(base)()
                getattr(request, field.name).CopyFrom(large)
                yield f"{field.name}.{name}", request
            continue
        else:
            continue
        yield field.name, request


@pytest.mark.parametrize(("service", "method"), every_rpc())
def test_oversized_messages_lists_and_strings_are_refused_in_bounded_time(
    world: World, service: str, method: str
) -> None:
    """Over gRPC's 4 MiB limit: RESOURCE_EXHAUSTED before any handler runs. Just under it (each
    string field a long one, each list a long one): a refusal like any other, its error small
    enough to reach the client whole even when it quotes the input, or an answer, within a few
    seconds; nothing changes."""
    kinds = _ACCESS[(service, method)]
    metadata = world.service_auth() if "service" in kinds else world.guests[4].auth
    outcome = world.call(service, method, _huge(service, method), metadata)
    assert outcome.code == grpc.StatusCode.RESOURCE_EXHAUSTED, f"{service}.{method}: {outcome}"
    stateful = service in ("table", "lobby", "scoring")
    base, name = base_request(world, service, method)
    who = caller(world, name).metadata
    for field, large in _large(base):
        if "request_id" in large.DESCRIPTOR.fields_by_name and field != "request_id":
            large.request_id = uuid.uuid4().hex
        before = world.snapshot(service) if stateful else {}
        began = time.monotonic()
        outcome = world.call(service, method, large, who)
        elapsed = time.monotonic() - began
        what = f"{service}.{method} with a long {field}"
        assert elapsed < 10, f"{what}: {elapsed:.1f} s"
        if outcome.ok:
            if method not in READS:
                world.settle(service)
                world.ensure_fixtures()
            continue
        check_refusal(outcome, large, what)
        if stateful and outcome.reason not in CHANGES_ON_REFUSAL:
            assert world.snapshot(service) == before, what
    # The server still answers.
    live = table_pb2.GetTableRequest(table_id=world.tables["live"])
    assert world.call("table", "GetTable", live, world.service_auth()).ok


PAGED: Final = [
    (service, method)
    for service, method in every_rpc()
    if "page_size" in method_of(service, method).input_type.fields_by_name
]


def _paged_request(world: World, service: str, method: str) -> Any:
    request = request_class(service, method)()
    fields = request.DESCRIPTOR.fields_by_name
    if "match_id" in fields:
        request.match_id = world.finished_match
    if "tournament_id" in fields:
        request.tournament_id = world.tournament_id
    if "player_id" in fields:
        request.player_id = world.guests[0].player_id
    return request


@pytest.mark.parametrize(("service", "method"), PAGED)
def test_paged_calls_refuse_negative_sizes_and_garbage_tokens_and_cap_huge_sizes(
    world: World, service: str, method: str
) -> None:
    kinds = _ACCESS[(service, method)]
    metadata = world.service_auth() if "service" in kinds else world.guests[0].auth
    assert world.call(service, method, _paged_request(world, service, method), metadata).ok
    for size in (-1, -(2**31)):
        request = _paged_request(world, service, method)
        request.page_size = size
        outcome = world.call(service, method, request, metadata)
        assert outcome.code == grpc.StatusCode.INVALID_ARGUMENT, f"{method} {size}: {outcome}"
        check_refusal(outcome, request, method)
    for token in PAGE_TOKENS:
        request = _paged_request(world, service, method)
        request.page_token = token
        outcome = world.call(service, method, request, metadata)
        assert outcome.code == grpc.StatusCode.INVALID_ARGUMENT, f"{method} {token!r}: {outcome}"
        assert outcome.reason == "PAGE_TOKEN_INVALID", f"{method} {token!r}: {outcome}"
    request = _paged_request(world, service, method)
    request.page_size = 2**31 - 1
    assert world.call(service, method, request, metadata).ok, method
