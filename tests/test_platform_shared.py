"""The mechanisms the services share, one copy of each in ``platform``: page tokens
(``platform.paging``), message catalogues (``platform.messages``) and the database-outage
wrapper (``platform.database.outage_as``). The services' own tests call them over gRPC; these
pin what each does on its own."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from okey101.engine.errors import InvalidInput, OkeyError
from okey101.lobby import errors as lobby_errors
from okey101.platform import paging
from okey101.platform.database import is_outage, outage_as
from okey101.platform.errors import InvalidArgument, PlatformError, status_code_of
from okey101.platform.messages import PLATFORM, Catalogue, Catalogued
from okey101.scoring import errors as scoring_errors
from okey101.table import errors as table_errors

SERVICE_ERRORS = (lobby_errors, scoring_errors, table_errors)
PAGE_TOKEN_INVALID = {
    "en": "The page token is not one this call gave for the same request; start again from the "
    "first page.",
    "tr": "Sayfa anahtarı bu istek için verilmiş bir anahtar değil; ilk sayfadan yeniden başlayın.",
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
