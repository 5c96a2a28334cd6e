"""The abuse harness (``support.abuse``) can tell right from wrong: the access the protos
document is the access each service enforces, the log scanner finds racks and secrets and passes
ordinary lines, and refusals are read from the rich status with bad ones told apart.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from okey.v1 import table_pb2

from support.abuse import (
    POLICIES,
    check_refusal,
    documented_access,
    every_rpc,
    full_name,
    outcome_of_error,
    rack_in,
    secret_in,
)


def test_the_access_the_protos_document_is_the_access_each_service_enforces() -> None:
    documented = documented_access()
    assert set(documented) == set(every_rpc())
    for (service, method), kinds in documented.items():
        enforced = POLICIES[service].accepts(full_name(service, method))
        # RegisterAccount takes no token or a guest's: declared open, it reads one itself.
        if kinds == {"none", "player"}:
            assert enforced == {"none"}, (service, method)
            continue
        assert enforced == kinds, (service, method, enforced, kinds)
    internal = sorted(rpc for rpc, kinds in documented.items() if kinds == {"service"})
    assert ("table", "CreateTable") in internal and ("bot", "NextStep") in internal
    assert ("scoring", "RecordHand") in internal


def test_the_log_scanner_finds_racks_and_secrets_and_passes_ordinary_lines() -> None:
    ordinary = [
        '{"method": "/okey.v1.TableService/Act", "code": "OK", "duration_ms": 3.2, '
        '"table_id": "t-0f3a", "hand_id": "t-0f3a-h1", "request_id": "r-1"}',
        '{"event": "table closed", "reason": "seats 0, 1, 2", "level": "info"}',
        '{"event": "rpc", "code": "FAILED_PRECONDITION", "seats": [0, 1]}',
        '{"event": "hand ended", "totals": [0, 0, 0, 0], "text": "totals [12, 12, 40, 40]"}',
        '{"event": "scores", "totals": [120, 35, 7, 80]}',
    ]
    for line in ordinary:
        assert rack_in(line) is None, line
        assert secret_in(line, ["s3cret-guest"]) is None, line
    racks = [
        '{"event": "dealt", "rack": [3, 17, 40, 41, 99]}',
        '{"event": "oops", "error": "cannot play R7 R8 R9 with K1"}',
        '{"event": "bad", "state": {"seats": [{"rack": [0, 1, 2, 3]}]}}',
        '{"event": "repr", "error": "rack_tile_ids: [12, 44, 105]"}',
    ]
    for line in racks:
        assert rack_in(line) is not None, line
    token = "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJwXzEyMyJ9.c2lnbmF0dXJl"
    assert secret_in(f'{{"auth": "Bearer {token}"}}', []) is not None
    assert secret_in('{"password": "s3cret-guest"}', ["s3cret-guest"]) is not None
    assert secret_in('{"key": "-----BEGIN PRIVATE KEY-----"}', []) is not None


def test_refusals_are_read_from_the_rich_status_and_bad_ones_are_told_apart() -> None:
    class Refused(grpc.RpcError):
        def __init__(self, code: grpc.StatusCode, details: list[Any], domain: str) -> None:
            info = error_details_pb2.ErrorInfo(reason="TABLE_NOT_FOUND", domain=domain)
            packed = []
            for detail in (info, *details):
                from google.protobuf import any_pb2

                item = any_pb2.Any()
                item.Pack(detail)
                packed.append(item)
            status = status_pb2.Status(code=code.value[0], message="x", details=packed)
            self._code = code
            self._trailing = (("grpc-status-details-bin", status.SerializeToString()),)

        def code(self) -> grpc.StatusCode:
            return self._code

        def details(self) -> str:
            return "x"

        def trailing_metadata(self) -> Any:
            return self._trailing

    sentence = error_details_pb2.LocalizedMessage(locale="en-US", message="No such table.")
    good = outcome_of_error(Refused(grpc.StatusCode.NOT_FOUND, [sentence], "okey101"))
    assert (good.code, good.reason, good.malformed) == (
        grpc.StatusCode.NOT_FOUND,
        "TABLE_NOT_FOUND",
        [],
    )
    check_refusal(good, table_pb2.GetTableRequest(locale="en"), "good")
    wrong_domain = outcome_of_error(Refused(grpc.StatusCode.NOT_FOUND, [sentence], "other"))
    assert wrong_domain.malformed
    no_sentence = outcome_of_error(Refused(grpc.StatusCode.NOT_FOUND, [], "okey101"))
    assert no_sentence.malformed
    internal = outcome_of_error(Refused(grpc.StatusCode.INTERNAL, [sentence], "okey101"))
    with pytest.raises(AssertionError):
        check_refusal(internal, table_pb2.GetTableRequest(), "internal")
    with pytest.raises(AssertionError):
        check_refusal(good, table_pb2.GetTableRequest(locale="tr"), "asked in Turkish")
