"""The game's time: the clock the lobby reads, each live room's ticks and each clocked room's flag.

`GameServer` (server/app.py) takes a `Clock`: `now()` is the time every lobby call is made at (rooms charge their
game clocks with it), and `call_later` runs the timers. `LoopClock` is the real one (the monotonic clock and the
event loop's timers); a test passes a clock of its own that moves only when the test says (tests/manual_clock.py),
so a test of a clock, a flag or a tick clock advances time instead of sleeping it. `Timers` keeps the rooms' timers
on that clock: a live room's ticks come at start + k * tick (a late tick does not push the next ones back), a
clocked room's flag is looked at when its mover's time runs out.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol


class Cancellable(Protocol):
    """A scheduled call (asyncio's `TimerHandle` is one)."""

    def cancel(self) -> None:
        """Do not run it."""


class Clock(Protocol):
    """The server's time and its timers."""

    def now(self) -> float:
        """Seconds on a clock that never goes back."""

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancellable:
        """Run `callback` `delay` seconds from now."""


class LoopClock:
    """The real clock: `time.monotonic` (what asyncio's loop time is on every platform we run on) and the running
    event loop's timers."""

    def now(self) -> float:
        """The monotonic clock."""
        return time.monotonic()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancellable:
        """The running loop's `call_later`."""
        return asyncio.get_running_loop().call_later(delay, callback)


class Timers:
    """Each live room's tick clock and each clocked room's flag timer, on one `Clock`.

    `on_tick(room, now)` carries a tick out and says whether the room's game goes on ticking; `on_flag(room, now)`
    looks at the room's flag; `late(ms)` hears how late each tick fired (the metrics).
    """

    def __init__(
        self,
        clock: Clock,
        on_tick: Callable[[str, float], bool],
        on_flag: Callable[[str, float], None],
        late: Callable[[float], None] = lambda ms: None,
    ) -> None:
        self.clock = clock
        self.on_tick = on_tick
        self.on_flag = on_flag
        self.late = late
        self.ticks: dict[str, Cancellable] = {}  # each ticking room's next tick
        self.flags: dict[str, Cancellable] = {}  # each clocked room's next look at its flag

    def start_ticks(self, room: str, delay_s: float, tick_s: float) -> None:
        """Tick `room` every `tick_s` from `delay_s` from now (replacing its tick clock if it had one)."""
        self.stop_ticks(room)
        self._tick_at(room, self.clock.now() + delay_s, tick_s, 0)

    def _tick_at(self, room: str, start: float, tick_s: float, k: int) -> None:
        """Schedule tick `k` of the clock that started at `start`."""
        due = start + k * tick_s
        self.ticks[room] = self.clock.call_later(
            max(0.0, due - self.clock.now()), lambda: self._tick(room, start, tick_s, k)
        )

    def _tick(self, room: str, start: float, tick_s: float, k: int) -> None:
        """Tick `k` fired: carry it out, then schedule the next one while the game goes on."""
        self.ticks.pop(room, None)
        now = self.clock.now()
        self.late((now - (start + k * tick_s)) * 1000)
        if self.on_tick(room, now) and room not in self.ticks:
            self._tick_at(room, start, tick_s, k + 1)

    def stop_ticks(self, room: str) -> None:
        """Stop a room's tick clock."""
        handle = self.ticks.pop(room, None)
        if handle is not None:
            handle.cancel()

    def arm_flag(self, room: str, delay_s: float) -> None:
        """Look at `room`'s flag `delay_s` from now (replacing the previous look)."""
        self.disarm_flag(room)
        self.flags[room] = self.clock.call_later(delay_s, lambda: self._flag(room))

    def _flag(self, room: str) -> None:
        """A flag timer fired."""
        self.flags.pop(room, None)
        self.on_flag(room, self.clock.now())

    def disarm_flag(self, room: str) -> None:
        """Forget a room's flag timer."""
        handle = self.flags.pop(room, None)
        if handle is not None:
            handle.cancel()

    def forget(self, room: str) -> None:
        """A room left this server (another node owns it now): its timers stop."""
        self.stop_ticks(room)
        self.disarm_flag(room)

    def stop(self) -> None:
        """The server stops: every timer is cancelled."""
        for room in list(self.ticks):
            self.stop_ticks(room)
        for room in list(self.flags):
            self.disarm_flag(room)
