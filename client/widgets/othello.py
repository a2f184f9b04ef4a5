"""The Othello board: discs on a green board, coordinates on the edges, legal moves, last move and flips.

Drawn with the Line API: each board row is `cell_h` lines, each cell `cell_w` columns, the largest
size that fits the widget (6x6 to 10x10 boards, from an 80x24 terminal up). A cursor moves with the
arrows or hjkl and Enter plays; a click on a square plays it at once (on the opponent's turn, queues it as
your premove, drawn in its own colour until it is played or cancelled).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Offset
from textual.reactive import reactive
from textual.strip import Strip

from gamenight.client.bindings import refresh_keys
from gamenight.client.messages import MoveChosen, Premove
from gamenight.client.widgets.board import (
    BLANK,
    DISC,
    DOT,
    BoardSpec,
    Grid,
    Position,
    StyledBoard,
    fit_grid,
    in_play,
    why_not_yours,
)

FILES = "abcdefghij"
LABEL_W = 3  # rank numbers up to "10" and a space
LABEL_H = 1  # the row of file letters
DISC_CHARS = {"B": "black", "W": "white"}


def square_name(row: int, col: int) -> str:
    """The name of a square: row 0 is rank 1 (drawn at the top), col 0 is file a."""
    return f"{FILES[col]}{row + 1}"


def parse_square(name: str) -> tuple[int, int] | None:
    """(row, col) of a square name like "f5", or None if it is not one."""
    name = name.strip().lower()
    if len(name) < 2 or name[0] not in FILES or not name[1:].isdigit():
        return None
    return int(name[1:]) - 1, FILES.index(name[0])


def move_syntax(text: str, view: Mapping[str, Any]) -> str | None:
    """Why a typed text is no Othello move on this board (a square off the board, or one a disc holds), or None."""
    board = view.get("board")
    rows = [str(r) for r in board] if isinstance(board, list) else []
    n = len(rows)
    square = parse_square(text)
    if square is None or not (0 <= square[0] < n and 0 <= square[1] < n) or " " in text.strip():
        return f"{text} is not a square of this board (a1 to {FILES[max(0, n - 1)]}{n})"
    if rows[square[0]][square[1]] in DISC_CHARS:
        return f"{text} is taken"
    return None


MOVE_ACTIONS = frozenset({"play"})  # the keys that make a move (hidden while you do not play here)


class OthelloBoard(StyledBoard, can_focus=True):
    """An Othello position you can play on with keys or the mouse; posts `MoveChosen("f5")`."""

    COMPONENT_PREFIX = "othello-board"
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "othello-board--light",
        "othello-board--dark",
        "othello-board--black",
        "othello-board--white",
        "othello-board--hint",
        "othello-board--cursor",
        "othello-board--last",
        "othello-board--flipped",
        "othello-board--label",
        "othello-board--premove",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1, 0)", "Up", show=False),
        Binding("down,j", "cursor(1, 0)", "Down", show=False),
        Binding("left,h", "cursor(0, -1)", "Left", show=False),
        Binding("right,l", "cursor(0, 1)", "Right", show=False),
        Binding("enter,space", "play", "Play here"),
    ]

    position: reactive[Position] = reactive(Position, always_update=True)
    cursor: reactive[tuple[int, int]] = reactive((3, 3))

    @property
    def rows(self) -> list[str]:
        """The board rows of the view ("." empty, "B", "W"), row 0 first."""
        board = self.position.view.get("board")
        return [str(r) for r in board] if isinstance(board, list) else []

    @property
    def board_size(self) -> int:
        """Squares per side (0 before the first position)."""
        return len(self.rows)

    @property
    def grid(self) -> Grid:
        """Where the squares are drawn at the widget's current size."""
        n = max(1, self.board_size)
        return fit_grid(n, n, self.size.width, self.size.height, LABEL_W, LABEL_H)

    def cell_center(self, name: str) -> Offset:
        """The widget offset of a square's middle (what a click on it targets)."""
        row, col = parse_square(name) or (0, 0)
        return self.grid.cell_center(row, col)

    # -- input -----------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The move keys show (and work) only while you play here (`in_play`)."""
        return in_play(self.position) if action in MOVE_ACTIONS else True

    def watch_position(self, position: Position) -> None:
        """Keep the cursor on the board; on your turn, put it on a legal square if it is not on one."""
        refresh_keys(self)  # the move keys follow the game (`check_action`)
        n = self.board_size
        if n and not (0 <= self.cursor[0] < n and 0 <= self.cursor[1] < n):
            self.cursor = (n // 2 - 1, n // 2 - 1)
        if position.can_move and position.legal and square_name(*self.cursor) not in position.legal:
            self.cursor = parse_square(position.legal[0]) or self.cursor

    def action_cursor(self, d_row: int, d_col: int) -> None:
        """Move the cursor one square, stopping at the edges."""
        n = self.board_size
        if n:
            row, col = self.cursor
            self.cursor = (min(n - 1, max(0, row + d_row)), min(n - 1, max(0, col + d_col)))

    def action_play(self) -> None:
        """Play the square under the cursor."""
        if self.board_size:
            self._choose(*self.cursor)

    def on_click(self, event: events.Click) -> None:
        """Play the clicked square."""
        offset = event.get_content_offset(self)
        cell = self.grid.cell_at(offset.x, offset.y) if offset else None
        if cell is not None:
            self.cursor = cell
            self._choose(*cell)

    def _choose(self, row: int, col: int) -> None:
        """Post the move if it is legal now, queue it as a premove while the opponent is to move, else say why not."""
        name = square_name(row, col)
        if not self.position.can_move and in_play(self.position):
            self.post_message(Premove(name))
        elif not self.position.can_move:
            self.notify(why_not_yours(self.position), severity="warning", timeout=2)
        elif name not in self.position.legal:
            self.notify(f"{name} is not a legal move", severity="warning", timeout=2)
        else:
            self.post_message(MoveChosen(name))

    # -- drawing ---------------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        """One line of the board: the file letters, or a slice of one row of squares."""
        base = self.rich_style
        width = self.size.width
        rows = self.rows
        if not rows:
            return Strip.blank(width, base)
        grid = self.grid
        if y == grid.top - LABEL_H:
            return self._files_line(grid, base).adjust_cell_length(width, base)
        where = grid.row_of_line(y)
        if where is None:
            return Strip.blank(width, base)
        row, line = where
        label = f"{row + 1:>2} " if line == grid.cell_h // 2 else " " * LABEL_W
        segments = [Segment(" " * (grid.left - LABEL_W), base), Segment(label, self._surface("label"))]
        segments += [self._cell_segment(grid, row, col, line, base) for col in range(grid.cols)]
        return Strip(segments).adjust_cell_length(width, base)

    def _files_line(self, grid: Grid, base: Style) -> Strip:
        """The file letters, each centred over its column."""
        letters = "".join(FILES[col].center(grid.cell_w) for col in range(grid.cols))
        return Strip([Segment(" " * grid.left, base), Segment(letters, self._surface("label"))])

    def _cell_segment(self, grid: Grid, row: int, col: int, line: int, base: Style) -> Segment:
        """One line of one square: its background, and a disc, a legal-move dot or nothing."""
        name = square_name(row, col)
        char = self.rows[row][col] if col < len(self.rows[row]) else "."
        position = self.position
        style = base + self._part(self._background(row, col, name))
        if char in DISC_CHARS:
            return Segment(DISC[grid.size][line], style + self._part(DISC_CHARS[char]))
        if position.can_move and name in position.legal:
            return Segment(DOT[grid.size][line], style + self._part("hint"))
        return Segment(BLANK[grid.size][line], style)

    def _background(self, row: int, col: int, name: str) -> str:
        """Which background a square gets: cursor, premove, last move, flipped, or the board's checker."""
        if self.has_focus and (row, col) == self.cursor:
            return "cursor"
        if name == self.position.premove:
            return "premove"
        if name == self.position.last_move:
            return "last"
        if name in self.position.view.get("flipped", ()):
            return "flipped"
        return "light" if (row + col) % 2 == 0 else "dark"

    def on_focus(self) -> None:
        """Show the cursor."""
        self.refresh()

    def on_blur(self) -> None:
        """Hide the cursor."""
        self.refresh()


BOARD = BoardSpec(
    OthelloBoard, chips=((" ● ", "#0b0b0b", "#2e7d46"), (" ● ", "#f4f4f4", "#2e7d46")), syntax=move_syntax
)
"""Othello's entry in the board registry: black and white discs on the green board."""
