"""The Tron arena: walls, each rider's trail and head in its colour, steered with the arrows or WASD.

A full `state` builds a local grid; each `tick` then only adds the riders' new head squares, and only
the lines of the squares that changed are redrawn (Line API + region refresh), which keeps a 50x50
arena smooth at the tick rate. A square is two columns wide when the arena fits that way, else two
squares share one character cell (upper and lower half blocks); an arena larger than the widget
scrolls to follow your rider.

A review (client/screens/review.py) shades the empty squares by territory: the rider that reaches each first
(`TronGrid.territory`, breadth-first from every living head a layer at a time; a square two reach at once is
nobody's), in a dim tone of its colour.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from gamenight.client.bindings import refresh_keys
from gamenight.client.messages import MoveChosen
from gamenight.client.widgets.board import BoardSpec, Position, in_play
from gamenight.protocol.vocab import RoomStatus

EMPTY, WALL = 0, 255
NORTH, EAST, SOUTH, WEST = 1, 2, 3, 4
LETTERS = {NORTH: "N", EAST: "E", SOUTH: "S", WEST: "W"}
NAMES = {NORTH: "north", EAST: "east", SOUTH: "south", WEST: "west"}
STEPS = {NORTH: (0, -1), EAST: (1, 0), SOUTH: (0, 1), WEST: (-1, 0)}
OPPOSITE = {NORTH: SOUTH, SOUTH: NORTH, EAST: WEST, WEST: EAST}
HEAD_GLYPHS = {NORTH: "▲▲", EAST: "▶▶", SOUTH: "▼▼", WEST: "◀◀", 0: "◆◆"}
CRASHED_GLYPH = "✖✖"
MAX_RIDERS = 4
TIED = 255  # a square of `TronGrid.territory` that two riders reach at once: nobody's
FOLLOW_MARGIN = 4  # squares kept between your rider and the edge of the view when the arena scrolls


class TronGrid:
    """The arena as the client keeps it: cell values, heads, who is riding, each rider's direction."""

    def __init__(
        self,
        width: int,
        height: int,
        cells: bytearray,
        heads: list[tuple[int, int]],
        alive: list[bool],
        dirs: list[int],
        tick: int,
    ) -> None:
        self.width = width
        self.height = height
        self.cells = cells
        self.heads = heads
        self.alive = alive
        self.dirs = dirs
        self.tick = tick

    @classmethod
    def from_view(cls, view: Mapping[str, Any]) -> TronGrid:
        """Build from a Tron `state.view` (rows of " ", "#", and "1"-"4" for trails)."""
        rows = [str(r) for r in view.get("board", [])]
        height = int(view.get("height", len(rows)))
        width = int(view.get("width", max((len(r) for r in rows), default=0)))
        cells = bytearray(width * height)
        for y, row in enumerate(rows[:height]):
            for x, char in enumerate(row[:width]):
                cells[y * width + x] = int(char) if char in "1234" else WALL if char == "#" else EMPTY
        heads = [(int(h[0]), int(h[1])) for h in view.get("heads", [])]
        alive = [bool(a) for a in view.get("alive", [True] * len(heads))]
        dirs = [int(d or 0) for d in view.get("dirs", [0] * len(heads))]
        return cls(width, height, cells, heads, alive, dirs, int(view.get("tick", 0)))

    def cell(self, x: int, y: int) -> int:
        """The value of a square (0 empty, 255 wall, k + 1 the trail of seat k)."""
        return self.cells[y * self.width + x]

    def territory(self) -> tuple[bytearray, list[int]]:
        """Who reaches each square first: per square 0 (not open, or out of every rider's reach), k + 1 (seat k
        gets there strictly first) or TIED; and each seat's count of squares. Every living rider's front spreads
        one square a layer, all at once; a square reached by two in the same layer is TIED and spreads no further
        (the server's review counts it the same way: server/ai/analysis.py `territory`)."""
        width, height, cells = self.width, self.height, self.cells
        owner = bytearray(width * height)
        counts = [0] * len(self.heads)
        fronts = {
            seat: [y * width + x]
            for seat, ((x, y), alive) in enumerate(zip(self.heads, self.alive, strict=False))
            if alive and 0 <= x < width and 0 <= y < height
        }
        while fronts:
            claims: dict[int, int] = {}  # square -> the seat reaching it in this layer, or TIED
            for seat, front in fronts.items():
                for square in front:
                    for near in _neighbours(square, width, height):
                        if cells[near] == EMPTY and not owner[near]:
                            claims[near] = seat if claims.get(near, seat) == seat else TIED
            fronts = {}
            for square, seat in claims.items():
                owner[square] = TIED if seat == TIED else seat + 1
                if seat != TIED:
                    counts[seat] += 1
                    fronts.setdefault(seat, []).append(square)
        return owner, counts

    def to_view(self) -> dict[str, Any]:
        """The grid as a full Tron `state.view` again (what a replay hands the arena for each step)."""
        chars = {EMPTY: " ", WALL: "#", **{k: str(k) for k in range(1, MAX_RIDERS + 1)}}
        board = [
            "".join(chars.get(v, " ") for v in self.cells[y * self.width : (y + 1) * self.width])
            for y in range(self.height)
        ]
        return {
            "width": self.width,
            "height": self.height,
            "board": board,
            "heads": [list(h) for h in self.heads],
            "alive": list(self.alive),
            "dirs": list(self.dirs),
            "tick": self.tick,
            "scores": None,
        }

    def apply(self, delta: Mapping[str, Any]) -> set[tuple[int, int]]:
        """Add a tick's new heads to the trails; returns the squares whose drawing changed."""
        changed: set[tuple[int, int]] = set()
        heads = [(int(h[0]), int(h[1])) for h in delta.get("heads", [])]
        for seat, (new, old) in enumerate(zip(heads, self.heads, strict=False)):
            if new != old:
                x, y = new
                if 0 <= x < self.width and 0 <= y < self.height:
                    self.cells[y * self.width + x] = seat + 1
                self.dirs[seat] = _direction(old, new) or self.dirs[seat]
                changed.update((old, new))
        alive = [bool(a) for a in delta.get("alive", self.alive)]
        changed.update(self.heads[s] for s, (was, now) in enumerate(zip(self.alive, alive, strict=False)) if was != now)
        self.heads, self.alive = heads or self.heads, alive
        self.tick = int(delta.get("tick", self.tick + 1))
        return changed


