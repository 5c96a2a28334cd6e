"""The web client's tournament pages (docs/web.md, Tournaments) in Debian's chromium against the
real stack: a tournament created through the API (a service token) is listed under its category
with its players, entry fee and prize pool; a guest opens it, registers on the page and is shown
registered in the standings; once started, the page follows the guest's own stream to round 1
and links the guest's table, which seats them there, and shows the organiser's pause and resume;
at phone size in Turkish nothing is wider than the screen; a full tournament takes the guest as
a substitute, promoted live when a place is freed, then disqualified by the organiser; and, once
the lobby serves CheckInToTournament, a guest checks in during the window of a scheduled
tournament, which then starts by itself."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from okey.v1 import lobby_pb2

from support.browser import Page, open_page

pytestmark = pytest.mark.slow

#: How long a tournament may take to seat its first round, on a loaded machine.
START_TIMEOUT_MS = 60_000


def _category() -> str:
    """A category of this test's own, so the list shows only its tournaments."""
    return f"web-{uuid.uuid4().hex[:10]}"


def _log_in(
    browser: Any, site: str, name: str, *, phone: bool = False, locale: str = "en-GB"
) -> Page:
    page = open_page(browser, phone=phone, locale=locale)
    page.goto(site + "/")
    label = "Adın" if locale.startswith("tr") else "Your name"
    page.get_by_role("textbox", name=label).fill(name)
    page.locator("form.name button[type=submit]").click()
    page.locator(".wallet .balance[data-balance]").wait_for()
    return page


def _my_player_id(page: Page) -> str:
    return str(page.evaluate("JSON.parse(localStorage.getItem('okey101.identity')).playerId"))


def _open_list(page: Page, category: str, tab: str, link: str = "Tournaments") -> None:
    page.get_by_role("link", name=link).click()
    page.locator(".tournaments").wait_for()
    page.locator(f'.tn-tabs [data-tab="{tab}"]').click()
    page.locator("#tn-category").fill(category)
    page.locator(".tn-filter button[type=submit]").click()
    page.wait_for_function(
        "c => location.search.includes(c) && document.querySelector('.tournaments')"
        ".dataset.loaded === 'true'",
        arg=category,
    )


def _until_status(page: Page, status: str) -> None:
    """Until the tournament's page says the guest's own entry is ``status`` (data-my-status)."""
    page.wait_for_function(
        "s => document.querySelector('.tournament-page')?.dataset.myStatus === s", arg=status
    )


