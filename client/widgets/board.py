"""What every board widget shares: the position it is given, the move it posts, and cell geometry.

Boards follow "attributes down, messages up": the game screen sets `position` (built from the latest
`state`), the board draws it and posts `MoveChosen` with a move in wire notation. A board never holds
the truth of the game; the server does. `BoardSpec` is what the registry (`client/widgets/__init__.py`)
knows of each game's board: its widget, its seat colours, and how its replay folds live deltas.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, cast

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Offset, Region
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Input, Static

from gamenight.client.messages import MoveChosen
from gamenight.client.replay import Fold
from gamenight.client.typed import Syntax
from gamenight.protocol.vocab import RoomStatus


class StyledBoard(Widget):
    """A board drawn line by line (the Line API) in the colours its component classes take from the CSS."""

    COMPONENT_PREFIX: ClassVar[str] = ""
    """The widget's component classes are named "<prefix>--<part>", e.g. "othello-board--label"."""

    def _surface(self, name: str) -> Style:
        """A component drawn on the widget's own background, with theme colours blended onto it."""
        return self.get_component_rich_style(f"{self.COMPONENT_PREFIX}--{name}")

    def _part(self, name: str) -> Style:
        """A component style (just the part the CSS sets), to add onto a cell's background."""
        return self.get_component_rich_style(f"{self.COMPONENT_PREFIX}--{name}", partial=True)


@dataclass(frozen=True)
class Position:
    """What a board draws: the game's view, the legal moves, whether you may move now, and your premove."""

    view: Mapping[str, Any] = field(default_factory=dict)
    legal: tuple[str, ...] = ()
    can_move: bool = False
    last_move: str | None = None
    seat: int | None = None
    status: RoomStatus = RoomStatus.PLAYING
    countdown_ms: int | None = None  # a live game about to (re)start: the wait before its next tick
    premove: str | None = None  # the move queued for your next turn (client/typed.py), drawn on the board


def in_play(position: Position) -> bool:
    """True when a board's move keys mean something: you hold a seat and the game runs. Spectators, a game not
    started and a finished one get no move keys (out of turn they stay, and say it is not your move)."""
    return position.seat is not None and position.status == RoomStatus.PLAYING


def why_not_yours(position: Position) -> str:
    """Why a click on the board plays nothing: the game is over (or not started), you watch, or it is not your turn."""
    if position.status == RoomStatus.FINISHED:
        return "The game is over"
    if position.seat is None:
        return "You are watching this game"
    if position.status == RoomStatus.WAITING:
        return "The game has not started yet"
    return "It is not your move"


# Glyph rows of one disc or marble, by cell size (width, height); the first size that fits is used, so a board
# grows with the terminal (11x5 cells for an 8x8 board from about 130x48).
CELL_SIZES: tuple[tuple[int, int], ...] = ((11, 5), (9, 4), (7, 3), (5, 2), (4, 2), (3, 1))
DISC: dict[tuple[int, int], tuple[str, ...]] = {
    (11, 5): ("    ▄▄▄    ", "  ▟█████▙  ", " █████████ ", "  ▜█████▛  ", "    ▀▀▀    "),
    (9, 4): ("  ▗▄▄▄▖  ", " ▟█████▙ ", " ▜█████▛ ", "  ▝▀▀▀▘  "),
    (7, 3): ("  ▄▄▄  ", " █████ ", "  ▀▀▀  "),
    (5, 2): (" ▄▄▄ ", " ▀▀▀ "),
    (4, 2): (" ▄▄ ", " ▀▀ "),
    (3, 1): (" ● ",),
}
DOT: dict[tuple[int, int], tuple[str, ...]] = {
    (11, 5): (" " * 11, " " * 11, "     ●     ", " " * 11, " " * 11),
    (9, 4): (" " * 9, "    ▄    ", "    ▀    ", " " * 9),
    (7, 3): ("       ", "   ●   ", "       "),
    (5, 2): ("  ▄  ", "  ▀  "),
    (4, 2): (" ▗▖ ", " ▝▘ "),
    (3, 1): (" · ",),
}
BLANK: dict[tuple[int, int], tuple[str, ...]] = {(w, h): (" " * w,) * h for w, h in CELL_SIZES}


