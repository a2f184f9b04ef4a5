"""The Connect Four board: red and yellow discs in a blue frame, the last disc and the winning four marked.

Drawn with the Line API like the other boards: the column letters on the first line, a drop marker over the
cursor's column on the second, then six rows of `cell_h` lines each, the largest cell size that fits. Moves
are columns: left/right (or h/l) move the cursor over the columns that are not full, Enter or Space drops
there, 1-7 drop straight into a column, and a click anywhere on a column drops into it. The column letters are
not keys: the game screen's letters (`b` back to the lobby, ...) must reach it while the board has the focus.
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

COLUMNS = "abcdefg"
ROWS = 6
LABEL_H = 2  # the column letters and the drop-marker line above the board
DISC_CHARS = {"R": "red", "Y": "yellow"}
MARKER = "▼"
MOVE_ACTIONS = frozenset({"drop_here", "drop"})  # the keys that make a move (hidden while you do not play here)


def winning_cells(view: Mapping[str, Any]) -> set[tuple[int, int]]:
    """The (row, col) cells of the view's winning four, row 0 on top; empty when nobody has won."""
    found = set()
    for cell in view.get("winning_line") or ():
        if isinstance(cell, list | tuple) and len(cell) == 2:
            found.add((int(cell[0]), int(cell[1])))
    return found


def move_syntax(text: str, view: Mapping[str, Any]) -> str | None:
    """Why a typed text is no Connect Four move (a column letter a-g), or a full column; None if it is one."""
    if text not in COLUMNS or len(text) != 1:
        return f"{text} is not a column: type a letter from a to {COLUMNS[-1]}"
    board = view.get("board")
    if isinstance(board, list) and board and str(board[0])[COLUMNS.index(text)] in DISC_CHARS:
        return f"Column {text} is full"
    return None


