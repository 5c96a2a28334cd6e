"""LobbyService's wallets and chips: GetWallet, ListWalletEntries, ClaimDailyChips, AdjustChips,
ListStakeLevels and RecordTableChips (the ledger is ``lobby.chips``; docs/chips.md).

Every call checks its whole request before it touches anything: a refusal writes nothing. A
player's first call that touches their wallet credits the starting grant (``chips.wallets``);
GetWallet and ListWalletEntries do it in a write transaction only the first time, and are
plain reads after. ClaimDailyChips and AdjustChips claim their request id's stored answer in
the transaction that posts the chips (``stores.answers``), so a retry is answered as the first
call was and moves nothing; RecordTableChips is idempotent on its records' keys and keeps its
answer after (as RecordPlayerEvents does). The state-changing calls log one line each.
"""

from __future__ import annotations

from collections import Counter
from typing import Final

from okey.v1 import lobby_pb2
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.chips import accounts, ledger, wallets
from okey101.lobby.chips.table_chips import record_table_chips
from okey101.lobby.errors import Invalid, Missing
from okey101.lobby.messages import timestamp
from okey101.lobby.records import now_us
from okey101.lobby.rpc import checks
from okey101.lobby.rpc.base import LobbyCalls, log
from okey101.lobby.stores import answers
from okey101.lobby.stores.answers import ANSWERS
from okey101.platform import paging
from okey101.platform.auth import require_claims
from okey101.platform.handlers import Context
from okey101.platform.ids import check_id, check_request_id, shown_value

#: ListWalletEntries' page sizes (default, maximum), from lobby.proto.
ENTRIES_PAGE: Final = (50, 200)
#: The largest grant or take one AdjustChips makes, either way.
ADJUSTMENT_MAX: Final = 10**12
#: An operator's reason, in characters.
REASON_MAX: Final = 500
#: Records one RecordTableChips call takes, and a record's longest key.
RECORDS_MAX: Final = 100
KEY_MAX: Final = ledger.KEY_MAX
#: The kinds a record may be.
RECORD_KINDS: Final = frozenset(
    {
        lobby_pb2.TABLE_CHIPS_EVENT_KIND_SEAT_FREED,
        lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_STARTED,
        lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ENDED,
        lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ABANDONED,
    }
)
#: The ledger's reasons as WalletEntryReason.
ENTRY_REASONS: Final = {
    ledger.GRANT: lobby_pb2.WALLET_ENTRY_REASON_GRANT,
    ledger.DAILY_GRANT: lobby_pb2.WALLET_ENTRY_REASON_DAILY_GRANT,
    ledger.STAKE: lobby_pb2.WALLET_ENTRY_REASON_STAKE,
    ledger.PAYOUT: lobby_pb2.WALLET_ENTRY_REASON_PAYOUT,
    ledger.FEE: lobby_pb2.WALLET_ENTRY_REASON_FEE,
    ledger.REFUND: lobby_pb2.WALLET_ENTRY_REASON_REFUND,
    ledger.PRIZE: lobby_pb2.WALLET_ENTRY_REASON_PRIZE,
    ledger.ENTRY_FEE: lobby_pb2.WALLET_ENTRY_REASON_ENTRY_FEE,
    ledger.ADJUSTMENT: lobby_pb2.WALLET_ENTRY_REASON_ADJUSTMENT,
}


def entry_message(line: ledger.Line) -> lobby_pb2.WalletEntry:
    """A wallet's line as a WalletEntry."""
    entry = lobby_pb2.WalletEntry(
        entry_id=str(line.transaction_id),
        amount=line.amount,
        balance_after=max(line.balance_after, 0),
        reason=ENTRY_REASONS.get(line.reason, lobby_pb2.WALLET_ENTRY_REASON_UNSPECIFIED),
        table_id=line.table_id,
        tournament_id=line.tournament_id,
        note=line.note,
    )
    entry.create_time.CopyFrom(timestamp(line.created_us))
    return entry


