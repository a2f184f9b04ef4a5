"""The Pentago board: four quadrants drawn apart, marbles, clickable turn markers and a turn preview.

A move takes two choices. First a square (arrows/hjkl + Enter, or a click); then a quadrant (keys 1-4,
numbered as drawn: 1 top-left, 2 top-right, 3 bottom-left, 4 bottom-right) and a direction (← turns
anticlockwise ↺, → clockwise ↻), or a click on one of the ↺ ↻ markers beside each quadrant. The board
then shows the position after the turn; Enter (or a second click on the same marker) sends it and Esc
goes back. A square whose bare placement is legal already makes five, so it is sent at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.geometry import Offset, Region
from textual.reactive import reactive
from textual.strip import Strip

from gamenight.client.bindings import refresh_keys
from gamenight.client.messages import MoveChosen
from gamenight.client.widgets.board import CELL_SIZES, DISC, BoardSpec, Position, StyledBoard, in_play, why_not_yours

SIZE = 6
FILES = "abcdef"
QUADRANTS = ("tl", "tr", "bl", "br")  # wire names, in the order of keys 1-4
QUADRANT_ORIGINS = ((0, 0), (0, 3), (3, 0), (3, 3))  # (top row, left column) of each, as drawn
CW, CCW = "cw", "ccw"
ARROWS = {CCW: "↺", CW: "↻"}
LABEL_W = 3
GAP_X, GAP_Y = 2, 1
MARKERS_ABOVE, FILES_ROW, MARKERS_BELOW, HINT_ROWS = 1, 1, 1, 1


def cell_name(row: int, col: int) -> str:
    """The name of a cell: row 0 is rank 1, drawn at the top."""
    return f"{FILES[col]}{row + 1}"


def parse_cell(name: str) -> tuple[int, int] | None:
    """(row, col) of a cell name like "b3", or None."""
    name = name.strip().lower()
    if len(name) != 2 or name[0] not in FILES or name[1] not in "123456":
        return None
    return int(name[1]) - 1, FILES.index(name[0])


def quadrant_of(row: int, col: int) -> int:
    """The quadrant (0-3) a cell lies in."""
    return (row // 3) * 2 + col // 3


def turned_cell(row: int, col: int, quadrant: int, clockwise: bool) -> tuple[int, int]:
    """Where a cell's marble goes when `quadrant` turns (cells of other quadrants stay)."""
    top, left = QUADRANT_ORIGINS[quadrant]
    r, c = row - top, col - left
    if not (0 <= r < 3 and 0 <= c < 3):
        return row, col
    nr, nc = (c, 2 - r) if clockwise else (2 - c, r)
    return top + nr, left + nc


def turn_rows(rows: list[str], quadrant: int, clockwise: bool) -> list[str]:
    """The board rows after turning one quadrant a quarter turn, as the server will."""
    cells = [list(row) for row in rows]
    top, left = QUADRANT_ORIGINS[quadrant]
    for r in range(top, top + 3):
        for c in range(left, left + 3):
            nr, nc = turned_cell(r, c, quadrant, clockwise)
            cells[nr][nc] = rows[r][c]
    return ["".join(row) for row in cells]


def parse_move(text: str | None) -> tuple[tuple[int, int], int | None, bool] | None:
    """(cell, quadrant or None, clockwise) of a move like "b3 tr cw" or "b3", or None."""
    words = (text or "").split()
    cell = parse_cell(words[0]) if words else None
    if cell is None or len(words) not in (1, 3):
        return None
    if len(words) == 1:
        return cell, None, True
    if words[1] not in QUADRANTS or words[2] not in (CW, CCW):
        return None
    return cell, QUADRANTS.index(words[1]), words[2] == CW


MOVE_FORM = "a square, a quadrant (tl, tr, bl, br) and a direction (cw, ccw), e.g. c3 tr cw"


