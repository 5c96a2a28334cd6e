"""The mechanisms the services share, one copy of each in ``platform``: page tokens
(``platform.paging``), sentence catalogues (``platform.sentences``), the database-outage wrapper
(``platform.database.outage_as``), stored answers (``platform.idempotency``) and peer calls
(``platform.peer_calls``). The services' own tests call them over gRPC; these pin what each does on
its own."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from okey.v1 import lobby_pb2
from sqlalchemy import BigInteger, Column, LargeBinary, MetaData, String, Table, select
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.engine.errors import InvalidInput, OkeyError
from okey101.lobby import errors as lobby_errors
from okey101.platform import paging
from okey101.platform.config import ConfigError
from okey101.platform.database import Database, is_outage, outage_as, sqlite_url
from okey101.platform.errors import InvalidArgument, PlatformError, status_code_of
from okey101.platform.idempotency import (
    CallKey,
    ClaimedAnswers,
    Once,
    Raced,
    RowAnswers,
    SealedAnswers,
    Stored,
    StoredAnswers,
    Unreadable,
    fingerprint,
)
from okey101.platform.peer_calls import UNREACHABLE, PeerError, call_peer
from okey101.platform.sentences import PLATFORM, Catalogue, Catalogued
from okey101.platform.waiting import wait_set
from okey101.scoring import errors as scoring_errors
from okey101.table import errors as table_errors

SERVICE_ERRORS = (lobby_errors, scoring_errors, table_errors)
PAGE_TOKEN_INVALID = {
    "en": "The page token is not one this call gave for the same request; start again from the "
    "first page.",
    "tr": "Sayfa anahtarı bu istek için verilmiş bir anahtar değil; ilk sayfadan yeniden başla.",
}

# --------------------------------------------------------------------------------------------
# Paging


def test_a_page_token_round_trips_bound_to_its_request() -> None:
    bound = paging.fingerprint("tables", "oyna", 1)
    token = paging.encode_token([3, "t-9"], bound)
    assert paging.decode_token(token, bound, (int, str)) == [3, "t-9"]
    assert paging.decode_token("", bound, (int, str)) is None
    assert paging.decode_token(paging.encode_token([2, "x"], bound), bound, (float, str)) == [
        2.0,
        "x",
    ]


@pytest.mark.parametrize(
    "token",
    ["%%%", "bm90IGpzb24", paging.encode_token([1], "other"), paging.encode_token(["1", 1], "b")],
)
def test_a_foreign_or_broken_token_is_invalid_argument(token: str) -> None:
    with pytest.raises(InvalidArgument) as raised:
        paging.decode_token(token, "b", (int, str))
    assert raised.value.code == "PAGE_TOKEN_INVALID"
    assert status_code_of(raised.value) == grpc.StatusCode.INVALID_ARGUMENT
    assert {language: raised.value.message(language) for language in ("en", "tr")} == (
        PAGE_TOKEN_INVALID
    )


def test_page_sizes() -> None:
    assert paging.page_size(0, default=50, maximum=200) == 50
    assert paging.page_size(500, default=50, maximum=200) == 200
    with pytest.raises(InvalidInput) as raised:
        paging.page_size(-1, default=50, maximum=200)
    assert (raised.value.code, raised.value.params) == (
        "BAD_FIELD",
        {"field": "page_size", "value": "-1"},
    )
    assert status_code_of(raised.value) == grpc.StatusCode.INVALID_ARGUMENT


# --------------------------------------------------------------------------------------------
# Catalogues


def test_a_catalogue_renders_its_own_then_hands_on() -> None:
    below = Catalogue({"B": {"en": "below {x}", "tr": "aşağı {x}"}}, then=PLATFORM.render)
    above = Catalogue({"A": {"en": "above {x}", "tr": "yukarı {x}"}}, then=below.render)
    assert above.render("A", "tr", {"x": 1}) == "yukarı 1"
    assert above.render("A", "de", {"x": 1}) == "above 1"  # English for another language
    assert above.render("A", "en", {}) == "above {x}"  # a missing parameter stays visible
    assert above.render("B", "en", {"x": 2}) == "below 2"
    assert above.render("RATE_LIMITED", "en", {}) == PLATFORM.render("RATE_LIMITED", "en", {})
    assert above.render("MELD_TOO_SHORT", "en", {}) == OkeyError("MELD_TOO_SHORT").message()
    assert above.render("NO_SUCH_CODE", "en", {}) == "NO_SUCH_CODE"


def test_each_service_renders_from_its_own_catalogue_over_the_platforms() -> None:
    for errors in SERVICE_ERRORS:
        assert errors.SENTENCES.sentences is errors.CATALOGUE
        for name in ("Invalid", "Conflict", "Missing", "NotReady"):
            cls = getattr(errors, name)
            assert issubclass(cls, Catalogued) and cls.catalogue is errors.SENTENCES, name
        # A service's own sentence wins over the platform's; the platform's fills in the rest.
        unavailable = errors.NotReady("DATABASE_UNAVAILABLE")
        assert unavailable.message("en") == errors.CATALOGUE["DATABASE_UNAVAILABLE"]["en"]
        page = errors.Invalid("PAGE_TOKEN_INVALID")
        assert {language: page.message(language) for language in ("en", "tr")} == (
            PAGE_TOKEN_INVALID
        )
        assert errors.render("TOKEN_MISSING", "tr", {}) == PLATFORM.render(
            "TOKEN_MISSING", "tr", {}
        )
    assert issubclass(PlatformError, Catalogued) and PlatformError.catalogue is PLATFORM


# --------------------------------------------------------------------------------------------
# The database-outage wrapper


class _Orig(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


class _Log:
    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, Any]]] = []

    def warning(self, event: str, **fields: Any) -> None:
        self.lines.append((event, fields))


OUTAGES = [
    OperationalError("SELECT 1", {}, Exception("connection refused")),
    ConnectionRefusedError(111, "refused"),
    PoolTimeout("the pool is empty"),
    DBAPIError("SELECT 1", {}, _Orig("57P01")),  # the server shutting down
    DBAPIError("SELECT 1", {}, _Orig("40001")),  # a serialisation failure: try again
    DBAPIError("SELECT 1", {}, _Orig("08006")),  # the connection failed
]


@pytest.mark.parametrize("failure", OUTAGES, ids=lambda failure: type(failure).__name__)
def test_an_outage_is_the_services_unavailable_database_unavailable(failure: Exception) -> None:
    assert is_outage(failure)
    log = _Log()
    with pytest.raises(lobby_errors.NotReady) as raised, outage_as(lobby_errors.NotReady, log=log):
        raise failure
    assert raised.value.code == "DATABASE_UNAVAILABLE"
    assert raised.value.__cause__ is failure
    assert status_code_of(raised.value) == grpc.StatusCode.UNAVAILABLE
    assert raised.value.message("en") == lobby_errors.CATALOGUE["DATABASE_UNAVAILABLE"]["en"]
    assert log.lines == [("database unavailable", {"error": type(failure).__name__})]


@pytest.mark.parametrize(
    "failure",
    [
        IntegrityError("INSERT", {}, _Orig("23505")),  # a duplicate key: the work's own fault
        ValueError("a bug"),
        table_errors.Conflict("SEAT_TAKEN", seat=1),
    ],
    ids=lambda failure: type(failure).__name__,
)
def test_anything_else_passes_unchanged(failure: Exception) -> None:
    assert not is_outage(failure)
    log = _Log()
    with pytest.raises(type(failure)) as raised, outage_as(table_errors.NotReady, log=log):
        raise failure
    assert raised.value is failure
    assert log.lines == []


def test_no_log_is_asked_for_unless_given() -> None:
    with pytest.raises(table_errors.NotReady), outage_as(table_errors.NotReady):
        raise OperationalError("SELECT 1", {}, Exception("down"))


def test_a_database_serves_calls_once_migrated_and_a_failed_migration_stops_the_start(
    tmp_path: Path,
) -> None:
    """Before ``migrate_to_serve`` every call is the service's UNAVAILABLE SERVICE_STARTING,
    after it the work runs (an outage in it still DATABASE_UNAVAILABLE); a database that
    cannot be reached to be migrated is a ConfigError naming it."""

    async def scenario() -> None:
        database = Database(sqlite_url(tmp_path / "scoring.db"))
        try:
            not_ready = pytest.raises(scoring_errors.NotReady)
            with not_ready as starting, database.serving(scoring_errors.NotReady):
                raise AssertionError("served before the schema was migrated")
            assert starting.value.code == "SERVICE_STARTING"
            assert status_code_of(starting.value) == grpc.StatusCode.UNAVAILABLE
            await database.migrate_to_serve("scoring")
            with database.serving(scoring_errors.NotReady):
                served = True
            assert served
            not_ready = pytest.raises(scoring_errors.NotReady)
            with not_ready as outage, database.serving(scoring_errors.NotReady):
                raise OperationalError("SELECT 1", {}, Exception("down"))
            assert outage.value.code == "DATABASE_UNAVAILABLE"
        finally:
            await database.dispose()
        # Nothing listens on port 1: the connection is refused.
        broken = Database("postgresql+asyncpg://postgres@127.0.0.1:1/scoring")
        try:
            with pytest.raises(ConfigError, match="cannot migrate the scoring database"):
                await broken.migrate_to_serve("scoring")
            assert not broken.migrated
        finally:
            await broken.dispose()

    asyncio.run(scenario())


# --------------------------------------------------------------------------------------------
# Stored answers

_TABLES = MetaData()
SEALED = Table(
    "sealed_answers",
    _TABLES,
    Column("request_key", String(64), primary_key=True),
    Column("method", String(64), nullable=False),
    Column("payload", LargeBinary, nullable=True),
    Column("created_us", BigInteger, nullable=False),
)
ROWS = Table(
    "hands_with_answers",
    _TABLES,
    Column("hand_id", String(64), primary_key=True),
    Column("content_hash", String(64), nullable=True),
    Column("response", LargeBinary, nullable=True),
)


class Refused(Exception):
    """The mismatch of these tests: the key answered a different request."""


def with_database(tmp_path: Path, test: Callable[[Database], Awaitable[None]]) -> None:
    async def scenario() -> None:
        database = Database(sqlite_url(tmp_path / "answers.db"))
        try:
            async with database.write() as session:
                await session.run_sync(_TABLES.create_all)
            await test(database)
        finally:
            await database.dispose()

    asyncio.run(asyncio.wait_for(scenario(), timeout=20))


def test_a_fingerprint_leaves_out_the_request_id_the_locale_and_what_is_cleared() -> None:
    login = lobby_pb2.LoginAccountRequest(request_id="a", username="ali", password="secret")
    again = lobby_pb2.LoginAccountRequest(
        request_id="b", username="ali", password="other", locale="tr"
    )
    assert fingerprint(login) != fingerprint(again)  # the password counts by default
    cleared = {"request_id", "locale", "password"}
    assert fingerprint(login, cleared=cleared) == fingerprint(again, cleared=cleared)
    assert fingerprint(login, cleared=cleared) != fingerprint(login, cleared=cleared, extra="x")
    assert len(fingerprint(login)) == 32


def test_a_claimed_key_answers_its_retry_and_refuses_another_request(tmp_path: Path) -> None:
    store = SealedAnswers(SEALED, namespace="test-requests", salt=b"test/1")
    answers = ClaimedAnswers[CallKey](store, lambda key: Refused(key.request_id))
    first = lobby_pb2.LogoutRequest(request_id="r-1", refresh_token="rt1.a.b")
    call = Once.of("Logout", "refresh:a", first, lobby_pb2.LogoutResponse)
    answer = lobby_pb2.LogoutResponse(revoked=3)

    async def test(database: Database) -> None:
        async def claim_and_answer(session: AsyncConnection) -> Any:
            stored = await answers.claim(session, call)
            if stored is None:
                await answers.remember(session, call, answer)
            return stored

        assert await database.transaction(claim_and_answer) is None  # the first: made
        assert await database.transaction(claim_and_answer) == answer  # the retry: answered
        async with database.read() as session:
            assert await answers.recall(session, call) == answer
            payload = (await session.execute(select(SEALED.c.payload))).scalar_one()
        assert answer.SerializeToString() not in payload  # sealed, not in the clear
        with pytest.raises(Unreadable):
            store.unseal(CallKey("Logout", "refresh:a", "r-2"), payload)
        # The same request id for a different request is the mismatch.
        other = Once.of(
            "Logout",
            "refresh:a",
            lobby_pb2.LogoutRequest(request_id="r-1", all_sessions=True),
            lobby_pb2.LogoutResponse,
        )
        with pytest.raises(Refused):
            await database.transaction(lambda session: answers.claim(session, other))
        # The first stored answer wins; a forgotten key is new again.
        kept = await database.transaction(
            lambda session: answers.settle(session, call, lobby_pb2.LogoutResponse(revoked=9))
        )
        assert kept == answer
        await database.transaction(lambda session: store.forget(session, call.key))
        assert await database.transaction(claim_and_answer) is None

    with_database(tmp_path, test)


def test_a_claimed_key_with_no_answer_is_not_an_answer(tmp_path: Path) -> None:
    """A key claimed by a change that stored no answer (a rate limit's mark, a refused refresh
    that revoked a login): a retry is made again, not answered."""
    store = SealedAnswers(SEALED, namespace="test-requests", salt=b"test/1")
    answers = ClaimedAnswers[CallKey](store, lambda key: Refused(key.request_id))
    call = Once.of(
        "Logout", "refresh:a", lobby_pb2.LogoutRequest(request_id="r"), lobby_pb2.LogoutResponse
    )

    async def test(database: Database) -> None:
        assert await database.transaction(lambda session: answers.claim(session, call)) is None
        assert await database.transaction(lambda session: answers.claim(session, call)) is None
        assert not await database.transaction(lambda session: store.claim(session, call.key))

    with_database(tmp_path, test)


def test_an_answer_kept_on_the_changes_row_is_given_once_made(tmp_path: Path) -> None:
    """Scoring's variant: keyed by the hand id whatever the request id; a change that lost a
    race reads the winner's answer."""
    store = RowAnswers(ROWS.c.hand_id, ROWS.c.content_hash, ROWS.c.response)
    answers = StoredAnswers[str](store, Refused)
    request = lobby_pb2.LogoutRequest(request_id="d-1", refresh_token="x")
    call = Once("h-1", fingerprint(request), lobby_pb2.LogoutResponse)
    answer = lobby_pb2.LogoutResponse(revoked=1)
    changes: list[str] = []

    async def change(session: AsyncConnection) -> tuple[lobby_pb2.LogoutResponse, bool]:
        changes.append("made")
        stored = Stored(call.asked, answer.SerializeToString(deterministic=True))
        await session.execute(ROWS.insert().values(hand_id="h-1", **store.columns(stored)))
        return answer, True

    async def lost(session: AsyncConnection) -> tuple[lobby_pb2.LogoutResponse, bool]:
        raise Raced()

    async def test(database: Database) -> None:
        assert await answers.answer_once(database, call, change) == (answer, True)
        assert await answers.answer_once(database, call, change) == (answer, False)
        assert changes == ["made"]
        async with database.read() as session:
            row = (await session.execute(select(ROWS))).one()
            assert call.asked is not None and row.content_hash == call.asked.hex()
            # The verdict alone, on what a caller read itself.
            assert answers.replay(call, store.stored_of(row)) == answer
        redelivered = Once("h-1", fingerprint(request), lobby_pb2.LogoutResponse)
        assert await answers.answer_once(database, redelivered, lost) == (answer, False)
        different = Once("h-1", fingerprint(lobby_pb2.LogoutRequest()), lobby_pb2.LogoutResponse)
        with pytest.raises(Refused):
            await answers.answer_once(database, different, change)
        # Nothing to match (``asked`` None): any stored answer is it.
        unchecked = Once("h-1", None, lobby_pb2.LogoutResponse)
        assert answers.replay(unchecked, store.stored_of(row)) == answer
        assert answers.replay(unchecked, None) is None

    with_database(tmp_path, test)


