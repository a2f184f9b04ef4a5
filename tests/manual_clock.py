"""A clock for tests that moves only when the test says: `GameServer(config, clock=ManualClock())`.

Its timers (ticks, flags) run inside `advance`, in time order, each with the clock at its due time; so a test of
a game clock advances time by exactly what it means instead of sleeping and allowing for a loaded machine.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable


class ManualHandle:
    """A timer of the manual clock."""

    __slots__ = ("callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when, self.callback, self.cancelled = when, callback, False

    def cancel(self) -> None:
        """Do not run it."""
        self.cancelled = True


class ManualClock:
    """Time that stands still until `advance`; the server's `Clock` (server/timers.py)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.time = start
        self._due: list[tuple[float, int, ManualHandle]] = []
        self._order = itertools.count()

    def now(self) -> float:
        """The current time."""
        return self.time

    def call_later(self, delay: float, callback: Callable[[], None]) -> ManualHandle:
        """Run `callback` when the clock has been advanced `delay` seconds past now."""
        handle = ManualHandle(self.time + max(0.0, delay), callback)
        heapq.heappush(self._due, (handle.when, next(self._order), handle))
        return handle

    def advance(self, seconds: float) -> None:
        """Move the clock on by `seconds`, running every timer that falls due on the way, in time order."""
        target = self.time + seconds
        while self._due and self._due[0][0] <= target:
            when, _, handle = heapq.heappop(self._due)
            if handle.cancelled:
                continue
            self.time = max(self.time, when)
            handle.callback()
        self.time = target

    def pending(self) -> int:
        """How many timers wait (not cancelled)."""
        return sum(1 for _, _, handle in self._due if not handle.cancelled)