def _neighbours(square: int, width: int, height: int) -> list[int]:
    """The squares next to `square` (row-major index) on the map."""
    x, y = square % width, square // width
    near = []
    if y:
        near.append(square - width)
    if x + 1 < width:
        near.append(square + 1)
    if y + 1 < height:
        near.append(square + width)
    if x:
        near.append(square - 1)
    return near


def _direction(old: tuple[int, int], new: tuple[int, int]) -> int:
    """The direction of a one-square step (0 if it is not one)."""
    step = (new[0] - old[0], new[1] - old[1])
    return next((d for d, s in STEPS.items() if s == step), 0)


MOVE_ACTIONS = frozenset({"steer"})  # the keys that make a move (hidden while you do not ride here)


class TronArena(ScrollView, can_focus=True):
    """The live arena; steering keys post `MoveChosen("N")` etc. for the game screen to send."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tron-arena--floor",
        "tron-arena--wall",
        "tron-arena--dead",
        "tron-arena--overlay",
        *(f"tron-arena--p{k}" for k in range(1, MAX_RIDERS + 1)),
        *(f"tron-arena--head{k}" for k in range(1, MAX_RIDERS + 1)),
        *(f"tron-arena--zone{k}" for k in range(1, MAX_RIDERS + 1)),
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,w", f"steer({NORTH})", "Steer", key_display="←↑→↓/WASD"),
        Binding("right,d", f"steer({EAST})", show=False),
        Binding("down,s", f"steer({SOUTH})", show=False),
        Binding("left,a", f"steer({WEST})", show=False),
    ]

    position: reactive[Position] = reactive(Position, always_update=True, repaint=False)

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.grid = TronGrid(0, 0, bytearray(), [], [], [], 0)
        self.countdown_until: float | None = None  # monotonic time of the first tick
        self.sent: int | None = None  # the direction already asked for this tick
        self._timer: Timer | None = None
        self.shaded = False  # a review's arena: empty squares shaded by territory (`TronGrid.territory`)
        self.zones = bytearray()  # while shaded: each square's owner (0, seat + 1 or TIED)
        self.zone_counts: list[int] = []  # while shaded: each seat's squares

    # -- state in ----------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The move keys show (and work) only while you play here (`in_play`)."""
        return in_play(self.position) if action in MOVE_ACTIONS else True

    def watch_position(self, position: Position) -> None:
        """A full state: rebuild the grid, start the countdown before the first tick, redraw everything."""
        self.grid = TronGrid.from_view(position.view)
        self.zones, self.zone_counts = self.grid.territory() if self.shaded else (bytearray(), [])
        self.sent = None
        self._start_countdown(position)
        self._resize_virtual()
        self.refresh()
        refresh_keys(self)  # the steering keys follow the game (`check_action`)

    def _start_countdown(self, position: Position) -> None:
        """Count down to the first tick of a game that has not started moving."""
        if position.countdown_ms:
            self.countdown_until = time.monotonic() + position.countdown_ms / 1000
            if self._timer is None:
                self._timer = self.set_interval(0.1, self._count)
        else:
            self.countdown_until = None

    def _count(self) -> None:
        """Redraw the countdown overlay; stop once the game moves."""
        self._refresh_overlay()
        if self.countdown_until is None and self._timer is not None:
            self._timer.stop()
            self._timer = None

    def apply_delta(self, delta: Mapping[str, Any]) -> None:
        """A tick: add the new heads and redraw just the squares that changed."""
        if self.countdown_until is not None:
            self.countdown_until = None
            self._refresh_overlay()
        changed = self.grid.apply(delta)
        self.sent = None
        for x, y in changed:
            self.refresh(self._cell_region(x, y))
        self._follow()

    # -- steering ---------------------------------------------------------------------------------------
    @property
    def riding(self) -> bool:
        """True while your rider is alive in a running game."""
        seat = self.position.seat
        return self.position.can_move and seat is not None and seat < len(self.grid.alive) and self.grid.alive[seat]

    def action_steer(self, direction: int) -> None:
        """Ask to turn; turning straight back (into your own trail) is ignored."""
        seat = self.position.seat
        if not self.riding or seat is None:
            return
        current = self.grid.dirs[seat] if seat < len(self.grid.dirs) else 0
        if current and self.grid.tick and direction == OPPOSITE[current]:  # before the first tick: any way
            return
        if direction != self.sent:
            self.sent = direction
            self.post_message(MoveChosen(LETTERS[direction]))

    # -- geometry ---------------------------------------------------------------------------------------
    @property
    def wide(self) -> bool:
        """True when each square can be two columns by one line (else half-block mode)."""
        return 2 * self.grid.width <= self.size.width and self.grid.height <= self.size.height

    def _arena_size(self) -> Size:
        """The arena's size in cells of the terminal, in the current mode."""
        if self.wide:
            return Size(2 * self.grid.width, self.grid.height)
        return Size(self.grid.width, (self.grid.height + 1) // 2)

    def _resize_virtual(self) -> None:
        """Tell the scroll view how large the drawing is."""
        self.virtual_size = self._arena_size()

    def on_resize(self) -> None:
        """The mode may change with the size."""
        self._resize_virtual()
        self.refresh()

    def _pad(self) -> tuple[int, int]:
        """Blank columns and lines before the arena, to centre it when it is smaller than the widget."""
        arena = self._arena_size()
        return max(0, (self.size.width - arena.width) // 2), max(0, (self.size.height - arena.height) // 2)

    def _cell_region(self, x: int, y: int) -> Region:
        """The widget region where square (x, y) is drawn (in the current scroll position)."""
        pad_x, pad_y = self._pad()
        scroll_x, scroll_y = self.scroll_offset
        if self.wide:
            return Region(pad_x + 2 * x - scroll_x, pad_y + y - scroll_y, 2, 1)
        return Region(pad_x + x - scroll_x, pad_y + y // 2 - scroll_y, 1, 1)

    def _follow(self) -> None:
        """Scroll so that your rider stays in view when the arena is larger than the widget."""
        seat = self.position.seat
        arena = self._arena_size()
        if (
            seat is None
            or seat >= len(self.grid.heads)
            or (arena.width <= self.size.width and arena.height <= self.size.height)
        ):
            return
        region = self._cell_region(*self.grid.heads[seat])
        margin_x, margin_y = FOLLOW_MARGIN * (2 if self.wide else 1), FOLLOW_MARGIN // (1 if self.wide else 2)
        if not self.size.region.shrink((margin_y, margin_x, margin_y, margin_x)).contains_region(region):
            scroll_x, scroll_y = self.scroll_offset
            self.scroll_to(
                region.x + scroll_x - self.size.width // 2, region.y + scroll_y - self.size.height // 2, animate=False
            )

    # -- drawing -----------------------------------------------------------------------------------------
    def _surface(self, name: str) -> Style:
        """A component drawn on the widget's own background, with theme colours blended onto it."""
        return self.get_component_rich_style(f"tron-arena--{name}")

    def _part(self, name: str) -> Style:
        """A component style (just what the CSS sets)."""
        return self.get_component_rich_style(f"tron-arena--{name}", partial=True)

    def _square_style(self, x: int, y: int) -> Style:
        """The style of a square: its value's, or on a shaded arena an empty square's owner's zone."""
        value = self.grid.cell(x, y)
        if value == EMPTY and self.zones:
            owner = self.zones[y * self.grid.width + x]
            if 0 < owner <= MAX_RIDERS:
                return self._part(f"zone{owner}")
        return self._cell_style(value)

    def _cell_style(self, value: int) -> Style:
        """The style of a square's value: floor, wall or a trail."""
        if value == EMPTY:
            return self._part("floor")
        if value == WALL:
            return self._part("wall")
        return self._part(f"p{min(value, MAX_RIDERS)}")

    def _head_at(self) -> dict[tuple[int, int], int]:
        """Seat of the rider whose head is on each head square."""
        return {head: seat for seat, head in enumerate(self.grid.heads)}

    def render_line(self, y: int) -> Strip:
        """One line of the arena (or of the blank margin), with the countdown laid over it."""
        base = self.rich_style
        width = self.size.width
        pad_x, pad_y = self._pad()
        scroll_x, scroll_y = self.scroll_offset
        line = y + scroll_y - pad_y
        arena = self._arena_size()
        if not self.grid.width or not 0 <= line < arena.height:
            strip = Strip.blank(width, base)
        else:
            segments = self._wide_line(line) if self.wide else self._half_line(line)
            strip = Strip([Segment(" " * pad_x, base), *segments]).crop(scroll_x, scroll_x + width)
            strip = strip.adjust_cell_length(width, base)
        return self._overlay(strip, y, base)

    def _wide_line(self, row: int) -> list[Segment]:
        """Row `row`, two columns per square, heads drawn as arrows."""
        heads = self._head_at()
        segments = []
        for x in range(self.grid.width):
            seat = heads.get((x, row))
            if seat is None:
                segments.append(Segment("  ", self._square_style(x, row)))
            elif self.grid.alive[seat] if seat < len(self.grid.alive) else False:
                glyph = HEAD_GLYPHS.get(self.grid.dirs[seat], HEAD_GLYPHS[0])
                segments.append(Segment(glyph, self._part(f"head{seat + 1}")))
            else:
                segments.append(Segment(CRASHED_GLYPH, self._part("dead")))
        return segments

    def _half_line(self, line: int) -> list[Segment]:
        """Two rows in one line: the upper square in the foreground of "▀", the lower in its background."""
        heads = self._head_at()
        segments = []
        for x in range(self.grid.width):
            top = self._square_colour(x, 2 * line, heads)
            bottom = self._square_colour(x, 2 * line + 1, heads) if 2 * line + 1 < self.grid.height else None
            segments.append(Segment("▀", Style(color=top, bgcolor=bottom or self._part("floor").bgcolor)))
        return segments

    def _square_colour(self, x: int, y: int, heads: dict[tuple[int, int], int]) -> Any:
        """The colour a square shows in half-block mode (heads in their bright colour)."""
        seat = heads.get((x, y))
        if seat is not None:
            alive = self.grid.alive[seat] if seat < len(self.grid.alive) else False
            return self._part(f"head{seat + 1}" if alive else "dead").bgcolor
        return self._square_style(x, y).bgcolor

    def _overlay(self, strip: Strip, y: int, base: Style) -> Strip:
        """Lay the countdown over the middle line while the game waits for its first tick."""
        text = self.overlay_text()
        if not text or y != self.size.height // 2:
            return strip
        label = f"  {text}  "
        start = max(0, (self.size.width - len(label)) // 2)
        left, right = strip.crop(0, start), strip.crop(start + len(label), self.size.width)
        return Strip.join([left, Strip([Segment(label, self._surface("overlay"))]), right])

    def overlay_text(self) -> str:
        """The countdown ("Get ready: 3 · you ride east unless you steer", ...), "Paused", or "" while the riders
        move."""
        if self.position.status == RoomStatus.PAUSED:
            return "Paused: waiting for every player to come back"
        if self.countdown_until is None:
            return ""
        left = self.countdown_until - time.monotonic()
        count = f"Get ready: {int(left) + 1}" if left > 0 else "Go!"
        seat = self.position.seat
        if self.riding and seat is not None and seat < len(self.grid.dirs) and self.grid.dirs[seat] in NAMES:
            return f"{count} · you ride {NAMES[self.grid.dirs[seat]]} unless you steer"  # the server's first heading
        return count

    def _refresh_overlay(self) -> None:
        """Redraw the overlay's line."""
        self.refresh(Region(0, self.size.height // 2, self.size.width, 1))


def fold_deltas(view: Mapping[str, Any], deltas: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A full view with tick deltas applied in order (how a replay draws a tick)."""
    grid = TronGrid.from_view(view)
    for delta in deltas:
        grid.apply(delta)
    return grid.to_view()


BOARD = BoardSpec(
    TronArena,
    fold=fold_deltas,
    chips=(
        ("   ", "#000000", "#1fb5d6"),
        ("   ", "#000000", "#f08c24"),
        ("   ", "#000000", "#6cc04a"),
        ("   ", "#000000", "#d04fc4"),
    ),
)
"""Tron's entry in the board registry: each rider's trail colour; replays fold the tick deltas."""
