"""A turn-based game's clocks: each seat's time, the lag refunds, the flag deadline and the AI's share of time.

Sans-I/O like the room: every method takes the current (monotonic) time in seconds, so tests drive it with
made-up times. The turn driver owns one `GameClock` per game; the network layer only arms a timer at the
deadline the clock names and measures each connection's ping round trips.

Time runs for the seat to move from the moment the state giving it the move is decided until its move is
applied; then the increment is added (a correspondence clock instead resets the mover to `days_per_move`
days). Passes cost nothing: a seat that has no move never gets the move, so its clock never runs.

Lag compensation follows lichess (scalachess `Clock.scala` and `LagTracker.scala`):

- each connection's lag is estimated from websocket ping round trips with a decaying mean
  (`LAG_DECAY`, as scalachess's lag estimator) — the round trip, since a move's time includes both the state
  travelling to the player and the move travelling back;
- on each move, the time charged is `elapsed - refund` with `refund = min(lag estimate, quota, elapsed)`;
- the quota starts at `3 * gain`, grows by `gain` per move and is capped at `7 * gain`, where
  `gain = min(1 s, (initial + 40 * increment) / 2.5 centiseconds per second + 150 ms)`
  (scalachess `LagTracker.init`: `estimateTotalSeconds * 2 / 5 + 15` centiseconds, at most 100), so faking lag
  buys at most `gain` per move once the starting quota is spent;
- the flag falls when the mover's time minus the refund its move would still get reaches zero
  (`Clock.outOfTime(withGrace)`), the grace being capped at `MAX_GRACE_MS`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gamenight.protocol.vocab import Clock

DAY_MS = 86_400_000
MORETIME_MS = 15_000  # lichess's "moretime"
LAG_DECAY = 0.85  # weight of the old estimate on each new ping sample (scalachess DecayingStats decay)
QUOTA_BASE_MS = 150  # scalachess: 15 centiseconds
QUOTA_GAIN_CAP_MS = 1000  # scalachess: at most 100 centiseconds per move
QUOTA_START_MOVES = 3  # the quota starts at 3 gains...
QUOTA_MAX_MOVES = 7  # ...and is capped at 7 gains
MAX_GRACE_MS = 1000  # the most a flag waits for a move that may be on its way (scalachess Clock.maxGrace)

# AI time management (docs/ai.md): budget = min(ai_ms, remaining / (moves_left + AI_RESERVE_MOVES)
#   + increment * AI_INCREMENT_SHARE - pace - AI_OVERHEAD_MS), at least AI_MIN_BUDGET_MS.
AI_RESERVE_MOVES = 3
AI_INCREMENT_SHARE = 0.75
AI_OVERHEAD_MS = 80  # the worker round trip and the search's stop latency
AI_MIN_BUDGET_MS = 10


def quota_gain_ms(initial_ms: int, increment_ms: int) -> int:
    """The lag quota gained per move for a clock of `initial_ms` + `increment_ms` (scalachess LagTracker.init)."""
    estimate_s = (initial_ms + 40 * increment_ms) / 1000
    return int(min(QUOTA_GAIN_CAP_MS, estimate_s * 4 + QUOTA_BASE_MS))


@dataclass(slots=True)
class LagTracker:
    """One seat's lag: the estimate from pings and the quota that bounds the refunds."""

    gain_ms: int
    quota_ms: int
    max_ms: int
    estimate_ms: float = 0.0
    samples: int = 0

    @classmethod
    def for_clock(cls, initial_ms: int, increment_ms: int) -> LagTracker:
        """A fresh tracker for a clock of `initial_ms` + `increment_ms`."""
        gain = quota_gain_ms(initial_ms, increment_ms)
        return cls(gain, QUOTA_START_MOVES * gain, QUOTA_MAX_MOVES * gain)

    def record(self, rtt_ms: float) -> None:
        """A ping round trip measured on the seat's connection."""
        rtt_ms = max(0.0, rtt_ms)
        self.estimate_ms = rtt_ms if self.samples == 0 else LAG_DECAY * self.estimate_ms + (1 - LAG_DECAY) * rtt_ms
        self.samples += 1

    def refund(self, elapsed_ms: int) -> int:
        """What the next move would get back: the lag estimate, within the quota and the time it took."""
        return max(0, min(int(self.estimate_ms), self.quota_ms, elapsed_ms))

    def grace(self) -> int:
        """How long past zero the flag waits for a move that may be on its way."""
        return max(0, min(int(self.estimate_ms), self.quota_ms, MAX_GRACE_MS))

    def on_move(self, refund_ms: int) -> None:
        """A move was refunded `refund_ms`: spend it from the quota, then add this move's gain (capped)."""
        self.quota_ms = min(self.max_ms, self.quota_ms + self.gain_ms - refund_ms)


@dataclass(frozen=True, slots=True)
class Charge:
    """What a move costs its seat, measured before the move is applied (so a refused move changes nothing)."""

    seat: int
    spent_ms: int
    refund_ms: int
    flagged: bool


