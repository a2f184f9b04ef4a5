"""The fair queue of AI searches for the server's workers (sans-I/O: no futures, no clock).

A search takes a worker if one is free and nobody who may start is waiting; otherwise it waits its turn. When a
search ends, its worker goes to the fairest waiting turn: turns of rooms where people play before all-AI rooms
(exhibitions: nobody's opponent waits for them), then the room using the fewest workers, then the oldest. All-AI
rooms together never hold every worker (with one worker, at most that one). The server (server/app.py) wakes the
turns this queue grants; tests drive it directly.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass


@dataclass(eq=False, slots=True)
class Waiter:
    """One AI turn waiting for a worker."""

    exhibition: bool
    order: int
    room: str
    granted: bool = False  # a worker was taken for it (it should start, or give the worker back)


class AiQueue:
    """Who holds the AI workers, and who waits for one."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self.running = 0  # searches on the workers now
        self.exhibitions = 0  # ... of them for all-AI rooms
        self.by_room: dict[str, int] = {}  # room -> its searches on the workers now
        self.waiting: list[Waiter] = []
        self._order = itertools.count()

    def enter(self, room: str, exhibition: bool) -> Waiter | None:
        """A turn wants a worker: None if it took one now, else its place in the queue (granted later by
        `release`, or given up with `leave`)."""
        if self._may_start(exhibition) and not any(self._may_start(w.exhibition) for w in self.waiting):
            self.take(room, exhibition)  # a free worker nobody waiting may take (all-AI turns wait for their cap)
            return None
        waiter = Waiter(exhibition, next(self._order), room)
        self.waiting.append(waiter)
        return waiter

    def leave(self, waiter: Waiter) -> bool:
        """A waiting turn gives up (its room closed, the server stops): True if a worker had been granted to it
        already, which the caller must `release`."""
        if waiter in self.waiting:
            self.waiting.remove(waiter)
        return waiter.granted

    def release(self, room: str, exhibition: bool) -> list[Waiter]:
        """A search ended: free its worker and grant it (and any other now free) to the fairest waiting turns."""
        self.running -= 1
        self.exhibitions -= exhibition
        if (left := self.by_room.pop(room, 1) - 1) > 0:
            self.by_room[room] = left
        granted: list[Waiter] = []
        while True:
            ready = [w for w in self.waiting if self._may_start(w.exhibition)]
            if not ready:
                return granted
            chosen = min(ready, key=lambda w: (w.exhibition, self.by_room.get(w.room, 0), w.order))
            self.waiting.remove(chosen)
            self.take(chosen.room, chosen.exhibition)
            chosen.granted = True
            granted.append(chosen)

    def background_may_start(self) -> bool:
        """True if background work (a game review's position) may take a worker now: no AI turn waits, and one
        worker stays free for the next turn (with one worker, that one when idle)."""
        return not self.waiting and self.running < max(1, self.workers - 1)

    def _may_start(self, exhibition: bool) -> bool:
        """True if a worker is free for a turn of this kind now."""
        if self.running >= self.workers:
            return False
        return not exhibition or self.exhibitions < max(1, self.workers - 1)

    def take(self, room: str, exhibition: bool) -> None:
        """Count a worker as taken by `room`."""
        self.running += 1
        self.exhibitions += exhibition
        self.by_room[room] = self.by_room.get(room, 0) + 1