class WalletCalls(LobbyCalls):
    """Wallets and chips (module docstring)."""

    async def _owner(self, player_id: str) -> str:
        """Whose wallet: the caller's with a player token; with a service token the player
        the request names, who must exist."""
        claims = require_claims()
        if claims.kind == "player":
            return (await self._caller()).player_id
        player_id = checks.identifier(player_id, "player_id")
        if await self.repository.accounts.player(player_id) is None:
            raise Missing("PLAYER_NOT_FOUND", player_id=player_id)
        return player_id

    async def _touched(self, player_id: str) -> None:
        """Credit ``player_id``'s starting grant if this is their wallet's first touch: a read
        first, a write transaction only when it has not been credited."""
        grant = self.options.chips.starting_grant
        if grant <= 0:
            return
        async with self.database.read() as session:
            if await ledger.exists(session, wallets.start_key(player_id)):
                return

        async def touch(session: AsyncConnection) -> None:
            await wallets.ensure_wallet(session, player_id, starting_grant=grant, now_us=now_us())

        await self.database.transaction(touch)

    async def GetWallet(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.GetWalletRequest, context: Context
    ) -> lobby_pb2.GetWalletResponse:
        async def work() -> lobby_pb2.GetWalletResponse:
            owner = await self._owner(request.player_id)
            await self._touched(owner)
            async with self.database.read() as session:
                found = await wallets.wallet(session, self.options.chips, owner, now_us=now_us())
            answer = lobby_pb2.GetWalletResponse(
                balance=max(found.balance, 0), held=found.held, daily_amount=found.daily_amount
            )
            if found.next_daily_us is not None:
                answer.next_daily_claim_time.CopyFrom(timestamp(found.next_daily_us))
            return answer

        return await self._answer(request, context, work)

    async def ListWalletEntries(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.ListWalletEntriesRequest, context: Context
    ) -> lobby_pb2.ListWalletEntriesResponse:
        async def work() -> lobby_pb2.ListWalletEntriesResponse:
            size = paging.page_size(
                request.page_size, default=ENTRIES_PAGE[0], maximum=ENTRIES_PAGE[1]
            )
            owner = await self._owner(request.player_id)
            bound = paging.fingerprint("wallet", owner)
            after = paging.decode_token(request.page_token, bound, (int,))
            await self._touched(owner)
            async with self.database.read() as session:
                found = await ledger.lines(
                    session,
                    accounts.player(owner),
                    before_entry=None if after is None else int(after[0]),
                    limit=size + 1,
                )
            answer = lobby_pb2.ListWalletEntriesResponse(
                entries=[entry_message(line) for line in found[:size]]
            )
            if len(found) > size:
                answer.next_page_token = paging.encode_token([found[size - 1].entry_id], bound)
            return answer

        return await self._answer(request, context, work)

    async def ClaimDailyChips(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.ClaimDailyChipsRequest, context: Context
    ) -> lobby_pb2.ClaimDailyChipsResponse:
        async def work() -> lobby_pb2.ClaimDailyChipsResponse:
            check_request_id(request.request_id)
            player_id = (await self._caller()).player_id
            call = answers.once(
                "ClaimDailyChips",
                f"player:{player_id}",
                request,
                lobby_pb2.ClaimDailyChipsResponse,
            )
            chips = self.options.chips
            account = accounts.player(player_id)

            async def claim(session: AsyncConnection) -> lobby_pb2.ClaimDailyChipsResponse:
                stored = await ANSWERS.claim(session, call)
                if stored is not None:
                    return stored
                now = now_us()
                await wallets.ensure_wallet(
                    session, player_id, starting_grant=chips.starting_grant, now_us=now
                )
                posted, next_us = await wallets.claim_daily(session, chips, player_id, now_us=now)
                line = await ledger.line_of(session, posted.transaction_id, account)
                if line is None:
                    raise ledger.LedgerError(f"daily grant {posted.key} has no line of {account}")
                answer = lobby_pb2.ClaimDailyChipsResponse(
                    entry=entry_message(line),
                    balance=posted.balances[account],
                    next_daily_claim_time=timestamp(next_us),
                )
                await ANSWERS.remember(session, call, answer)
                return answer

            answer = await self.database.transaction(claim)
            log.info(
                "daily chips claimed",
                player_id=player_id,
                amount=answer.entry.amount,
                balance=answer.balance,
            )
            return answer

        return await self._answer(request, context, work)

    async def AdjustChips(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.AdjustChipsRequest, context: Context
    ) -> lobby_pb2.AdjustChipsResponse:
        async def work() -> lobby_pb2.AdjustChipsResponse:
            check_request_id(request.request_id)
            player_id = checks.identifier(request.player_id, "player_id")
            amount = request.amount
            if amount == 0 or abs(amount) > ADJUSTMENT_MAX:
                raise Invalid("BAD_CHIP_AMOUNT", amount=amount, maximum=ADJUSTMENT_MAX)
            note = request.reason.strip()
            if not note:
                raise Invalid("FIELD_REQUIRED", field="reason")
            checks.length(note, "reason", 1, REASON_MAX)
            if await self.repository.accounts.player(player_id) is None:
                raise Missing("PLAYER_NOT_FOUND", player_id=player_id)
            operator = require_claims().subject
            call = answers.once(
                "AdjustChips", f"service:{operator}", request, lobby_pb2.AdjustChipsResponse
            )
            account = accounts.player(player_id)
            grant = self.options.chips.starting_grant

            async def adjust(session: AsyncConnection) -> lobby_pb2.AdjustChipsResponse:
                stored = await ANSWERS.claim(session, call)
                if stored is not None:
                    return stored
                now = now_us()
                await wallets.ensure_wallet(session, player_id, starting_grant=grant, now_us=now)
                try:
                    posted = await wallets.adjust(
                        session,
                        player_id,
                        amount,
                        key=f"adjust:{player_id}:{request.request_id}",
                        note=note,
                        now_us=now,
                    )
                except ledger.KeyReused:  # the request id of an adjustment long forgotten here
                    raise Invalid("REQUEST_ID_REUSED") from None
                line = await ledger.line_of(session, posted.transaction_id, account)
                if line is None:
                    raise ledger.LedgerError(f"adjustment {posted.key} has no line of {account}")
                answer = lobby_pb2.AdjustChipsResponse(
                    entry=entry_message(line), balance=max(line.balance_after, 0)
                )
                await ANSWERS.remember(session, call, answer)
                return answer

            answer = await self.database.transaction(adjust)
            log.info(
                "chips adjusted",
                player_id=player_id,
                amount=amount,
                balance=answer.balance,
                by=operator,
                reason=note[:200],
            )
            return answer

        return await self._answer(request, context, work)

    async def ListStakeLevels(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.ListStakeLevelsRequest, context: Context
    ) -> lobby_pb2.ListStakeLevelsResponse:
        async def work() -> lobby_pb2.ListStakeLevelsResponse:
            chips = self.options.chips
            return lobby_pb2.ListStakeLevelsResponse(
                stakes=sorted(chips.stakes), fee_percent=chips.fee_percent
            )

        return await self._answer(request, context, work)

    async def RecordTableChips(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.RecordTableChipsRequest, context: Context
    ) -> lobby_pb2.RecordTableChipsResponse:
        async def work() -> lobby_pb2.RecordTableChipsResponse:
            check_request_id(request.request_id)
            if len(request.records) > RECORDS_MAX:
                raise Invalid("BAD_FIELD", field="records", value=f"{len(request.records)} records")
            for index, record in enumerate(request.records):
                checked_record(record, f"records[{index}]")

            async def record_all(session: AsyncConnection) -> list[str]:
                now = now_us()
                return [await record_table_chips(session, r, now) for r in request.records]

            async def recorded() -> lobby_pb2.RecordTableChipsResponse:
                outcomes = await self.database.transaction(record_all)
                log.info(
                    "table chips recorded",
                    records=len(outcomes),
                    outcomes=dict(Counter(outcomes)),
                    tables=sorted({r.table_id for r in request.records})[:10],
                )
                return lobby_pb2.RecordTableChipsResponse()

            # Idempotent on the records' keys (the pots' and holds' states); the request id is
            # bound to its request all the same (another under it is REQUEST_ID_REUSED).
            caller = f"service:{require_claims().subject}"
            call = answers.once(
                "RecordTableChips", caller, request, lobby_pb2.RecordTableChipsResponse
            )
            return await answers.kept_after(self.database, call, recorded)

        return await self._answer(request, context, work)