def _no_overflow(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, width


def test_a_listed_tournament_is_registered_for_and_followed_to_round_one(
    tournament_site: str, tournament_browser: Any, tournament_desk: Any
) -> None:
    category = _category()
    cup = tournament_desk.create("Friday Web Cup", category)
    tournament_desk.create("Other Cup", _category())  # another category: not listed
    page = _log_in(tournament_browser, tournament_site, "Tuna")
    calls: list[str] = []
    page.on("request", lambda request: calls.append(request.url.rsplit("/", 1)[-1]))
    _open_list(page, category, "registering")
    items = page.locator(".tn-item")
    assert items.count() == 1
    item = items.first
    assert item.get_attribute("data-tournament-id") == cup.tournament_id
    assert item.get_attribute("data-state") == "REGISTERING"
    text = item.inner_text()
    for expected in ("Friday Web Cup", category, "registration open", "Players 0 / 8",
                     "Entry fee 10 chips", "Prize pool 0 chips",
                     "Starts when the organiser starts it"):  # fmt: skip
        assert expected in text, (expected, text)
    # The tab is the state: a registering tournament is not among the running ones.
    page.locator('.tn-tabs [data-tab="running"]').click()
    page.wait_for_function("() => document.querySelector('.tournaments').dataset.loaded === 'true'")
    assert (
        page.locator(".tn-item").count() == 0 and page.locator(".tournaments .empty").is_visible()
    )

    # Its page: what it is, then registering on it.
    page.goto(f"{tournament_site}/tournaments/{cup.tournament_id}")
    page.locator(f'.tournament-page[data-tournament-id="{cup.tournament_id}"]').wait_for()
    _until_status(page, "none")
    assert "One hand a match." in page.locator(".tn-description").inner_text()
    assert "Boombala (fixed hands) · hands a match: 1" in page.locator(".tn-rules").inner_text()
    assert page.locator(".tn-prizes li").all_inner_texts() == [
        "Place 1: 70% of the prize pool",
        "Place 2: 30% of the prize pool",
    ]
    page.get_by_role("button", name="Register").click()
    _until_status(page, "registered")
    me = _my_player_id(page)
    mine = page.locator(f'.standings tr[data-player-id="{me}"]')
    assert mine.get_attribute("class") == "standing mine"
    assert "Tuna" in mine.inner_text()
    assert "Prize pool 10 chips" in page.locator(".tn-facts .tn-money").inner_text()
    assert page.get_by_role("button", name="Unregister").count() == 1
    assert tournament_desk.get(cup.tournament_id).registered_players == 1

    # A second player registers through the API; the tournament starts: the page learns it from
    # the guest's own stream (WatchPlayer) and shows round 1 with the guest's table linked.
    tournament_desk.register(tournament_desk.guest("Umut"), cup.tournament_id)
    tournament_desk.start(cup.tournament_id)
    page.wait_for_function(
        "() => { const p = document.querySelector('.tournament-page');"
        " return p.dataset.state === 'RUNNING' && !!p.querySelector("
        "'.tn-round[data-round=\"1\"] .table-link.mine[data-seat]'); }",
        timeout=START_TIMEOUT_MS,
    )
    assert "WatchPlayer" in calls
    assert page.locator(".tournament-page").get_attribute("data-my-status") == "playing"
    rounds = tournament_desk.get(cup.tournament_id).rounds
    assert len(rounds) == 1 and len(rounds[0].table_ids) == 1
    table_id = rounds[0].table_ids[0]
    link = page.locator('.tn-round[data-round="1"] .table-link.mine')
    assert link.get_attribute("data-table-id") == table_id
    assert link.get_attribute("href") == f"/table/{table_id}"
    assert page.locator(".standings tr.standing").count() == 2
    # The organiser pauses it and resumes it: the guest's stream says so (TOURNAMENT_PAUSED,
    # TOURNAMENT_RESUMED), and the page with it.
    tournament_desk.pause(cup.tournament_id)
    page.locator(".tn-head .tn-paused").wait_for(timeout=15_000)
    assert page.locator(".tournament-page").get_attribute("data-paused") == "true"
    tournament_desk.pause(cup.tournament_id, resume=True)
    page.locator(".tn-note", has_text="The tournament goes on.").wait_for(timeout=15_000)
    # The head is redrawn from the tournament read again after the event.
    page.locator(".tn-head .tn-paused").wait_for(state="detached", timeout=15_000)
    # The guest's table: the table page, at the guest's seat.
    seat = link.get_attribute("data-seat")
    page.locator(".tn-mine .play-seat").click()
    page.wait_for_url(f"**/table/{table_id}")
    page.wait_for_selector(f'.table-screen[data-table-id="{table_id}"][data-seat="{seat}"]')
    page.context.close()


def test_at_phone_size_in_turkish_nothing_overflows(
    tournament_site: str, tournament_browser: Any, tournament_desk: Any
) -> None:
    category = _category()
    long_name = "Çarşamba Akşamı Büyük Okey Turnuvası"
    waiting = tournament_desk.create(long_name, category, max_players=64)
    upcoming = tournament_desk.create("Gelecek Hafta", category, start_in=7200, opens_in=3600)
    assert upcoming.state == lobby_pb2.TOURNAMENT_STATE_UPCOMING
    running = tournament_desk.create("Koşan Kupa", category)
    for name in ("Ayşe", "Barış", "Cansu", "Doğan", "Elif"):
        tournament_desk.register(tournament_desk.guest(name), running.tournament_id)
    tournament_desk.start(running.tournament_id)
    page = _log_in(tournament_browser, tournament_site, "Fatoş", phone=True, locale="tr-TR")
    _open_list(page, category, "registering", link="Turnuvalar")
    assert page.locator(".tn-item").count() == 1
    assert "Katılım ücreti 10 çip" in page.locator(".tn-item").inner_text()
    _no_overflow(page)
    page.locator('.tn-tabs [data-tab="running"]').click()
    page.locator(f'.tn-item[data-tournament-id="{running.tournament_id}"]').wait_for()
    _no_overflow(page)
    page.locator('.tn-tabs [data-tab="upcoming"]').click()
    page.locator(f'.tn-item[data-tournament-id="{upcoming.tournament_id}"]').wait_for()
    assert "yakında" in page.locator(".tn-item").inner_text()

    # An upcoming tournament's page: when registration opens, and nothing to click yet.
    page.goto(f"{tournament_site}/tournaments/{upcoming.tournament_id}")
    _until_status(page, "none")
    assert "Kayıt açılışı:" in page.locator(".tn-mine").inner_text()
    assert page.locator(".tn-countdown").inner_text().startswith("Başlamasına ")
    assert page.locator(".tn-actions button").count() == 0

    # A registering tournament's page: the Turkish button registers.
    page.goto(f"{tournament_site}/tournaments/{waiting.tournament_id}")
    page.get_by_role("button", name="Kayıt ol").click()
    _until_status(page, "registered")
    assert "Kayıtlısın." in page.locator(".tn-my-status").inner_text()
    _no_overflow(page)

    # A running one, watched: its round's tables link to the spectator's page; the standings'
    # table scrolls inside its own box, never the page.
    page.goto(f"{tournament_site}/tournaments/{running.tournament_id}")
    page.wait_for_function(
        "() => !!document.querySelector('.tn-round[data-round=\"1\"] .table-link')",
        timeout=START_TIMEOUT_MS,
    )
    page.locator(".standings tr.standing").first.wait_for()
    assert page.locator(".standings tr.standing").count() == 5
    tables = page.locator('.tn-round[data-round="1"] .table-link')
    assert tables.count() == 2
    assert (tables.first.get_attribute("href") or "").startswith("/watch/")
    assert page.locator(".tournament-page").get_attribute("data-my-status") == "none"
    assert "1. tur" in page.locator(".tn-bracket").inner_text()
    _no_overflow(page)
    page.context.close()


def test_a_substitute_gets_a_freed_place_and_is_then_disqualified(
    tournament_site: str, tournament_browser: Any, tournament_desk: Any
) -> None:
    category = _category()
    cup = tournament_desk.create("Full Cup", category, max_players=4, max_substitutes=2)
    entrants = [tournament_desk.guest(name) for name in ("Irmak", "Jale", "Kaan", "Lale")]
    for entrant in entrants:
        tournament_desk.register(entrant, cup.tournament_id)
    page = _log_in(tournament_browser, tournament_site, "Mert")
    page.goto(f"{tournament_site}/tournaments/{cup.tournament_id}")
    _until_status(page, "none")
    assert "Players 4 / 4" in page.locator(".tn-facts .tn-players").inner_text()
    page.get_by_role("button", name="Register as a substitute").click()
    _until_status(page, "substitute")
    assert "substitute" in page.locator(".tn-my-status").inner_text()
    me = page.locator(f'.standings tr[data-player-id="{_my_player_id(page)}"]')
    assert me.locator(".mark").all_inner_texts() == ["substitute"]
    assert page.locator(".standings tr.standing").count() == 5
    # An entrant leaves: the place goes to the substitute, and the page hears it on the guest's
    # own stream (TOURNAMENT_PROMOTED), not by asking again.
    tournament_desk.unregister(entrants[0], cup.tournament_id)
    page.locator(".tn-note", has_text="A place was freed").wait_for(timeout=15_000)
    _until_status(page, "registered")
    assert me.locator(".mark").count() == 0
    # The organiser disqualifies the guest: told on their stream, marked in the standings.
    assert tournament_desk.disqualify(
        cup.tournament_id, _my_player_id(page), "Kept leaving tables."
    )
    _until_status(page, "disqualified")
    assert "Kept leaving tables." in page.locator(".tn-my-status").inner_text()
    assert me.get_attribute("data-disqualified") == "true"
    assert me.locator(".mark").all_inner_texts() == ["disqualified"]
    assert page.locator(".tn-actions button").count() == 0
    page.context.close()


def test_a_guest_checks_in_during_the_window_and_the_tournament_starts_by_itself(
    tournament_site: str, tournament_browser: Any, tournament_desk: Any
) -> None:
    if not tournament_desk.check_in_exists():
        pytest.skip("the lobby does not serve CheckInToTournament yet (UNIMPLEMENTED)")
    category = _category()
    # It starts by itself in 90 s; check-in is its last minute, so it opens 30 s from now.
    cup = tournament_desk.create("Scheduled Cup", category, start_in=90, check_in_minutes=1)
    assert cup.check_in_minutes == 1 and cup.scheduled_start_time.seconds
    page = _log_in(tournament_browser, tournament_site, "Gizem")
    _open_list(page, category, "registering")
    assert "Check-in" in page.locator(".tn-item .tn-check-in").inner_text()
    page.locator(".tn-item .tn-name").click()
    page.wait_for_url(f"**/tournaments/{cup.tournament_id}")
    page.get_by_role("button", name="Register").click()
    _until_status(page, "registered")
    # Before the window the button is there but disabled, and the countdown runs.
    check_in = page.get_by_role("button", name="Check in")
    assert check_in.is_disabled()
    assert page.locator(".tn-countdown").inner_text().startswith("Starts in ")
    other = tournament_desk.guest("Hakan")
    tournament_desk.register(other, cup.tournament_id)
    page.wait_for_function(
        "() => document.querySelector('.tournament-page').dataset.checkInOpen === 'true'",
        timeout=50_000,
    )
    check_in.click()
    _until_status(page, "checked-in")
    assert page.get_by_role("button", name="Check in").count() == 0
    tournament_desk.check_in(other, cup.tournament_id)
    # At its start it runs without anyone starting it, and the guest's table is linked.
    page.wait_for_function(
        "() => { const p = document.querySelector('.tournament-page');"
        " return p.dataset.state === 'RUNNING' && !!p.querySelector('.table-link.mine'); }",
        timeout=90_000 + START_TIMEOUT_MS,
    )
    page.context.close()
