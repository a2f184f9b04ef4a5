"""The server's timers on a manual clock (server/timers.py): tick clocks that do not drift, flags that fall when
due, and nothing left running after a room leaves or the server stops. No event loop, no sleep."""

from __future__ import annotations

from gamenight.server.timers import Timers
from tests.manual_clock import ManualClock


def _timers(clock: ManualClock, ticking: int = 1_000) -> tuple[Timers, list[tuple[str, float]], list[float]]:
    """Timers recording each tick and flag (room, time); a room stops ticking after `ticking` ticks."""
    seen: list[tuple[str, float]] = []
    late: list[float] = []

    def tick(room: str, now: float) -> bool:
        seen.append((room, now))
        return sum(1 for r, _ in seen if r == room) < ticking

    timers = Timers(clock, tick, lambda room, now: seen.append((f"flag:{room}", now)), late.append)
    return timers, seen, late


def test_ticks_come_at_start_plus_k_ticks_even_after_a_slow_tick():
    """A live room ticks at start + k * tick: a tick that takes long (here 50 ms of a 100 ms tick) does not push
    the later ones back, as scheduling each tick a tick after the previous one would."""
    clock = ManualClock(start=0.0)
    seen: list[float] = []

    def tick(room: str, now: float) -> bool:
        seen.append(now)
        if len(seen) == 2:
            clock.time += 0.05  # this tick's work took 50 ms
        return True

    timers = Timers(clock, tick, lambda room, now: None)
    timers.start_ticks("T", delay_s=1.0, tick_s=0.1)
    clock.advance(1.0)
    assert seen == [1.0]
    clock.advance(0.3)
    assert [round(t, 3) for t in seen] == [1.0, 1.1, 1.2, 1.3]


def test_a_room_stops_ticking_when_its_game_ends_or_it_leaves():
    """Ticks stop when the tick handler says the game is over, and when the room is forgotten."""
    clock = ManualClock(start=0.0)
    timers, seen, _ = _timers(clock, ticking=3)
    timers.start_ticks("A", delay_s=0.0, tick_s=1.0)
    timers.start_ticks("B", delay_s=0.0, tick_s=1.0)
    clock.advance(1.0)
    timers.forget("B")
    clock.advance(10.0)
    assert [r for r, _ in seen].count("A") == 3 and [r for r, _ in seen].count("B") == 2
    assert clock.pending() == 0 and not timers.ticks


def test_a_flag_falls_when_due_and_a_rearmed_flag_replaces_the_old_one():
    """A flag is looked at exactly at its time; arming it again (a move was made) drops the earlier look."""
    clock = ManualClock(start=0.0)
    timers, seen, _ = _timers(clock)
    timers.arm_flag("R", 2.0)
    clock.advance(1.5)
    timers.arm_flag("R", 2.0)  # the mover moved: the next look is 2 s from now
    clock.advance(1.999)
    assert seen == []
    clock.advance(0.001)
    assert seen == [("flag:R", 3.5)] and not timers.flags


def test_stop_cancels_every_timer():
    """When the server stops no tick or flag runs any more."""
    clock = ManualClock(start=0.0)
    timers, seen, _ = _timers(clock)
    timers.start_ticks("T", delay_s=0.5, tick_s=0.5)
    timers.arm_flag("R", 1.0)
    timers.stop()
    clock.advance(5.0)
    assert seen == [] and clock.pending() == 0
