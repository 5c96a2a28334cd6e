"""The web client in Debian's chromium under Playwright, for the browser tests
(``tests/web/``): the stack's and the edge's settings, the browser, and a guest's moves on the
page (the hint-driven strategy: draw; discard the cheapest tile the hints list).

Importing this module skips the test module that imports it, saying why, where there is no
chromium, no built page (``make web``) or no Playwright.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from okey101.stack import FAST

ROOT = Path(__file__).resolve().parents[2]
WEB_DIST = ROOT / "web" / "dist"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
#: How long a whole hand may take in the browser (the bots move at once: FAST).
HAND_TIMEOUT_MS = 120_000

if not Path(CHROMIUM).exists() or not (WEB_DIST / "index.html").exists():
    pytest.skip(
        f"the web tests need chromium ({CHROMIUM}: apt-get install chromium) and the built page "
        f"({WEB_DIST}: make web)",
        allow_module_level=True,
    )

playwright_sync = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[test]'")
Page = Any


#: The edge serves the built page; it drains at once when a test stops it.
EDGE_ENV = {"OKEY_WEB_DIR": str(WEB_DIST), "OKEY_DRAIN_SECONDS": "0", "OKEY_GRACE_SECONDS": "1"}


#: The bots move at once (FAST); a player's turn is long, so that a loaded machine (the tests
#: run beside others on 2 cores) never times the browser's turn out under it.
STACK_ENV = {**FAST, "OKEY_TABLE_DEFAULT_TURN_SECONDS": "300"}


def launched_browser() -> Iterator[Any]:
    """Debian's chromium under Playwright, for one module's tests (started after the module's
    stack: a stack cannot start inside Playwright's event loop)."""
    with playwright_sync.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        yield chromium
        chromium.close()


def open_page(browser: Any, *, phone: bool = False, locale: str = "en-GB") -> Page:
    viewport = {"width": 375, "height": 812} if phone else {"width": 1280, "height": 900}
    context = browser.new_context(
        viewport=viewport, locale=locale, is_mobile=phone, has_touch=phone
    )
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.on("pageerror", lambda error: print(f"page error: {error}"))
    page.on("console", lambda message: print(f"console: {message.text}"))
    return page


def host_one_hand(page: Page, site: str, name: str, public: bool = False, hands: int = 1) -> None:
    """Log in as a new guest and host a boombala table of ``hands`` hands (private unless said)
    with three bots."""
    page.goto(site + "/")
    label = "Adın" if page_lang(page) == "tr" else "Your name"
    page.get_by_role("textbox", name=label).fill(name)
    page.locator("form.name button[type=submit]").click()
    page.locator("form.host").wait_for()
    page.locator("#host-preset").select_option("2")  # RULE_PRESET_BOOMBALA
    page.locator("#hands").select_option(str(hands))
    if public:
        page.locator("#public").check()
    page.locator("form.host button[type=submit]").click()
    page.wait_for_url("**/table/**")
    page.wait_for_selector(".table-screen[data-hand]:not([data-hand=''])")


def hand_in_play(
    browser: Any,
    site: str,
    name: str,
    *,
    moves: int = 0,
    draw: bool = False,
    phone: bool = False,
    locale: str = "en-GB",
) -> Page:
    """A new page with a one-hand table still in play, at its seat's move, after ``moves`` of
    its seat's moves (and, with ``draw``, at its seat's draw). A bot goes out in the first two
    rounds in about 1 deal of 100 (normal bots, oyna: 26 of 2,000 hands), even before the seat's
    first move (a CI run saw it on 2026-12-06); then the hand is over before the test's point,
    and a new guest hosts another table."""
    for _attempt in range(4):
        page = open_page(browser, phone=phone, locale=locale)
        host_one_hand(page, site, name)
        in_play = wait_my_move_or_reveal(page) != "reveal"
        in_play = in_play and all(play_one_move(page) for _ in range(moves))
        if in_play and draw:
            while (phase := wait_my_move_or_reveal(page)) not in ("DRAW", "reveal"):
                play_one_move(page)
            in_play = phase == "DRAW"
        if in_play:
            return page
        page.context.close()
    raise AssertionError("four tables in a row ended before the test's point: not chance")


def page_lang(page: Page) -> str:
    return str(page.evaluate("document.documentElement.lang"))


def screen_of(page: Page) -> dict[str, str]:
    return dict(page.eval_on_selector(".table-screen", "e => ({...e.dataset})"))


def wait_my_move_or_reveal(page: Page) -> str:
    """Until it is this seat's move (view and hints up to date) or the hand is revealed."""
    page.wait_for_function(
        """() => {
            const s = document.querySelector('.table-screen');
            if (!s) return false;
            if (document.querySelector('.reveal')) return true;
            return s.dataset.myTurn === 'true' && s.dataset.ready === 'true';
        }""",
        timeout=HAND_TIMEOUT_MS,
    )
    return "reveal" if page.locator(".reveal").count() else screen_of(page)["phase"]


def play_one_move(page: Page, plays: list[str] | None = None) -> bool:
    """One move of the hint-driven strategy (a free discard outside the hints' best opening);
    False once the hand is revealed. With ``plays``
    (a list the moves beyond draw and discard are noted in) it also opens when the hints say it
    can, and then lays off what they say fits."""
    phase = wait_my_move_or_reveal(page)
    if phase == "reveal":
        return False
    screen = screen_of(page)
    version = screen["stateVersion"]
    if phase == "DRAW":
        page.locator('[data-move="draw"]').click()
    elif plays and screen["canOpen"] == "true":
        # The hints say an opening is possible: select the best one and open with it.
        page.get_by_role("button", name="Best opening").click()
        page.locator('[data-move="open"]').click()
        plays.append("open")
    elif plays and int(screen["layOffs"]) and "open" in plays:
        # A tile the hints say a meld on the table takes: lay it off (choosing the first fit).
        page.locator(".rack [data-fits]").first.click()
        page.locator('[data-move="lay-off"]').click()
        if page.locator(".choices .choice").count() > 1:
            page.locator(".choices .choice").first.click()
        plays.append("lay off")
    else:
        costly = page.locator('.rack [data-discard-cost]:not([data-discard-cost="0"])')
        if plays and "asked" not in plays and costly.count():
            # A +101 discard asks first; "Keep it" keeps the tile and the turn.
            costly.first.click()
            page.locator('[data-move="discard"]').click()
            page.get_by_role("alertdialog").wait_for()
            # The question takes the focus on its safe answer.
            # (Asked of the document: the screen may be redrawn between a look and the next.)
            focused = page.evaluate("document.activeElement.textContent")
            assert focused == "Keep it", focused
            page.get_by_role("button", name="Keep it").click()
            assert screen_of(page)["stateVersion"] == version
            page.keyboard.press("Escape")
            plays.append("asked")
        free = page.locator('.rack [data-discard-cost="0"]:not([data-in-best])')
        if not free.count():
            free = page.locator('.rack [data-discard-cost="0"]')
        tile = free.last if free.count() else page.locator(".rack [data-discard-cost]").first
        page.keyboard.press("Escape")  # nothing else selected
        tile.click()
        page.locator('[data-move="discard"]').click()
        if page.locator(".overlay.confirm").count():
            page.locator(".overlay.confirm .danger").click()
    page.wait_for_function(
        "v => { const s = document.querySelector('.table-screen');"
        " return !!document.querySelector('.reveal') || (s && s.dataset.stateVersion !== v); }",
        arg=version,
        timeout=HAND_TIMEOUT_MS,
    )
    return True


def assert_reveal(page: Page) -> None:
    reveal = page.locator(".reveal")
    reveal.wait_for()
    scores = reveal.locator(".score")
    assert scores.count() == 4
    for index in range(4):
        score = scores.nth(index)
        points = int(score.get_attribute("data-points") or "x")
        assert f"= {points}" in score.locator(".lines").inner_text()
    # The one-hand match ends with it: the result and its score sheet.
    page.locator(".result").wait_for(timeout=HAND_TIMEOUT_MS)
    assert page.locator(".result .sheet").count() == 1