def move_syntax(text: str, view: Mapping[str, Any]) -> str | None:
    """Why a typed text is no Pentago move: not a square, or a quadrant or direction missing or unknown; None if
    it has the move's form (a square is not said taken: a turn of a quadrant may free it again)."""
    words = text.split()
    if not words or parse_cell(words[0]) is None:
        return f"{text} is not a square (a1 to f6); a move is {MOVE_FORM}"
    if parse_move(text) is None:
        return f"{text} is not a move; a move is {MOVE_FORM}"
    return None


@dataclass(frozen=True, slots=True)
class PentagoLayout:
    """Where everything is drawn: cell size, the top-left of cell a1, and the quadrant gaps."""

    cell_w: int
    cell_h: int
    left: int
    top: int

    @property
    def size(self) -> tuple[int, int]:
        """(cell width, cell height)."""
        return self.cell_w, self.cell_h

    @property
    def quadrant_width(self) -> int:
        """Columns one quadrant spans."""
        return 3 * self.cell_w

    def cell_x(self, col: int) -> int:
        """The first column of a board column."""
        return self.left + col * self.cell_w + (GAP_X if col >= 3 else 0)

    def cell_y(self, row: int) -> int:
        """The first line of a board row."""
        return self.top + row * self.cell_h + (GAP_Y if row >= 3 else 0)

    def cell_region(self, row: int, col: int) -> Region:
        """The region of one cell."""
        return Region(self.cell_x(col), self.cell_y(row), self.cell_w, self.cell_h)

    def cell_at(self, x: int, y: int) -> tuple[int, int] | None:
        """The cell under (x, y), or None (gaps and margins included)."""
        for row in range(SIZE):
            for col in range(SIZE):
                if self.cell_region(row, col).contains(x, y):
                    return row, col
        return None

    @property
    def marker_lines(self) -> tuple[int, int]:
        """The lines of the markers above the top quadrants and below the bottom ones."""
        return self.top - FILES_ROW - MARKERS_ABOVE, self.cell_y(SIZE - 1) + self.cell_h

    def marker_line(self, quadrant: int) -> tuple[int, int]:
        """(line, first column) of a quadrant's marker bar "↺  n  ↻"."""
        line = self.marker_lines[0] if quadrant < 2 else self.marker_lines[1]
        x = self.cell_x(QUADRANT_ORIGINS[quadrant][1])
        return line, x

    def marker_at(self, x: int, y: int) -> tuple[int, str] | None:
        """The (quadrant, direction) of the turn marker under (x, y), or None."""
        for quadrant in range(4):
            line, start = self.marker_line(quadrant)
            if y != line:
                continue
            if start <= x < start + 3:
                return quadrant, CCW
            end = start + self.quadrant_width
            if end - 3 <= x < end:
                return quadrant, CW
        return None

    def marker_offset(self, quadrant: int, direction: str) -> Offset:
        """The middle of a marker, for clicking it."""
        line, start = self.marker_line(quadrant)
        return Offset(start + 1 if direction == CCW else start + self.quadrant_width - 2, line)