def checked_record(record: lobby_pb2.TableChipsRecord, where: str) -> None:
    """INVALID_ARGUMENT for a record the lobby cannot apply as it stands."""
    if not record.key:
        raise Invalid("FIELD_REQUIRED", field=f"{where}.key")
    if len(record.key) > KEY_MAX or not record.key.isprintable():
        raise Invalid("BAD_FIELD", field=f"{where}.key", value=shown_value(record.key))
    if record.kind == lobby_pb2.TABLE_CHIPS_EVENT_KIND_UNSPECIFIED:
        raise Invalid("FIELD_REQUIRED", field=f"{where}.kind")
    if record.kind not in RECORD_KINDS:
        raise Invalid("BAD_FIELD", field=f"{where}.kind", value=str(record.kind))
    check_id(record.table_id, f"{where}.table_id")
    if record.fee_percent > 50:
        raise Invalid("BAD_FIELD", field=f"{where}.fee_percent", value=str(record.fee_percent))
    if len(record.seats) > 4:
        raise Invalid("BAD_FIELD", field=f"{where}.seats", value=f"{len(record.seats)} seats")
    seen: set[int] = set()
    for number, seat in enumerate(record.seats):
        at = f"{where}.seats[{number}]"
        if seat.seat > 3:
            raise Invalid("BAD_SEAT", seat=seat.seat)
        if seat.seat in seen:
            raise Invalid("DUPLICATE_SEAT", seat=seat.seat)
        seen.add(seat.seat)
        check_id(seat.player_id, f"{at}.player_id", required=False)
        if len(seat.hold_key) > KEY_MAX or not seat.hold_key.isprintable():
            raise Invalid("BAD_FIELD", field=f"{at}.hold_key", value=shown_value(seat.hold_key))
        if seat.place > 4:
            raise Invalid("BAD_FIELD", field=f"{at}.place", value=str(seat.place))
    kind = record.kind
    if kind == lobby_pb2.TABLE_CHIPS_EVENT_KIND_SEAT_FREED:
        if not any(seat.hold_key for seat in record.seats):
            raise Invalid("FIELD_REQUIRED", field=f"{where}.seats[0].hold_key")
    elif kind in (
        lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_STARTED,
        lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ENDED,
    ):
        if not record.seats:
            raise Invalid("FIELD_REQUIRED", field=f"{where}.seats")
        if kind == lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ENDED and not any(
            seat.place == 1 for seat in record.seats
        ):
            raise Invalid("BAD_FIELD", field=f"{where}.seats", value="no seat placed first")


__all__ = ["ADJUSTMENT_MAX", "ENTRIES_PAGE", "WalletCalls", "checked_record", "entry_message"]