def test_a_fingerprint_binds_the_request() -> None:
    """What a retry must repeat: the request but its cleared fields (a copy made only when one is
    set, hashed the same)."""
    base = lobby_pb2.LeaveTableRequest(request_id="r-1", table_id="t-1")
    in_turkish = lobby_pb2.LeaveTableRequest(request_id="r-1", table_id="t-1", locale="tr")
    other = lobby_pb2.LeaveTableRequest(request_id="r-1", table_id="t-2")
    only_locale = frozenset({"locale"})
    assert fingerprint(base, cleared=only_locale) == fingerprint(in_turkish, cleared=only_locale)
    assert fingerprint(base, cleared=only_locale) != fingerprint(other, cleared=only_locale)
    assert fingerprint(base) == fingerprint(lobby_pb2.LeaveTableRequest(table_id="t-1"))
    assert in_turkish.locale == "tr"  # the request itself is never changed


# --------------------------------------------------------------------------------------------
# Peer calls


def _rpc_error(code: grpc.StatusCode, reason: str = "", **params: str) -> grpc.aio.AioRpcError:
    trailing: tuple[tuple[str, str | bytes], ...] = ()
    if reason:
        info = error_details_pb2.ErrorInfo(reason=reason, domain="okey101", metadata=params)
        detail = any_pb2.Any()
        detail.Pack(info)
        status = status_pb2.Status(code=code.value[0], message="no", details=[detail])
        trailing = (("grpc-status-details-bin", status.SerializeToString()),)
    return grpc.aio.AioRpcError(
        code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailing), details="no"
    )