def fit_layout(width: int, height: int) -> PentagoLayout:
    """The largest cell size that fits the board, its labels and markers; centred."""
    for cell_w, cell_h in CELL_SIZES:
        board_w = LABEL_W + SIZE * cell_w + GAP_X
        board_h = MARKERS_ABOVE + FILES_ROW + SIZE * cell_h + GAP_Y + MARKERS_BELOW + HINT_ROWS
        if board_w <= width and board_h <= height:
            break
    left = max(0, (width - board_w) // 2) + LABEL_W
    top = max(0, (height - board_h) // 2) + MARKERS_ABOVE + FILES_ROW
    return PentagoLayout(cell_w, cell_h, left, top)


MOVE_ACTIONS = frozenset({"play", "quadrant"})  # the keys that make a move (hidden while you do not play here)


class PentagoBoard(StyledBoard, can_focus=True):
    """A Pentago position you can play on; posts `MoveChosen("b3 tr cw")` (or "b3" for a winning placement)."""

    COMPONENT_PREFIX = "pentago-board"
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "pentago-board--quadrant",
        "pentago-board--quadrant-alt",
        "pentago-board--turning",
        "pentago-board--black",
        "pentago-board--white",
        "pentago-board--hole",
        "pentago-board--cursor",
        "pentago-board--placed",
        "pentago-board--five",
        "pentago-board--label",
        "pentago-board--marker",
        "pentago-board--marker-on",
        "pentago-board--premove",
        "pentago-board--turned",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1, 0)", "Up", show=False),
        Binding("down,j", "cursor(1, 0)", "Down", show=False),
        Binding("left,h", "left", "Left / ↺", show=False),
        Binding("right,l", "right", "Right / ↻", show=False),
        Binding("1", "quadrant(0)", "Quadrant 1-4", key_display="1-4"),
        Binding("2", "quadrant(1)", show=False),
        Binding("3", "quadrant(2)", show=False),
        Binding("4", "quadrant(3)", show=False),
        Binding("enter,space", "play", "Place / confirm"),
        Binding("escape", "cancel", "Cancel", show=False),
    ]

    position: reactive[Position] = reactive(Position, always_update=True)
    cursor: reactive[tuple[int, int]] = reactive((2, 2))
    chosen: reactive[tuple[int, int] | None] = reactive(None)  # the square picked, awaiting its turn
    quadrant: reactive[int | None] = reactive(None)
    direction: reactive[str] = reactive(CW)

    @property
    def rows(self) -> list[str]:
        """The board as six rows of "." / "B" / "W", rank 1 first."""
        board = self.position.view.get("board")
        rows = [str(r) for r in board] if isinstance(board, list) else []
        return rows if len(rows) == SIZE and all(len(r) == SIZE for r in rows) else ["." * SIZE] * SIZE

    @property
    def layout_now(self) -> PentagoLayout:
        """The layout at the widget's current size."""
        return fit_layout(self.size.width, self.size.height)

    @property
    def pending_move(self) -> str | None:
        """The full move the current choices make, once a square and a quadrant are picked."""
        if self.chosen is None or self.quadrant is None:
            return None
        return f"{cell_name(*self.chosen)} {QUADRANTS[self.quadrant]} {self.direction}"

    def cell_center(self, name: str) -> Offset:
        """The widget offset of a cell's middle."""
        row, col = parse_cell(name) or (0, 0)
        region = self.layout_now.cell_region(row, col)
        return Offset(region.x + region.width // 2, region.y + region.height // 2)

    def marker_center(self, quadrant: str, direction: str) -> Offset:
        """The widget offset of a turn marker, e.g. ("tr", "cw")."""
        return self.layout_now.marker_offset(QUADRANTS.index(quadrant), direction)

    # -- choosing ----------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The move keys show (and work) only while you play here (`in_play`)."""
        return in_play(self.position) if action in MOVE_ACTIONS else True

    def watch_position(self, position: Position) -> None:
        """A new position cancels a half-made move."""
        self._reset()
        refresh_keys(self)  # the move keys follow the game (`check_action`)

    def _reset(self) -> None:
        """Forget the square, quadrant and direction picked so far."""
        self.chosen, self.quadrant, self.direction = None, None, CW

    def action_cursor(self, d_row: int, d_col: int) -> None:
        """Move the cursor while no square is chosen."""
        if self.chosen is None:
            row, col = self.cursor
            self.cursor = (min(SIZE - 1, max(0, row + d_row)), min(SIZE - 1, max(0, col + d_col)))

    def action_left(self) -> None:
        """Cursor left, or (once a square is chosen) turn anticlockwise."""
        if self.chosen is None:
            self.action_cursor(0, -1)
        else:
            self.direction = CCW

    def action_right(self) -> None:
        """Cursor right, or (once a square is chosen) turn clockwise."""
        if self.chosen is None:
            self.action_cursor(0, 1)
        else:
            self.direction = CW

    def action_quadrant(self, quadrant: int) -> None:
        """Pick the quadrant to turn (after the square)."""
        if self.chosen is not None:
            self.quadrant = quadrant

    def action_play(self) -> None:
        """Place on the cursor's square, or confirm the previewed turn."""
        if self.chosen is None:
            self._choose_cell(*self.cursor)
        elif self.quadrant is None:
            self.notify("Pick a quadrant to turn: 1-4, or click ↺ / ↻", timeout=3)
        else:
            self._send(self.pending_move)

    def action_cancel(self) -> None:
        """Step back: drop the quadrant, then the square; with nothing chosen, let Esc go further."""
        if self.quadrant is not None:
            self.quadrant = None
        elif self.chosen is not None:
            self.chosen = None
        else:
            raise SkipAction()

    def on_click(self, event: events.Click) -> None:
        """A click on a square places there; a click on a marker picks (then confirms) that turn."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        layout = self.layout_now
        marker = layout.marker_at(offset.x, offset.y)
        cell = layout.cell_at(offset.x, offset.y)
        if marker is not None and self.chosen is not None:
            quadrant, direction = marker
            if (quadrant, direction) == (self.quadrant, self.direction):
                self._send(self.pending_move)
            else:
                self.quadrant, self.direction = quadrant, direction
        elif cell is not None:
            self.cursor = cell
            self._reset()
            self._choose_cell(*cell)

    def _choose_cell(self, row: int, col: int) -> None:
        """Pick a square: send it at once if placing there wins, else wait for the turn."""
        name = cell_name(row, col)
        legal = self.position.legal
        if not self.position.can_move:
            self.notify(why_not_yours(self.position), severity="warning", timeout=2)
        elif name in legal:
            self._send(name)
        elif not any(move.startswith(name + " ") for move in legal):
            self.notify(f"{name} is taken", severity="warning", timeout=2)
        else:
            self.chosen = (row, col)

    def _send(self, move: str | None) -> None:
        """Post a move if it is legal (it always is when built from the legal list)."""
        if move is not None and move in self.position.legal:
            self.post_message(MoveChosen(move))
            self._reset()
        elif move is not None:
            self.notify(f"{move} is not a legal move", severity="warning", timeout=2)

    # -- drawing -----------------------------------------------------------------------------------
    def shown(self) -> tuple[list[str], set[tuple[int, int]], int | None]:
        """The rows to draw (with the pending move previewed), the cells to mark, and the turning quadrant (the
        previewed turn's, else the one the last move turned)."""
        rows = self.rows
        marked: set[tuple[int, int]] = set()
        if self.chosen is not None:
            row, col = self.chosen
            mine = "B" if self.position.seat in (0, None) else "W"
            rows = [r if i != row else r[:col] + mine + r[col + 1 :] for i, r in enumerate(rows)]
            if self.quadrant is None:
                return rows, {self.chosen}, None
            clockwise = self.direction == CW
            return (
                turn_rows(rows, self.quadrant, clockwise),
                {turned_cell(row, col, self.quadrant, clockwise)},
                self.quadrant,
            )
        last = parse_move(self.position.last_move)
        if last is None:
            return rows, marked, None
        (row, col), quadrant, clockwise = last
        marked.add(turned_cell(row, col, quadrant, clockwise) if quadrant is not None else (row, col))
        return rows, marked, quadrant  # the quadrant the last move turned

    def last_turn(self) -> tuple[int, str] | None:
        """(quadrant, direction) of the last move's turn, or None (no move yet, or a bare winning placement)."""
        last = parse_move(self.position.last_move)
        if last is None or last[1] is None:
            return None
        return last[1], CW if last[2] else CCW

    def render_line(self, y: int) -> Strip:
        """One line: a marker bar, the file letters, a slice of a row of cells, a gap, or the hint."""
        base = self.rich_style
        width = self.size.width
        layout = self.layout_now
        segments = self._line_segments(layout, y, base)
        return Strip(segments).adjust_cell_length(width, base) if segments else Strip.blank(width, base)

    def _line_segments(self, layout: PentagoLayout, y: int, base: Style) -> list[Segment]:
        """The segments of line `y` (empty for a blank line)."""
        above, below = layout.marker_lines
        if y in (above, below):
            return self._markers(layout, (0, 1) if y == above else (2, 3), base)
        if y == layout.top - 1:
            letters = [FILES[c].center(layout.cell_w) + (" " * GAP_X if c == 2 else "") for c in range(SIZE)]
            return [Segment(" " * layout.left, base), Segment("".join(letters), self._surface("label"))]
        if y == below + 1:
            return [Segment(self._hint().center(self.size.width), self._surface("label"))]
        for row in range(SIZE):
            first = layout.cell_y(row)
            if first <= y < first + layout.cell_h:
                return self._cells(layout, row, y - first, base)
        return []

    def _markers(self, layout: PentagoLayout, quadrants: tuple[int, int], base: Style) -> list[Segment]:
        """The "↺  n  ↻" bars over (or under) two quadrants."""
        segments = [Segment(" " * layout.left, base)]
        for quadrant in quadrants:
            if quadrant % 2 == 1:
                segments.append(Segment(" " * GAP_X, base))
            inner = layout.quadrant_width - 6
            segments += [
                self._marker(quadrant, CCW, base),
                Segment(str(quadrant + 1).center(inner), self._surface("label")),
                self._marker(quadrant, CW, base),
            ]
        return segments

    def _marker(self, quadrant: int, direction: str, base: Style) -> Segment:
        """One clickable turn marker, lit when it is the previewed turn, or (nothing chosen) the last move's turn."""
        if self.chosen is not None:
            lit = (quadrant, direction) == (self.quadrant, self.direction)
        else:
            lit = self.last_turn() == (quadrant, direction)
        return Segment(f" {ARROWS[direction]} ", self._surface("marker-on" if lit else "marker"))

    def _cells(self, layout: PentagoLayout, row: int, line: int, base: Style) -> list[Segment]:
        """One line through a row of cells, the rank number in the left margin."""
        rows, marked, turning = self.shown()
        label = f"{row + 1:>2} " if line == layout.cell_h // 2 else " " * LABEL_W
        segments = [Segment(" " * (layout.left - LABEL_W), base), Segment(label, self._surface("label"))]
        fives = set(self.position.view.get("fives", ()))
        for col in range(SIZE):
            if col == 3:
                segments.append(Segment(" " * GAP_X, base))
            char = rows[row][col]
            background = self._background(row, col, marked, turning, fives)
            style = base + self._part(background)
            # An empty hole is drawn as a marble in the hole colour, like the sockets of a real board.
            marble = {"B": "black", "W": "white"}.get(char, "hole")
            segments.append(Segment(DISC[layout.size][line], style + self._part(marble)))
        return segments

    def _background(
        self, row: int, col: int, marked: set[tuple[int, int]], turning: int | None, fives: set[str]
    ) -> str:
        """The background of a cell: cursor, marked, five, turning quadrant, or the quadrant's own."""
        if self.has_focus and self.chosen is None and (row, col) == self.cursor:
            return "cursor"
        if (row, col) in marked:
            return "placed"
        premove = parse_move(self.position.premove)
        if premove is not None and premove[0] == (row, col):
            return "premove"
        if cell_name(row, col) in fives:
            return "five"
        quadrant = quadrant_of(row, col)
        if quadrant == turning:
            return "turning" if self.chosen is not None else "turned"
        return "quadrant" if quadrant in (0, 3) else "quadrant-alt"

    def _hint(self) -> str:
        """What to do next, in one line."""
        if not self.position.can_move:
            return ""
        if self.chosen is None:
            return "choose a square: arrows + Enter, or click"
        if self.quadrant is None:
            return f"{cell_name(*self.chosen)} · turn which quadrant? 1-4 or ↺ ↻ · Esc back"
        return f"{self.pending_move} · ←/→ turn · Enter play · Esc back"

    def on_focus(self) -> None:
        """Show the cursor."""
        self.refresh()

    def on_blur(self) -> None:
        """Hide the cursor."""
        self.refresh()


BOARD = BoardSpec(
    PentagoBoard, chips=((" ● ", "#0b0b0b", "#8c2f26"), (" ● ", "#f4f4f4", "#8c2f26")), syntax=move_syntax
)
"""Pentago's entry in the board registry: black and white marbles on the red board."""
