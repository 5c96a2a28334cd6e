"""``PlayerWakes``: a stream here sends the events this process committed from memory only when
memory holds every one after the stream's last, and a notification of an event this process
committed wakes nothing again."""

from __future__ import annotations

import asyncio

from okey.v1 import lobby_pb2

from okey101.lobby.stores.player_events import RECENT_KEPT, PlayerWakes


def _event(sequence: int) -> lobby_pb2.PlayerEvent:
    return lobby_pb2.PlayerEvent(kind=lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED, sequence=sequence)


def test_memory_serves_a_stream_only_an_unbroken_run_after_its_last() -> None:
    wakes = PlayerWakes()
    wakes.open("p")
    wakes.committed([("p", _event(5)), ("p", _event(6)), ("q", _event(1))])
    assert wakes.recent("q", 0) is None  # nobody watches q here: nothing kept
    assert [e.sequence for e in wakes.recent("p", 4) or []] == [5, 6]
    assert [e.sequence for e in wakes.recent("p", 5) or []] == [6]
    assert wakes.recent("p", 3) is None  # 4 was never here: read it
    assert wakes.recent("p", 6) is None  # nothing newer here: another pod's may be newer
    # Writers that committed out of turn: memory starts over at the one handed last.
    wakes.committed([("p", _event(8))])
    wakes.committed([("p", _event(7))])
    assert [e.sequence for e in wakes.recent("p", 6) or []] == [7]
    assert wakes.recent("p", 7) is None  # 8 is no longer in memory: read it
    wakes.committed([("p", _event(sequence)) for sequence in range(8, 8 + RECENT_KEPT + 5)])
    assert wakes.recent("p", 8) is None  # older than what memory keeps
    newest = 8 + RECENT_KEPT + 4
    assert [e.sequence for e in wakes.recent("p", newest - 1) or []] == [newest]
    wakes.done("p")
    assert wakes.recent("p", newest - 1) is None


def test_a_notification_of_an_event_committed_here_wakes_nothing_again() -> None:
    async def scenario() -> None:
        wakes = PlayerWakes()
        wakes.open("p")
        first = wakes.next_wake("p")
        wakes.committed([("p", _event(1))])
        assert first.is_set()
        again = wakes.next_wake("p")
        wakes.notified("p:1")  # this pod's own NOTIFY
        assert not again.is_set()
        wakes.notified("p:2")  # another pod's newer event
        assert again.is_set()
        plain = wakes.next_wake("p")
        wakes.notified("p")  # a writer that names no sequence
        assert plain.is_set()

    asyncio.run(scenario())
