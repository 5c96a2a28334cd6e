"""The web client's flow around the table where time matters (docs/web.md), on a stack whose
turns run out after 3 seconds and whose quick-match queue waits a minute for players before
bots fill a table: the notice when a turn timed out and the table played it, and Cancel on the
quick-match queue with its countdown."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from okey101.stack import LocalStack, local_stack, start_edge

from support.browser import EDGE_ENV, STACK_ENV, host_one_hand, launched_browser, open_page

pytestmark = pytest.mark.slow

#: A turn is 3 seconds; the quick-match queue waits 60 seconds for players.
FLOW_ENV = {
    **STACK_ENV,
    "OKEY_TABLE_DEFAULT_TURN_SECONDS": "3",
    "OKEY_QUICK_MATCH_WAIT_SECONDS": "60",
}


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    services: LocalStack
    with local_stack(env=FLOW_ENV) as services:
        start_edge(services, env=EDGE_ENV)
        yield f"http://127.0.0.1:{services.ports['edge'][0]}"


@pytest.fixture(scope="module")
def browser(site: str) -> Iterator[Any]:
    yield from launched_browser()


def test_a_turn_that_timed_out_is_told(site: str, browser: Any) -> None:
    page = open_page(browser)
    host_one_hand(page, site, "Jale")
    # The guest does nothing: at its first turn the time runs out and the table plays it.
    notice = page.locator('.toast[data-reason="TURN_TIMED_OUT"]')
    notice.wait_for(timeout=30_000)
    assert "Your time ran out" in notice.inner_text()
    # The log says so too, and the seat's ring ran down meanwhile.
    assert page.locator(".log li", has_text="Your time ran out").count() >= 1
    page.context.close()


def test_the_quick_match_queue_counts_down_and_cancels(site: str, browser: Any) -> None:
    page = open_page(browser, phone=True)
    page.goto(site + "/")
    page.get_by_role("textbox", name="Your name").fill("Kaan")
    page.locator("form.name button[type=submit]").click()
    page.get_by_role("button", name="Find a table").click()
    cancel = page.locator("form.quick .queue-cancel")
    cancel.wait_for()
    status = page.locator(".lobby .status")
    page.wait_for_function(
        "() => /in \\d+ s/.test(document.querySelector('.lobby .status').textContent)"
    )
    first = int(re.search(r"in (\d+) s", status.inner_text()).group(1))  # type: ignore[union-attr]
    assert 50 <= first <= 60, first
    page.wait_for_function(
        "n => { const m = document.querySelector('.lobby .status').textContent"
        ".match(/in (\\d+) s/); return m && Number(m[1]) < n; }",
        arg=first,
    )
    cancel.click()
    page.wait_for_function(
        "() => document.querySelector('.lobby .status').textContent.includes('cancelled')"
    )
    assert cancel.is_hidden()
    assert "/table/" not in page.url
    # The queue is left: a new ticket may be asked for at once.
    assert page.get_by_role("button", name="Find a table").is_enabled()
    page.context.close()