class Connect4Board(StyledBoard, can_focus=True):
    """A Connect Four position you can play on with keys or the mouse; posts `MoveChosen("d")`."""

    COMPONENT_PREFIX = "connect4-board"
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "connect4-board--frame",
        "connect4-board--hole",
        "connect4-board--red",
        "connect4-board--yellow",
        "connect4-board--cursor",
        "connect4-board--last",
        "connect4-board--win",
        "connect4-board--label",
        "connect4-board--premove",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left,h", "cursor(-1)", "Left", show=False),
        Binding("right,l", "cursor(1)", "Right", show=False),
        Binding("enter,space", "drop_here", "Drop"),
        *(Binding(str(col + 1), f"drop({col})", f"Drop in {letter}", show=False) for col, letter in enumerate(COLUMNS)),
    ]

    position: reactive[Position] = reactive(Position, always_update=True)
    cursor: reactive[int] = reactive(3)

    @property
    def rows(self) -> list[str]:
        """The board rows of the view ("." empty, "R", "Y"), top row first."""
        board = self.position.view.get("board")
        return [str(r) for r in board] if isinstance(board, list) else []

    @property
    def grid(self) -> Grid:
        """Where the cells are drawn at the widget's current size."""
        return fit_grid(ROWS, len(COLUMNS), self.size.width, self.size.height, 0, LABEL_H)

    def column_center(self, letter: str) -> Offset:
        """The widget offset of the middle of a column's top cell (what a click on the column targets)."""
        return self.grid.cell_center(0, COLUMNS.index(letter))

    # -- input -----------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The move keys show (and work) only while you play here (`in_play`)."""
        return in_play(self.position) if action in MOVE_ACTIONS else True

    def watch_position(self, position: Position) -> None:
        """On your turn, move the cursor to the nearest column that is not full if it is on a full one."""
        refresh_keys(self)  # the move keys follow the game (`check_action`)
        if position.can_move and position.legal and COLUMNS[self.cursor] not in position.legal:
            self.cursor = min(self._open_columns(), key=lambda col: abs(col - self.cursor), default=self.cursor)

    def _open_columns(self) -> list[int]:
        """The columns you may drop into now, left to right."""
        return [col for col, letter in enumerate(COLUMNS) if letter in self.position.legal]

    def action_cursor(self, step: int) -> None:
        """Move the cursor to the next open column that way (any column when none is open), stopping at the edge."""
        open_columns = self._open_columns() or list(range(len(COLUMNS)))
        ahead = [col for col in open_columns if (col - self.cursor) * step > 0]
        if ahead:
            self.cursor = min(ahead, key=lambda col: abs(col - self.cursor))

    def action_drop_here(self) -> None:
        """Drop a disc into the cursor's column."""
        self._choose(self.cursor)

    def action_drop(self, col: int) -> None:
        """Drop a disc straight into column `col` (the keys 1-7)."""
        self.cursor = col
        self._choose(col)

    def on_click(self, event: events.Click) -> None:
        """Drop into the clicked column (anywhere from its letter down to its bottom cell)."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        grid = self.grid
        col = (offset.x - grid.left) // grid.cell_w
        inside = grid.top - LABEL_H <= offset.y < grid.top + ROWS * grid.cell_h
        if offset.x >= grid.left and 0 <= col < len(COLUMNS) and inside:
            self.cursor = col
            self._choose(col)

    def _choose(self, col: int) -> None:
        """Post the move if the column is open now, queue it as a premove while the opponent is to move, else say
        why not."""
        letter = COLUMNS[col]
        if not self.position.can_move and in_play(self.position):
            self.post_message(Premove(letter))
        elif not self.position.can_move:
            self.notify(why_not_yours(self.position), severity="warning", timeout=2)
        elif letter not in self.position.legal:
            self.notify(f"Column {letter} is full", severity="warning", timeout=2)
        else:
            self.post_message(MoveChosen(letter))

    # -- drawing ---------------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        """One line of the board: the column letters, the drop marker, or a slice of one row of cells."""
        base = self.rich_style
        width = self.size.width
        if not self.rows:
            return Strip.blank(width, base)
        grid = self.grid
        if y == grid.top - LABEL_H:
            return self._letters_line(grid, base).adjust_cell_length(width, base)
        if y == grid.top - 1:
            return self._marker_line(grid, base).adjust_cell_length(width, base)
        where = grid.row_of_line(y)
        if where is None:
            return Strip.blank(width, base)
        row, line = where
        segments = [Segment(" " * grid.left, base)]
        segments += [self._cell_segment(grid, row, col, line, base) for col in range(grid.cols)]
        return Strip(segments).adjust_cell_length(width, base)

    def _letters_line(self, grid: Grid, base: Style) -> Strip:
        """The column letters, each centred over its column."""
        letters = "".join(letter.center(grid.cell_w) for letter in COLUMNS)
        return Strip([Segment(" " * grid.left, base), Segment(letters, self._surface("label"))])

    def _marker_line(self, grid: Grid, base: Style) -> Strip:
        """A drop marker over the cursor's column while you may move and the board has the focus, and one over
        your premove's column."""
        segments = [Segment(" " * grid.left, base)]
        show = self.has_focus and self.position.can_move
        for col in range(grid.cols):
            if show and col == self.cursor:
                segments.append(Segment(MARKER.center(grid.cell_w), self._surface("cursor")))
            elif COLUMNS[col] == self.position.premove:
                segments.append(Segment(MARKER.center(grid.cell_w), self._surface("premove")))
            else:
                segments.append(Segment(" " * grid.cell_w, base))
        return Strip(segments)

    def _cell_segment(self, grid: Grid, row: int, col: int, line: int, base: Style) -> Segment:
        """One line of one cell: the frame's colour (or a highlight) and a disc or an empty hole."""
        cells = self.rows[row] if row < len(self.rows) else ""
        char = cells[col] if col < len(cells) else "."
        style = base + self._part(self._background(row, col))
        if char in DISC_CHARS:
            return Segment(DISC[grid.size][line], style + self._part(DISC_CHARS[char]))
        # A small hole rather than a dark disc: the discs then stand out without colour too.
        return Segment(DOT[grid.size][line], style + self._part("hole"))

    def _background(self, row: int, col: int) -> str:
        """Which background a cell gets: part of the winning four, the last disc dropped, or the frame."""
        if (row, col) in winning_cells(self.position.view):
            return "win"
        if (row, col) == self._last_cell():
            return "last"
        return "frame"

    def _last_cell(self) -> tuple[int, int] | None:
        """The (row, col) of the last disc dropped: the top disc of the last move's column."""
        last = self.position.last_move
        if not last or last.strip().lower() not in COLUMNS:
            return None
        col = COLUMNS.index(last.strip().lower())
        for row, cells in enumerate(self.rows):
            if col < len(cells) and cells[col] in DISC_CHARS:
                return row, col
        return None

    def on_focus(self) -> None:
        """Show the drop marker."""
        self.refresh()

    def on_blur(self) -> None:
        """Hide the drop marker."""
        self.refresh()

    def watch_cursor(self) -> None:
        """Redraw the drop marker where the cursor went."""
        self.refresh()


BOARD = BoardSpec(
    Connect4Board, chips=((" ● ", "#e8342c", "#1f4fa3"), (" ● ", "#f7d23a", "#1f4fa3")), syntax=move_syntax
)
"""Connect Four in the client's board registry: red and yellow discs on the blue frame."""