def _peer(error: grpc.aio.AioRpcError) -> Callable[..., Awaitable[Any]]:
    async def method(request: Any, *, metadata: Any, timeout: float) -> Any:
        raise error

    return method


class PeerAway(Exception):
    """The caller's UNAVAILABLE of these tests."""


@pytest.mark.parametrize("code", sorted(UNREACHABLE, key=lambda code: code.name))
def test_a_peer_that_gives_no_verdict_is_the_callers_unavailable(code: grpc.StatusCode) -> None:
    """UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED and RESOURCE_EXHAUSTED: retry later."""
    assert code in {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
    call = call_peer(
        _peer(_rpc_error(code, "RATE_LIMITED")),
        None,
        metadata=(),
        timeout=1.0,
        unavailable=PeerAway,
    )
    with pytest.raises(PeerAway):
        asyncio.run(call)


@pytest.mark.parametrize(
    ("code", "rebuilt"),
    [
        (grpc.StatusCode.INVALID_ARGUMENT, "InvalidInput"),
        (grpc.StatusCode.FAILED_PRECONDITION, "RuleViolation"),
        (grpc.StatusCode.NOT_FOUND, None),
        (grpc.StatusCode.PERMISSION_DENIED, None),
    ],
)
def test_any_other_status_is_the_peers_answer(code: grpc.StatusCode, rebuilt: str | None) -> None:
    error = _rpc_error(code, "SEAT_TAKEN", seat="2")
    call = call_peer(_peer(error), None, metadata=(), timeout=1.0, unavailable=PeerAway)
    with pytest.raises(PeerError) as raised:
        asyncio.run(call)
    refusal = raised.value
    assert (refusal.code, refusal.reason, refusal.params) == (code, "SEAT_TAKEN", {"seat": "2"})
    assert [key for key, _ in refusal.trailing] == ["grpc-status-details-bin"]
    again = refusal.rebuilt()
    assert (type(again).__name__ if again else None) == rebuilt
    if again is not None:
        assert (again.code, again.params) == ("SEAT_TAKEN", {"seat": "2"})


# --------------------------------------------------------------------------------------------
# Waiting for an event, cancellably


def test_wait_set_says_whether_the_event_came_in_time() -> None:
    async def scenario() -> tuple[bool, bool]:
        late, soon = asyncio.Event(), asyncio.Event()
        asyncio.get_running_loop().call_later(0.01, soon.set)
        return await wait_set(late, 0.02), await wait_set(soon, 5)

    assert asyncio.run(scenario()) == (False, True)


def test_a_cancellation_that_arrives_as_the_event_is_set_still_cancels() -> None:
    """The race asyncio.wait_for loses on Python 3.11 (it returns the event's result and the
    loop waiting on it never stops): the event set and the waiter cancelled in one step."""

    async def scenario() -> None:
        event = asyncio.Event()
        rounds = 0

        async def loop() -> None:
            nonlocal rounds
            while True:
                await wait_set(event, 10)
                rounds += 1

        task = asyncio.create_task(loop())
        await asyncio.sleep(0.01)  # the loop waits on the event
        event.set()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)
        assert rounds == 0

    asyncio.run(scenario())
