"""The one check of request ids and of the ids a request names (``platform.ids``)."""

from __future__ import annotations

import grpc
import pytest

from okey101.platform.errors import InvalidArgument, status_code_of
from okey101.platform.ids import SHOWN_MAX, check_id, check_request_id, shown_value
from okey101.platform.schema import ID_LENGTH

GOOD_REQUEST_IDS = ("a", "A-b_c.d:e", "0" * 64, "550e8400-e29b-41d4-a716-446655440000")
BAD_REQUEST_IDS = (" ", "a b", "x" * 65, "é", "a/b", "id\n", "😀", "a\0b")


@pytest.mark.parametrize("request_id", GOOD_REQUEST_IDS)
def test_a_well_formed_request_id_is_given_back(request_id: str) -> None:
    assert check_request_id(request_id) == request_id


@pytest.mark.parametrize("request_id", BAD_REQUEST_IDS)
def test_a_malformed_request_id_is_bad_request_id_in_both_languages(request_id: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        check_request_id(request_id)
    error = caught.value
    assert error.code == "BAD_REQUEST_ID"
    assert status_code_of(error) == grpc.StatusCode.INVALID_ARGUMENT
    assert "request_id" in error.message("en") and "64" in error.message("en")
    assert "request_id" in error.message("tr") and "karakter" in error.message("tr")
    assert request_id not in error.params.values()  # the value is not quoted back


def test_a_missing_request_id_is_field_required() -> None:
    with pytest.raises(InvalidArgument) as caught:
        check_request_id("")
    assert (caught.value.code, caught.value.params) == ("FIELD_REQUIRED", {"field": "request_id"})
    assert caught.value.message("tr") == "İstekte request_id alanı olmalı."


def test_an_id_is_at_most_id_length_printable_characters() -> None:
    assert check_id("t-" + "a" * (ID_LENGTH - 2), "table_id") == "t-" + "a" * (ID_LENGTH - 2)
    assert check_id("", "tournament_id", required=False) == ""
    for bad in ("a" * (ID_LENGTH + 1), "t\n1", "t\x1b[2J"):
        with pytest.raises(InvalidArgument) as caught:
            check_id(bad, "table_id")
        assert caught.value.code == "BAD_FIELD"
        assert caught.value.params == {"field": "table_id", "value": shown_value(bad)}
    with pytest.raises(InvalidArgument) as missing:
        check_id("", "table_id")
    assert missing.value.params == {"field": "table_id"}


def test_a_refused_value_is_quoted_cut_to_its_first_characters() -> None:
    assert shown_value("short") == "short"
    cut = shown_value("x" * 500)
    assert len(cut) == SHOWN_MAX and cut.endswith("...")
