"""The server's one token bucket: a rate, a capacity, and the caller's clock.

Every allowance refilled at a rate is one of these: a connection's messages (app.py), its bytes, frames and pings
(guard.py), an address's code guesses and challenges, a room's chat (admission.py). Allowances counted over a
fixed span (new claims a day, reviews an hour) are a `Window` of the times they were used. The bucket never reads the
clock itself: each call says what time it is, so the lobby's buckets run on the lobby's time (the time of the
request being handled) and tests move time by passing a later number, without sleeping.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Hashable


class Bucket:
    """`rate` tokens a second, holding at most `capacity` (at least one); full when made."""

    __slots__ = ("capacity", "rate", "stamp", "tokens")

    def __init__(self, rate: float, capacity: float, now: float) -> None:
        self.rate, self.capacity = rate, max(1.0, capacity)
        self.tokens, self.stamp = self.capacity, now

    def refill(self, now: float) -> None:
        """Add the tokens earned since the last call (up to the capacity)."""
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self, now: float, amount: float = 1.0) -> bool:
        """Spend `amount` if the bucket holds it now; False (and nothing spent) if it does not."""
        self.refill(now)
        if self.tokens < amount:
            return False
        self.tokens -= amount
        return True

    def delay(self, now: float) -> float:
        """Seconds from `now` until the bucket holds one token (0 if it holds one now)."""
        self.refill(now)
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate

    def retry_after_ms(self) -> int:
        """Milliseconds from the last call until the bucket holds a token again (what a refusal says to wait)."""
        return max(1, math.ceil((1 - self.tokens) / self.rate * 1000)) if self.rate > 0 else 1000

    def full(self, now: float) -> bool:
        """True if the bucket would be full at `now` (forgetting it then changes nothing)."""
        return self.tokens + (now - self.stamp) * self.rate >= self.capacity


class Window:
    """How many times each key did something in the last `span` seconds: a sliding window of their times, for the
    allowances counted per day or hour ("at most N new claims a day from one address") rather than refilled at a
    rate. Keys with nothing in the window are forgotten, so a key costs memory only while it counts."""

    def __init__(self, span: float) -> None:
        self.span = span
        self.times: dict[Hashable, deque[float]] = {}

    def count(self, key: Hashable, now: float) -> int:
        """How many times `key` did it in the window ending `now`."""
        times = self.times.get(key)
        if times is None:
            return 0
        while times and times[0] <= now - self.span:
            times.popleft()
        if not times:
            del self.times[key]
        return len(times)

    def add(self, key: Hashable, now: float) -> None:
        """`key` did it at `now`."""
        self.times.setdefault(key, deque()).append(now)

    def retry_after_s(self, key: Hashable, now: float) -> float:
        """Seconds from `now` until `key`'s oldest time in the window leaves it (0 if it has none)."""
        times = self.times.get(key)
        return max(0.0, times[0] + self.span - now) if times else 0.0

    def sweep(self, now: float) -> None:
        """Forget every key with nothing left in the window."""
        for key in list(self.times):
            self.count(key, now)
