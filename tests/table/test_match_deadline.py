"""A table's match deadline (#37, a tournament round's time limit), over real gRPC beside the
real rules, bot and scoring services.

- The first hand that ends at or after the deadline ends the match, as a match of fixed hands
  ends after its last (HAND_ENDED saying so, MATCH_ENDED, the score sheet recorded and ended);
  every hand that ended before it was followed by the next deal. The result says the deadline
  ended it, with fewer hands than planned.
- A deadline that passes between hands (the next deal pending) ends the match then: no other
  hand is dealt and the pause before the next deal is not waited out.
- Without a deadline nothing changes; a deadline already past, or one a Timestamp cannot hold,
  is refused and no table is made.
- A table process SIGKILLed during the match and started again still ends it at the deadline.
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from okey.v1 import common_pb2, scoring_pb2, table_pb2, table_pb2_grpc

from okey101.engine.errors import InvalidInput
from okey101.engine.match import end_match, new_match, record_hand
from okey101.engine.result import EndReason, HandResult
from okey101.engine.rules import RuleSet
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.stack import wait_serving

from support.service_stack import FAST, ManualClock, Stack, peer_services, running_stack
from support.table_process import table_process
from support.tables import all_bots, create_table, get_table, one_hand_rules, refused, run

#: Hands the matches here are planned to last: far more than bots play before a deadline.
PLANNED = 200
STREAM_TIMEOUT = 60.0
#: How far ahead the deadline of bots' matches is: hands take 0.1-0.2 s each (more on a busy
#: machine), so a few end before it.
DEADLINE_AHEAD = 4.0


def long_match() -> common_pb2.RuleSet:
    """A match of ``PLANNED`` hands (oyna's rules, a fixed number of hands)."""
    return one_hand_rules(common_pb2.RULE_PRESET_OYNA, match_hands=PLANNED)


def stamp(seconds: float) -> Timestamp:
    made = Timestamp()
    made.FromMicroseconds(round(seconds * 1_000_000))
    return made


async def start(stack: Stack, table_id: str) -> None:
    await stack.table_stub().Start(
        table_pb2.StartRequest(request_id=uuid.uuid4().hex, table_id=table_id),
        metadata=stack.service_auth(),
    )


async def events_to_the_end(stub: Any, auth: Any, table_id: str) -> list[common_pb2.Event]:
    """Every event of the table's WatchTable stream, from the first, until the server ends it
    (the match over)."""

    async def read() -> list[common_pb2.Event]:
        call = stub.WatchTable(table_pb2.WatchTableRequest(table_id=table_id), metadata=auth)
        out = [item.event async for item in call]
        assert (await call.code()) == grpc.StatusCode.OK
        return out

    return await asyncio.wait_for(read(), STREAM_TIMEOUT)


async def score_sheet(stack: Stack, match_id: str) -> scoring_pb2.ScoreSheet:
    answer = await stack.scoring_stub().GetScoreSheet(
        scoring_pb2.GetScoreSheetRequest(match_id=match_id), metadata=stack.service_auth()
    )
    return answer.sheet


def of_kind(events: list[common_pb2.Event], kind: int) -> list[common_pb2.Event]:
    return [event for event in events if event.kind == kind]


def check_ended_at_the_deadline(events: list[common_pb2.Event], deadline_us: int) -> None:
    """The match ended at ``deadline_us``: with the first hand that ended at or after it (its
    HAND_ENDED says the match is over), or, the deadline having passed between hands, at the
    step of the next deal instead of the deal. Either way every hand before ended before the
    deadline and was followed by the next deal, MATCH_ENDED follows the last hand's end and
    nothing more is dealt; the result is ranked by the totals and says the deadline ended it."""
    ended = of_kind(events, common_pb2.EVENT_KIND_HAND_ENDED)
    dealt = of_kind(events, common_pb2.EVENT_KIND_HAND_DEALT)
    assert len(ended) >= 2, "no hand ended before the deadline: the test proves nothing"
    assert len(dealt) == len(ended) < PLANNED
    assert all(event.time.ToMicroseconds() < deadline_us for event in ended[:-1])
    closing = events[-1]
    assert closing.kind == common_pb2.EVENT_KIND_MATCH_ENDED
    assert events[-2].sequence == ended[-1].sequence
    going_on = [False] * (len(ended) - 1)
    if ended[-1].time.ToMicroseconds() >= deadline_us:  # the hand in play was the last
        assert [event.match_progress.ended for event in ended] == [*going_on, True]
        assert closing.time == ended[-1].time
    else:  # the deadline passed while the next deal was pending
        assert [event.match_progress.ended for event in ended] == [*going_on, False]
        assert closing.time.ToMicroseconds() >= deadline_us
    assert all(event.match_progress.match_hands == PLANNED for event in ended)
    result = closing.match_result
    assert result.ended_by_deadline
    assert list(result.hand_ids) == [event.hand_id for event in ended]
    assert result.hands_played == sum(
        1 for event in ended if event.hand_result.reason != common_pb2.HAND_END_REASON_VOID
    )
    assert [seat.total for seat in result.seats] == list(ended[-1].match_progress.totals)
    lowest = min(seat.total for seat in result.seats)
    assert [seat.winner for seat in result.seats] == [s.total == lowest for s in result.seats]


def test_the_engine_is_told_the_last_hand_and_reads_no_clock() -> None:
    """What the table asks of the engine: ``last`` ends the match with that hand (cut short
    unless its rules ended it anyway), ``end_match`` between hands; both rank by the totals."""
    partners = RuleSet.preset("boombala").with_overrides({"partners": True, "match_hands": 5})
    first = HandResult(EndReason.FINISHED, None, (-101, 40, 30, 60), (0, 0, 0, 0))
    match = record_hand(new_match(partners), first)
    assert not match.ended
    cut = record_hand(match, first, last=True)
    assert (cut.ended, cut.cut_short, cut.hands_played) == (True, True, 2)
    assert cut.winners == (0, 2)  # the lower team: seats 0 and 2, -202 + 60 against 80 + 120
    between = end_match(match)
    assert (between.ended, between.cut_short, between.totals) == (True, True, match.totals)
    assert between.winners == (0, 2)
    one_hand = RuleSet.preset("boombala").with_overrides({"match_hands": 1})
    by_its_rules = record_hand(new_match(one_hand), first, last=True)
    assert by_its_rules.ended and not by_its_rules.cut_short
    with pytest.raises(InvalidInput):
        end_match(by_its_rules)


def test_the_first_hand_to_end_after_the_deadline_ends_the_match(
    table_url: str, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path, table_url) as stack:
            deadline = stamp(time.time() + DEADLINE_AHEAD)
            table = await create_table(
                stack, long_match(), seats=all_bots(), match_deadline=deadline
            )
            assert table.match_deadline == deadline
            await start(stack, table.table_id)
            events = await events_to_the_end(
                stack.table_stub(), stack.service_auth(), table.table_id
            )
            check_ended_at_the_deadline(events, deadline.ToMicroseconds())
            result = events[-1].match_result
            # As any match that ends: the table finished with the result, scoring has it all.
            finished = await get_table(stack, table.table_id)
            assert finished.state == common_pb2.TABLE_STATE_FINISHED
            assert finished.match_result == result
            assert finished.match_deadline == deadline
            sheet = await score_sheet(stack, table.match_id)
            assert sheet.ended
            assert len(sheet.rows) == len(result.hand_ids) < PLANNED
            assert list(sheet.totals) == [seat.total for seat in result.seats]

    run(scenario())


def test_a_deadline_passing_between_hands_ends_the_match_there(tmp_path: Path) -> None:
    """The table's clock is turned by hand: the first hand is played (bots step at once), the
    next deal is 30 s away, the deadline 10 s; the match ends at the deadline, with one hand."""
    clock = ManualClock(float(int(time.time())))  # whole seconds: sums of them are exact
    options = dataclasses.replace(FAST, next_hand_seconds=30.0)

    async def scenario() -> None:
        async with running_stack(tmp_path, options=options, clock=clock) as stack:
            deadline = stamp(clock.now + 10)
            table = await create_table(
                stack, long_match(), seats=all_bots(), match_deadline=deadline
            )
            await start(stack, table.table_id)
            call = stack.table_stub().WatchTable(
                table_pb2.WatchTableRequest(table_id=table.table_id),
                metadata=stack.service_auth(),
            )
            async for item in call:
                if item.event.kind == common_pb2.EVENT_KIND_HAND_ENDED:
                    assert not item.event.match_progress.ended
                    break
            call.cancel()
            clock.advance(5)  # before the deadline: nothing is due
            await asyncio.sleep(0.5)
            waiting = await get_table(stack, table.table_id)
            assert (waiting.state, waiting.hand_number) == (common_pb2.TABLE_STATE_PLAYING, 1)
            clock.advance(5)  # the deadline: the match ends, the next deal never comes
            events = await events_to_the_end(
                stack.table_stub(), stack.service_auth(), table.table_id
            )
            assert len(of_kind(events, common_pb2.EVENT_KIND_HAND_DEALT)) == 1
            assert [e.kind for e in events[-2:]] == [
                common_pb2.EVENT_KIND_HAND_ENDED,
                common_pb2.EVENT_KIND_MATCH_ENDED,
            ]
            ended = events[-1]
            assert ended.time == deadline
            result = ended.match_result
            assert result.ended_by_deadline and result.ended_at == deadline
            assert list(result.hand_ids) == [f"{table.table_id}-h1"]
            finished = await get_table(stack, table.table_id)
            assert finished.state == common_pb2.TABLE_STATE_FINISHED
            assert finished.match_result == result
            sheet = await score_sheet(stack, table.match_id)
            assert sheet.ended and len(sheet.rows) == 1

    run(scenario())


def test_without_a_deadline_the_match_plays_its_length(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            rules = one_hand_rules(common_pb2.RULE_PRESET_OYNA, match_hands=3)
            table = await create_table(stack, rules, seats=all_bots())
            assert not table.HasField("match_deadline")
            await start(stack, table.table_id)
            events = await events_to_the_end(
                stack.table_stub(), stack.service_auth(), table.table_id
            )
            result = events[-1].match_result
            assert not result.ended_by_deadline
            assert result.hands_played == 3
            assert (await score_sheet(stack, table.match_id)).ended

    run(scenario())


@pytest.mark.parametrize(
    ("seconds", "nanos", "reason"),
    [
        (-60.0, 0, "MATCH_DEADLINE_PASSED"),
        (0.0, 0, "MATCH_DEADLINE_PASSED"),  # now is not ahead
        (None, 0, "BAD_MATCH_DEADLINE"),  # past the year 9999
        (60.0, 1_000_000_000, "BAD_MATCH_DEADLINE"),
        (60.0, -1, "BAD_MATCH_DEADLINE"),
    ],
)
def test_a_deadline_past_or_out_of_range_is_refused_and_nothing_is_made(
    tmp_path: Path, seconds: float | None, nanos: int, reason: str
) -> None:
    clock = ManualClock()

    async def scenario() -> None:
        async with running_stack(tmp_path, clock=clock) as stack:
            deadline = Timestamp(seconds=253_402_300_800, nanos=nanos)
            if seconds is not None:
                deadline = Timestamp(seconds=int(clock.now + seconds), nanos=nanos)
            stub = stack.table_stub()
            for locale, sentence in (("en", "match deadline"), ("tr", "Maç bitiş zamanı")):
                request = table_pb2.CreateTableRequest(
                    request_id=uuid.uuid4().hex, rules=long_match(), seats=all_bots(),
                    match_deadline=deadline, locale=locale,
                )  # fmt: skip
                code, got, message = await refused(stub.CreateTable, request, stack.service_auth())
                assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
                assert sentence.lower() in message.lower()
            listed = await stub.ListTables(
                table_pb2.ListTablesRequest(), metadata=stack.service_auth()
            )
            assert list(listed.tables) == []

    run(scenario())


@pytest.mark.slow
def test_the_deadline_holds_across_a_table_process_killed_and_restarted(
    table_url: str, tmp_path: Path
) -> None:
    """The table's process is SIGKILLed after the match's first hand and started again: the
    new process, which knows the deadline only from the database, ends the match at it."""
    issuer = TokenIssuer(dev_signing_key(tmp_path))
    service = (("authorization", f"Bearer {issuer.issue('test-lobby', 'service')}"),)
    lease = {"OKEY_TABLE_TIMER_LEASE_SECONDS": "1"}

    async def scenario() -> None:
        async with peer_services(tmp_path) as peers:
            with table_process(tmp_path, table_url, peers, **lease) as (first, target):
                await wait_serving(target)
                async with grpc.aio.insecure_channel(target) as channel:
                    stub = table_pb2_grpc.TableServiceStub(channel)
                    # Far enough ahead that the first hand ends before it even on a busy
                    # machine: the second process, not the first, must end the match.
                    deadline = stamp(time.time() + 3 * DEADLINE_AHEAD)
                    table = (
                        await stub.CreateTable(
                            table_pb2.CreateTableRequest(
                                request_id=uuid.uuid4().hex, rules=long_match(),
                                seats=all_bots(), match_deadline=deadline,
                            ),
                            metadata=service,
                        )
                    ).table  # fmt: skip
                    await stub.Start(
                        table_pb2.StartRequest(request_id="start", table_id=table.table_id),
                        metadata=service,
                    )
                    call = stub.WatchTable(
                        table_pb2.WatchTableRequest(table_id=table.table_id), metadata=service
                    )
                    async for item in call:
                        if item.event.kind == common_pb2.EVENT_KIND_HAND_ENDED:
                            break
                    call.cancel()
                    first.send_signal(signal.SIGKILL)
                    first.wait()
                    killed_us = round(time.time() * 1_000_000)
            with table_process(tmp_path, table_url, peers, **lease) as (_second, target):
                await wait_serving(target)
                async with grpc.aio.insecure_channel(target) as channel:
                    stub = table_pb2_grpc.TableServiceStub(channel)
                    events = await events_to_the_end(stub, service, table.table_id)
                    finished = (
                        await stub.GetTable(
                            table_pb2.GetTableRequest(table_id=table.table_id), metadata=service
                        )
                    ).table
        check_ended_at_the_deadline(events, deadline.ToMicroseconds())
        assert events[-1].time.ToMicroseconds() > killed_us  # the second process ended it
        assert finished.state == common_pb2.TABLE_STATE_FINISHED
        assert finished.match_deadline == deadline
        assert finished.match_result == events[-1].match_result

    run(scenario())
