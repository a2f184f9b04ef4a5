"""The server's one token bucket: a rate, a capacity, and the caller's clock.

Every allowance of the server is one of these: a connection's messages (app.py), its bytes, frames and pings
(guard.py), an address's code guesses and challenges, a room's chat (admission.py). The bucket never reads the
clock itself: each call says what time it is, so the lobby's buckets run on the lobby's time (the time of the
request being handled) and tests move time by passing a later number, without sleeping.
"""

from __future__ import annotations

import math


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
