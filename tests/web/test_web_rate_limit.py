"""The web client against a table that lets one move through a second (``OKEY_TABLE_ACT_BURST``
1, ``OKEY_TABLE_ACT_PER_SECOND`` 1): a guest whose draw and discard are clicked at once is
refused RATE_LIMITED on most turns, and the page waits the ``retry_after_ms`` it is told and
sends the same move again (web/src/api.ts ``retrying``), as docs/integration.md asks of every
client. Its own module, with its own stack (the other web tests' lets moves through freely),
started before its browser (a stack cannot start inside Playwright's event loop)."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from okey101.stack import LocalStack, local_stack, start_edge

from support.browser import (
    EDGE_ENV,
    STACK_ENV,
    assert_reveal,
    hand_in_play,
    launched_browser,
    play_one_move,
)

pytestmark = pytest.mark.slow

LIMITS = {**STACK_ENV, "OKEY_TABLE_ACT_BURST": "1", "OKEY_TABLE_ACT_PER_SECOND": "1"}


@pytest.fixture(scope="module")
def limited() -> Iterator[LocalStack]:
    with local_stack(env=LIMITS) as services:
        start_edge(services, env=EDGE_ENV)
        yield services


@pytest.fixture(scope="module")
def browser(limited: LocalStack) -> Iterator[Any]:
    yield from launched_browser()


def _refused_acts(stack: LocalStack) -> float:
    """The table's count of Act calls answered RESOURCE_EXHAUSTED (its metrics)."""
    port = stack.services["table"].metrics_port
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as scrape:
        metrics = scrape.read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("grpc_server_handled_total{")
        and 'grpc_method="Act"' in line
        and 'grpc_code="RESOURCE_EXHAUSTED"' in line
    )


def test_a_player_faster_than_the_rate_limit_waits_it_out(
    limited: LocalStack, browser: Any
) -> None:
    """The hand plays to its reveal with no refusal shown, and the refusals are on the table's
    metrics, so they did happen."""
    # At the guest's draw: its draw and discard are played back to back, whatever the bots do.
    page = hand_in_play(browser, f"http://127.0.0.1:{limited.ports['edge'][0]}", "Acele", draw=True)
    moves = 0
    while play_one_move(page):
        assert not page.locator(".message.error").count()
        moves += 1
        assert moves < 200, "the hand did not end"
    assert_reveal(page)
    page.context.close()
    assert moves >= 2
    assert _refused_acts(limited) >= 1, "the guest was never rate-limited"