@dataclass(frozen=True, slots=True)
class Grid:
    """Where an n x m board's cells sit in a widget: the cell size and the top-left of cell (0, 0)."""

    rows: int
    cols: int
    cell_w: int
    cell_h: int
    left: int
    top: int

    @property
    def size(self) -> tuple[int, int]:
        """(cell width, cell height), the key of the glyph tables."""
        return self.cell_w, self.cell_h

    def cell_region(self, row: int, col: int) -> Region:
        """The widget region one cell covers."""
        return Region(self.left + col * self.cell_w, self.top + row * self.cell_h, self.cell_w, self.cell_h)

    def cell_center(self, row: int, col: int) -> Offset:
        """The middle of a cell, for clicking it."""
        return Offset(self.left + col * self.cell_w + self.cell_w // 2, self.top + row * self.cell_h + self.cell_h // 2)

    def cell_at(self, x: int, y: int) -> tuple[int, int] | None:
        """The (row, col) under widget offset (x, y), or None off the board."""
        col, row = (x - self.left) // self.cell_w, (y - self.top) // self.cell_h
        if x < self.left or y < self.top or not (0 <= row < self.rows and 0 <= col < self.cols):
            return None
        return row, col

    def row_of_line(self, y: int) -> tuple[int, int] | None:
        """(board row, line within the cell) drawn on widget line `y`, or None."""
        if y < self.top or y >= self.top + self.rows * self.cell_h:
            return None
        return divmod(y - self.top, self.cell_h)


def fit_grid(rows: int, cols: int, width: int, height: int, margin_x: int, margin_y: int) -> Grid:
    """The largest cell size whose board (plus label margins) fits, centred in width x height."""
    for cell_w, cell_h in CELL_SIZES:
        board_w, board_h = margin_x + cols * cell_w, margin_y + rows * cell_h
        if board_w <= width and board_h <= height:
            break
    left = max(0, (width - board_w) // 2) + margin_x
    top = max(0, (height - board_h) // 2) + margin_y
    return Grid(rows, cols, cell_w, cell_h, left, top)


class TextBoard(Vertical):
    """The fallback for a game this client has no board for: a note saying so, the view's board rows as
    text, and a line to type moves in (shown only when you may move)."""

    position: reactive[Position] = reactive(Position, always_update=True)

    def compose(self) -> ComposeResult:
        """The note, the rows of text and the move line."""
        yield Static(FALLBACK_NOTE, id="text-board-note")
        yield Static(id="text-board-rows")
        move = Input(placeholder="type a move and press Enter", id="text-board-move")
        move.display = False  # until a position says you may move
        yield move

    def watch_position(self, position: Position) -> None:
        """Draw the rows of the view's board (or the whole view if it has none)."""
        rows = position.view.get("board")
        if isinstance(rows, list):
            text = "\n".join(str(row) for row in rows)
        else:
            text = "\n".join(f"{key}: {value}" for key, value in position.view.items())
        self.query_one("#text-board-rows", Static).update(Text(text))
        self.query_one("#text-board-move", Input).display = position.can_move

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Send what was typed as a move."""
        event.stop()
        if event.value.strip():
            self.post_message(MoveChosen(event.value.strip()))
            event.input.value = ""


FALLBACK_NOTE = "This client has no board for this game: its position is shown as text, and moves are typed."

Chip = tuple[str, str, str]
"""A seat's swatch in the side panel: (glyph, colour, background), the player's colour on the board."""


@dataclass(frozen=True, slots=True)
class BoardSpec:
    """What the client knows of one game's board: the widget that draws it, each seat's chip (its colour on
    that board), for a live game the fold that applies tick deltas to a view (for replays), and the check of a
    typed move's form."""

    widget: type[Widget]
    chips: tuple[Chip, ...] = ()
    fold: Fold | None = None
    syntax: Syntax | None = None  # why a typed move is no move of this game (client/typed.py); None: any text


class Board(Protocol):
    """What the screens give every board widget (a Textual reactive on each)."""

    position: Position


def show_position(board: Widget, position: Position) -> None:
    """Give a board the position to draw."""
    cast(Board, board).position = position


def apply_delta(board: Widget, delta: Mapping[str, Any]) -> bool:
    """Hand a live tick's delta to a board that draws deltas; False if this board does not."""
    method = getattr(board, "apply_delta", None)
    if method is None:
        return False
    method(delta)
    return True
