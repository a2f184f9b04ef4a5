"""The players' clocks beside the board: every seat's time, counting down locally between the server's states.

The server holds the clocks; each `state.clock` says every seat's time when it was sent and which seat's time
is falling. This widget remembers when that state arrived and takes the time since then off the running seat,
redrawing every 100 ms, so the clock moves smoothly (tenths of a second under 10 s). The running clock is
highlighted, a clock under 10 s turns red, and a seat that lost on time shows "flag".
"""

from __future__ import annotations

import time

from rich.table import Table
from rich.text import Text
from textual.message import Message
from textual.widgets import Static

from gamenight.protocol.vocab import Clock

LOW_MS = 10_000  # under this, a clock turns red and shows tenths
REDRAW_S = 0.1
DAY_MS = 86_400_000


def format_ms(ms: int, correspondence: bool = False) -> str:
    """A clock's reading: "1:02:03", "4:59", "9.3" (tenths under 10 s), or "2d 03h" for correspondence."""
    ms = max(0, ms)
    if correspondence and ms >= DAY_MS:
        return f"{ms // DAY_MS}d {ms % DAY_MS // 3_600_000:02d}h"
    if ms < LOW_MS:
        return f"{ms // 1000}.{ms % 1000 // 100}"
    seconds = ms // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def clock_table(clock: Clock, labels: list[str], elapsed_ms: float, flagged: int | None, mine: int | None) -> Table:
    """One row per seat: its label and its time now, the running one highlighted, low time red, a flag marked."""
    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    table.add_column(justify="right", no_wrap=True)
    correspondence = clock.days_per_move > 0
    for seat, label in enumerate(labels):
        left = clock.left_ms(seat, elapsed_ms)
        running = seat == clock.running
        style = "bold reverse" if running else ""
        if left < LOW_MS and not correspondence:
            style += " red"
        reading = "flag" if seat == flagged else format_ms(left, correspondence)
        name = label + (" (you)" if seat == mine else "")
        table.add_row(Text(name, style="bold" if running else ""), Text(f" {reading} ", style=style.strip()))
    return table


class ClockView(Static):
    """The clocks of the room shown; hidden for games without a clock."""

    class LowTime(Message):
        """Your own clock, running, went under 10 s (told once per state's clock)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.clock: Clock | None = None
        self.labels: list[str] = []
        self.flagged: int | None = None
        self.mine: int | None = None
        self.received = 0.0
        self.shown: Table | None = None  # the table drawn last
        self.low_told: Clock | None = None  # the clock whose low time for you was told (`LowTime`)

    def on_mount(self) -> None:
        """Redraw every 100 ms while a clock runs."""
        self.display = False
        self.set_interval(REDRAW_S, self._tick)

    def show(self, clock: Clock | None, labels: list[str], flagged: int | None, mine: int | None) -> None:
        """Take the clock of a new state (its arrival starts the local count-down) and redraw."""
        if clock is not self.clock:
            self.received = time.monotonic()
        self.clock, self.labels, self.flagged, self.mine = clock, labels, flagged, mine
        self.display = clock is not None
        self._draw()

    def _tick(self) -> None:
        """The count-down: only a running clock changes."""
        if self.clock is not None and self.clock.running is not None:
            self._draw()

    def _draw(self) -> None:
        """The table as of now."""
        if self.clock is None:
            return
        elapsed = (time.monotonic() - self.received) * 1000
        self.shown = clock_table(self.clock, self.labels, elapsed, self.flagged, self.mine)
        self.update(self.shown)
        if self.low_told is not self.clock and self._low_for_me(self.clock, elapsed):
            self.low_told = self.clock
            self.post_message(self.LowTime())

    def _low_for_me(self, clock: Clock, elapsed_ms: float) -> bool:
        """Your own clock runs and has less than 10 s left (a correspondence clock is never low)."""
        mine = self.mine
        if mine is None or clock.running != mine or clock.days_per_move > 0:
            return False
        return 0 < clock.left_ms(mine, elapsed_ms) < LOW_MS
