"""The web client's chips (docs/web.md, Chips) in Debian's chromium against the real stack: the
lobby's balance and a daily claim that adds to it; a stake the balance does not cover refused
with the lobby's sentence (the player made poor with the operator's AdjustChips, a service token
signed with the stack's development key); a staked table's stake and pot, the result's payout
and the balance after it; the wallet's history, paged, in English and Turkish."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from okey.v1 import lobby_pb2, lobby_pb2_grpc

from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.stack import LocalStack, local_stack, start_edge

from support.browser import (
    EDGE_ENV,
    HAND_TIMEOUT_MS,
    STACK_ENV,
    Page,
    launched_browser,
    open_page,
    play_one_move,
    screen_of,
)

pytestmark = pytest.mark.slow

#: The daily grant comes round every 7.2 seconds: a claim is due soon after a guest's first
#: visit whatever the lobby's rule for a new player's first claim.
CHIPS_ENV = {**STACK_ENV, "OKEY_CHIPS_DAILY_HOURS": "0.002"}


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with local_stack(env=CHIPS_ENV) as services:
        start_edge(services, env=EDGE_ENV)
        yield services


@pytest.fixture(scope="module")
def site(stack: LocalStack) -> str:
    return f"http://127.0.0.1:{stack.ports['edge'][0]}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched_browser()


@pytest.fixture(scope="module")
def operator(stack: LocalStack) -> Iterator[lobby_pb2_grpc.LobbyServiceStub]:
    """The lobby as an operator calls it (AdjustChips takes a service token)."""
    token = TokenIssuer(dev_signing_key(stack.var_dir)).issue("service:web-test", "service")
    channel = grpc.insecure_channel(stack.address("lobby"))

    def with_token(call: Any) -> Any:
        return lambda request: call(
            request, metadata=(("authorization", f"Bearer {token}"),), timeout=10
        )

    stub = lobby_pb2_grpc.LobbyServiceStub(channel)
    stub.AdjustChips = with_token(stub.AdjustChips)
    yield stub
    channel.close()


def adjust(operator: Any, player_id: str, amount: int) -> int:
    """Grant (or, negative, take) chips; the balance after."""
    answer = operator.AdjustChips(
        lobby_pb2.AdjustChipsRequest(
            request_id=uuid.uuid4().hex,
            player_id=player_id,
            amount=amount,
            reason="set up by the web client's chips tests",
        )
    )
    return int(answer.balance)


def log_in(browser: Any, site: str, name: str, *, locale: str = "en-GB") -> Page:
    """A new guest in the lobby, its wallet shown."""
    page = open_page(browser, locale=locale)
    page.goto(site + "/")
    label = "Adın" if locale.startswith("tr") else "Your name"
    page.get_by_role("textbox", name=label).fill(name)
    page.locator("form.name button[type=submit]").click()
    page.locator(".wallet .balance[data-balance]").wait_for()
    return page


def balance_of(page: Page) -> int:
    return int(page.locator(".wallet .balance").get_attribute("data-balance") or "x")


def player_id(page: Page) -> str:
    return str(page.evaluate("JSON.parse(localStorage.getItem('okey101.identity')).playerId"))


def stake_options(page: Page, select: str) -> list[int]:
    page.wait_for_function(f"() => document.querySelector('{select}').options.length > 1")
    values = page.locator(f"{select} option").evaluate_all("os => os.map(o => o.value)")
    return [int(value) for value in values]


def test_the_lobby_shows_the_balance_and_a_daily_claim_adds_to_it(site: str, browser: Any) -> None:
    page = log_in(browser, site, "Hazal")
    start = balance_of(page)
    assert start > 0  # the starting grant
    assert f"Balance: {start:,} chips" in page.locator(".wallet .balance").inner_text()
    assert page.locator(".wallet .held").count() == 0  # nothing in play
    claim = page.locator(".wallet button.claim")
    claim.wait_for(timeout=20_000)  # due now, or within the stack's 7.2 s
    daily = int(re.sub(r"\D", "", claim.inner_text()))
    assert daily > 0 and claim.inner_text() == f"Claim your {daily:,} daily chips"
    claim.click()
    page.wait_for_function(
        "n => Number(document.querySelector('.wallet .balance').dataset.balance) === n",
        arg=start + daily,
    )
    assert f"+{daily:,} daily chips: your balance is {start + daily:,}." in (
        page.locator(".wallet-note").inner_text()
    )
    # Claimed: the button gives way to when the next is due (until it comes round again).
    page.wait_for_function(
        "() => !!document.querySelector('.wallet .daily-next, .wallet button.claim')"
    )
    assert not page.locator(".wallet .message.error").inner_text()
    page.context.close()


def test_a_stake_the_balance_does_not_cover_is_refused_with_the_lobbys_sentence(
    site: str, browser: Any, operator: Any
) -> None:
    page = log_in(browser, site, "Ilgın")
    levels = stake_options(page, "#quick-stake")
    assert levels[0] == 0 and page.locator("#quick-stake").input_value() == "0"  # the default
    assert page.locator("#quick-stake option").first.inner_text() == "No stake"
    # The player is made poor: fewer chips than the smallest stake.
    stake = levels[1]
    poor = stake // 2
    assert adjust(operator, player_id(page), poor - balance_of(page)) == poor
    page.reload()
    page.locator(f'.wallet .balance[data-balance="{poor}"]').wait_for()
    # Quick match at that stake: the lobby's refusal, its sentence naming the balance.
    page.locator("#quick-stake").select_option(str(stake))
    fee = page.locator("#quick-stake-fee")
    assert fee.is_visible() and re.search(r"less a \d+% table fee", fee.inner_text())
    page.locator("form.quick button[type=submit]").click()
    alert = page.locator(".lobby > .message.error")
    page.wait_for_function(
        "() => document.querySelector('.lobby > .message.error').textContent.length > 0"
    )
    assert alert.get_attribute("data-reason") == "INSUFFICIENT_CHIPS", alert.inner_text()
    assert str(poor) in alert.inner_text() and str(stake) in alert.inner_text()
    assert "/table/" not in page.url
    # Hosting at a stake above the balance: the same refusal.
    page.locator("#host-stake").select_option(str(stake))
    page.evaluate("document.querySelector('.lobby > .message.error').textContent = ''")
    page.locator("form.host button[type=submit]").click()
    page.wait_for_function(
        "() => document.querySelector('.lobby > .message.error').textContent.length > 0"
    )
    assert alert.get_attribute("data-reason") == "INSUFFICIENT_CHIPS"
    assert "/table/" not in page.url
    page.context.close()


def _host_staked_hand(browser: Any, site: str, name: str) -> tuple[Page, int, int]:
    """A new guest hosts a one-hand table with three bots at the smallest stake of at least
    100 chips its balance covers; the page at the table, the stake and the balance before."""
    page = log_in(browser, site, name)
    before = balance_of(page)
    stake = max(s for s in stake_options(page, "#host-stake") if s <= min(before, 100))
    assert stake > 0
    page.locator("#host-preset").select_option("2")  # boombala: the host picks the hands
    page.locator("#hands").select_option("1")
    page.locator("#bot-level").select_option(label="easy")  # a better chance to win the pot
    page.locator("#host-stake").select_option(str(stake))
    page.locator("form.host button[type=submit]").click()
    page.wait_for_url("**/table/**")
    page.wait_for_selector(".table-screen[data-hand]:not([data-hand=''])")
    return page, stake, before


def test_a_staked_table_shows_its_stake_and_pot_and_the_result_the_payout(
    site: str, browser: Any
) -> None:
    page, stake, before = _host_staked_hand(browser, site, "Jale")
    table_id = screen_of(page)["tableId"]
    # The stake and the pot: four seats' stakes once the match has started (the bots' from
    # the house).
    page.wait_for_function(
        "n => document.querySelector('.table-screen').dataset.pot === String(n)", arg=4 * stake
    )
    line = page.locator(".state-line .stakes")
    assert line.inner_text() == f"Stake {stake:,} · Pot {4 * stake:,}"
    assert line.get_attribute("data-stake") == str(stake)
    # The hand is played to its end; the result says what the pot paid this seat.
    moves = 0
    plays = ["start"]  # the hints' strategy in full: open and lay off too
    while play_one_move(page, plays):
        moves += 1
        assert moves < 200, "the hand did not end"
    page.locator(".result").wait_for(timeout=HAND_TIMEOUT_MS)
    payout = page.locator(".overlay .payout")
    page.wait_for_function(
        "() => { const p = document.querySelector('.overlay .payout');"
        " return p && p.dataset.payout !== 'waiting'; }",
        timeout=HAND_TIMEOUT_MS,
    )
    kind = payout.get_attribute("data-payout")
    winners = page.locator(".result .winner").inner_text()
    won = kind == "paid"
    if won:
        amount = int(payout.get_attribute("data-amount") or "x")
        assert amount > 0
        assert payout.inner_text() == f"Your winnings: +{amount:,} chips (stake {stake:,})."
        assert "Jale" in winners
    else:
        assert kind == "none", payout.inner_text()
        amount = 0
        assert payout.inner_text() == (
            f"No winnings this time: your stake of {stake:,} chips went to the pot."
        )
    print("payout:", kind, amount, "winners:", winners)
    # Back in the lobby: the balance after the match, nothing in play any more.
    page.locator(".result ~ button.primary").click()
    page.locator(".wallet .balance[data-balance]").wait_for()
    page.wait_for_function(
        "n => Number(document.querySelector('.wallet .balance').dataset.balance) === n",
        arg=before - stake + amount,
    )
    assert page.locator(".wallet .held").count() == 0
    # The wallet's history: the stake and the payout, each for the table.
    page.locator(".wallet button.history").click()
    page.wait_for_url("**/wallet")
    page.locator(".entries tbody tr").first.wait_for()
    rows = page.locator(f'.entries tr[data-table-id="{table_id}"]')
    reasons = rows.evaluate_all("rs => rs.map(r => [r.dataset.reason, r.dataset.amount])")
    assert ["STAKE", str(-stake)] in reasons, reasons
    if won:
        assert ["PAYOUT", str(amount)] in reasons, reasons
    page.context.close()


def test_the_wallet_history_lists_the_entries_paged_in_both_languages(
    site: str, browser: Any, operator: Any
) -> None:
    page = log_in(browser, site, "Kader")
    start = balance_of(page)
    who = player_id(page)
    # 21 grants of 1 chip by the operator: with the starting grant, 22 entries (20 a page).
    for _ in range(21):
        adjust(operator, who, 1)
    page.locator(".wallet button.history").click()
    page.wait_for_url("**/wallet")
    rows = page.locator(".entries tbody tr")
    page.wait_for_function("() => document.querySelectorAll('.entries tbody tr').length === 20")
    page.locator(f'.wallet-history .balance[data-balance="{start + 21}"]').wait_for()
    newest = rows.first
    assert newest.get_attribute("data-reason") == "ADJUSTMENT"
    assert newest.locator(".amount").inner_text() == "+1"
    assert newest.locator(".after").inner_text() == f"{start + 21:,}"
    assert "Adjustment by the operator: set up by the web client" in newest.inner_text()
    page.get_by_role("button", name="Older entries").click()
    page.wait_for_function("() => document.querySelectorAll('.entries tbody tr').length === 22")
    assert page.get_by_role("button", name="Older entries").count() == 0  # the last page
    oldest = rows.last
    assert oldest.get_attribute("data-reason") == "GRANT"
    assert oldest.locator(".amount").inner_text() == f"+{start:,}"
    assert "Starting chips" in oldest.inner_text()
    # In Turkish: the same history in Turkish words and numbers.
    page.get_by_role("button", name="Türkçe").click()
    page.get_by_role("heading", name="Çip geçmişi").wait_for()
    page.wait_for_function("() => document.querySelectorAll('.entries tbody tr').length === 20")
    assert "Yönetici düzeltmesi" in rows.first.inner_text()
    page.locator(".wallet-history .balance[data-balance]").wait_for()
    assert page.locator(".wallet-history .balance").inner_text() == (
        f"Bakiye: {start + 21:,} çip".replace(",", ".")
    )
    page.get_by_role("button", name="Daha eski hareketler").click()
    page.wait_for_function("() => document.querySelectorAll('.entries tbody tr').length === 22")
    assert "Başlangıç çipi" in rows.last.inner_text()
    assert rows.last.locator(".amount").inner_text() == f"+{start:,}".replace(",", ".")
    # Back to the lobby, in Turkish.
    page.get_by_role("button", name="Lobiye dön").click()
    page.locator(".wallet .balance[data-balance]").wait_for()
    assert page.locator(".wallet .balance").inner_text().startswith("Bakiye: ")
    page.context.close()