@dataclass(slots=True)
class GameClock:
    """The clocks of one game: the time left per seat at the start of the current turn, and who is running."""

    initial_ms: int
    increment_ms: int
    days_per_move: int
    remaining: list[int]
    lag: list[LagTracker]
    running: int | None = None
    since: float = 0.0  # when the running seat's time started (monotonic seconds)
    history: list[list[int]] = field(default_factory=list)  # remaining at the start of each ply, for takebacks
    spent: list[int] = field(default_factory=list)  # each applied move's charged time, in ms

    @classmethod
    def from_options(cls, room_options: Mapping[str, Any], seats: int) -> GameClock | None:
        """The clock the room's options ask for, or None for a game without one."""
        days = int(room_options.get("days_per_move") or 0)
        initial = days * DAY_MS if days else int(room_options.get("clock_s") or 0) * 1000
        if initial <= 0:
            return None
        increment = 0 if days else int(room_options.get("increment_s") or 0) * 1000
        lag = [LagTracker.for_clock(initial, increment) for _ in range(seats)]
        return cls(initial, increment, days, [initial] * seats, lag, history=[[initial] * seats])

    @property
    def correspondence(self) -> bool:
        """True for a days-per-move clock."""
        return self.days_per_move > 0

    # -- running ---------------------------------------------------------------------------------------
    def start(self, seat: int | None, now: float) -> None:
        """Give `seat` the move now (None: nobody runs, the game is over)."""
        self.running, self.since = seat, now

    def left_ms(self, seat: int, now: float) -> int:
        """`seat`'s time left at `now` (running down only for the seat to move)."""
        if seat != self.running:
            return self.remaining[seat]
        return self.remaining[seat] - int((now - self.since) * 1000)

    def measure(self, seat: int, now: float) -> Charge:
        """What a move by `seat` arriving at `now` costs, and whether it came too late (pure)."""
        elapsed = max(0, int((now - self.since) * 1000)) if seat == self.running else 0
        refund = self.lag[seat].refund(elapsed)
        spent = elapsed - refund
        return Charge(seat, spent, refund, flagged=spent >= self.remaining[seat])

    def settle(self, charge: Charge) -> None:
        """Book a measured move: take its time, spend its refund from the quota, add the increment."""
        seat = charge.seat
        if self.correspondence:
            self.remaining[seat] = self.initial_ms
        else:
            self.remaining[seat] = self.remaining[seat] - charge.spent_ms + self.increment_ms
        self.lag[seat].on_move(charge.refund_ms)
        self.spent.append(charge.spent_ms)
        self.running = None

    def pass_turn(self, seat: int | None, now: float) -> None:
        """After a settled move: the next seat runs, and the position's times join the history."""
        self.start(seat, now)
        self.history.append(list(self.remaining))

    def deadline_ms(self, now: float) -> int | None:
        """Milliseconds from `now` until the running seat's flag falls (its grace included), or None."""
        if self.running is None:
            return None
        return self.left_ms(self.running, now) + self.lag[self.running].grace()

    def out_of_time(self, now: float) -> bool:
        """True when the running seat's flag has fallen."""
        deadline = self.deadline_ms(now)
        return deadline is not None and deadline <= 0

    def add_time(self, seat: int, ms: int) -> None:
        """Give `seat` `ms` more (moretime); the current position's stored times change with it."""
        self.remaining[seat] += ms
        self.history[-1][seat] += ms

    def undo(self, plies: int, seat: int, now: float) -> None:
        """Take back the last `plies` moves: every seat's time is what it was then, and `seat` runs again."""
        keep = len(self.history) - plies
        del self.history[keep:]
        del self.spent[len(self.spent) - plies :]
        self.remaining = list(self.history[-1])
        self.start(seat, now)

    # -- what members see -------------------------------------------------------------------------------
    def payload(self, now: float) -> Clock:
        """The `state.clock` map at `now`."""
        remaining = tuple(max(0, self.left_ms(seat, now)) for seat in range(len(self.remaining)))
        return Clock(remaining, self.running, self.increment_ms, self.days_per_move, int(now * 1000))

    # -- restart ------------------------------------------------------------------------------------------
    def restored(self, history: Sequence[Sequence[int]], spent: Sequence[int], plies: int) -> None:
        """Take back the stored times of a game replayed to ply `plies` after a restart.

        The downtime is charged to nobody: the mover's time is what it was when it got the move. Positions
        stored without times (none, before clocks were stored) keep the times of the position before.
        """
        self.history = [list(times) for times in history[: plies + 1]] or [list(self.remaining)]
        while len(self.history) < plies + 1:
            self.history.append(list(self.history[-1]))
        self.remaining = list(self.history[-1])
        self.spent = list(spent)

    # -- the AI -------------------------------------------------------------------------------------------------
    def ai_budget_ms(self, seat: int, now: float, moves_left: int, ai_ms: int, pace_ms: int) -> int:
        """How long an AI may think about this move (the formula is in the module's constants and docs/ai.md)."""
        left = max(0, self.left_ms(seat, now))
        share = left / (max(1, moves_left) + AI_RESERVE_MOVES) + self.increment_ms * AI_INCREMENT_SHARE
        if self.correspondence:
            share = left / AI_RESERVE_MOVES
        return max(AI_MIN_BUDGET_MS, min(ai_ms, math.floor(share - pace_ms - AI_OVERHEAD_MS)))

    def ai_pace_ms(self, seat: int, now: float, moves_left: int, pace_ms: int) -> int:
        """The watchable pace, but never more than half an AI's share of its time."""
        left = max(0, self.left_ms(seat, now))
        return min(pace_ms, int(left / (max(1, moves_left) + AI_RESERVE_MOVES) / 2))
