"""The players' clocks beside the board: every seat's time, counting down locally between the server's states.

The server holds the clocks; each `state.clock` says every seat's time when it was sent and which seat's time
is falling. This widget remembers when that state arrived and takes the time since then off the running seat,
redrawing every 100 ms, so the clock moves smoothly (tenths of a second under 10 s). The running clock is
highlighted, a clock under 10 s turns red, and a seat that lost on time shows "flag".
"""

from __future__ import annotations

import re
import time

from rich.table import Table
from rich.text import Text
from textual.message import Message
from textual.renderables.digits import Digits
from textual.widgets import Static

from gamenight.protocol.vocab import Clock

LOW_MS = 10_000  # under this, a clock turns red and shows tenths
BIG_HEIGHT = 34  # a terminal this tall or taller draws the clocks in large digits
BIG_READING = re.compile(r"[0-9:.]+")  # what large digits draw (not "flag", nor "2d 03h")
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


def clock_readings(clock: Clock, elapsed_ms: float, flagged: int | None) -> list[tuple[str, str]]:
    """Each seat's (reading, style) now: the running one highlighted, low time red, a flag marked."""
    correspondence = clock.days_per_move > 0
    readings = []
    for seat in range(len(clock.remaining_ms)):
        left = clock.left_ms(seat, elapsed_ms)
        style = "bold reverse" if seat == clock.running else ""
        if left < LOW_MS and not correspondence:
            style += " red"
        readings.append(("flag" if seat == flagged else format_ms(left, correspondence), style.strip()))
    return readings


def clock_table(
    clock: Clock, labels: list[str], elapsed_ms: float, flagged: int | None, mine: int | None, big: bool = False
) -> Table:
    """One row per seat: its label and its time now, the running one highlighted, low time red, a flag marked.
    `big`: each label on its own line and the time under it in large digits, to read at a glance."""
    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    table.add_column(justify="right", no_wrap=True)
    for seat, (label, (reading, style)) in enumerate(
        zip(labels, clock_readings(clock, elapsed_ms, flagged), strict=False)
    ):
        name = Text(label + (" (you)" if seat == mine else ""), style="bold" if seat == clock.running else "")
        if big and BIG_READING.fullmatch(reading):
            table.add_row(name, "")
            table.add_row(Text(""), Digits(reading, style=style))
        else:
            table.add_row(name, Text(f" {reading} ", style=style))
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
        self.readings: list[str] = []  # each seat's time as drawn last, as text ("4:59", "flag")
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
        self.readings = [reading for reading, _ in clock_readings(self.clock, elapsed, self.flagged)]
        big = self.screen.size.height >= BIG_HEIGHT  # the terminal, as its screen fills it
        self.shown = clock_table(self.clock, self.labels, elapsed, self.flagged, self.mine, big)
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
