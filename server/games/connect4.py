"""Connect Four on the standard 7x6 board: bitboard rules and the Game interface around them.

A board is a Python int in John Tromp's / Pascal Pons' layout: each column takes 7 bits, bottom cell first,
so cell (col, row) is bit `col * 7 + row` with row 0 at the bottom. The seventh bit of each column is a
sentinel that is never set: it stops lines from wrapping from one column into the next, so a four is found
with two shifts and two ANDs per direction.

The module-level helpers (`has_four`, `threat_cells`, `positions_per_ply`, ...) are the one copy of the rules:
the AI imports them for its search, and `ConnectFour` wraps them in the checked game interface.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from gamenight.protocol.vocab import ReasonText
from gamenight.server.games.base import Game, IllegalMove, Outcome, ViewChanges

Bitboard = int
Column = int

COLS = 7
ROWS = 6
STRIDE = ROWS + 1
"""Bits per column: six cells and the sentinel."""
CELLS = COLS * ROWS

RED = 0
YELLOW = 1
SEAT_NAMES = ("red", "yellow")
FILES = "abcdefg"

EMPTY_CHAR = "."
DISC_CHARS = ("R", "Y")

BOTTOM: Bitboard = sum(1 << col * STRIDE for col in range(COLS))
"""The bottom cell of every column."""
BOARD: Bitboard = BOTTOM * ((1 << ROWS) - 1)
"""Every playable cell (the sentinels left out)."""
BOTTOM_CELL: tuple[Bitboard, ...] = tuple(1 << col * STRIDE for col in range(COLS))
TOP_CELL: tuple[Bitboard, ...] = tuple(1 << (col * STRIDE + ROWS - 1) for col in range(COLS))
COLUMN_MASK: tuple[Bitboard, ...] = tuple(((1 << ROWS) - 1) << col * STRIDE for col in range(COLS))
CENTRE_ORDER: tuple[Column, ...] = (3, 2, 4, 1, 5, 0, 6)
"""Columns centre first: central discs take part in more fours, so they are usually the better moves."""

# The shift that steps one cell along each line direction: up, right, up-right and down-right.
_DIRECTIONS = (1, STRIDE, STRIDE + 1, STRIDE - 1)


# -- bitboard helpers (the AI's hot path) ------------------------------------------------------------


def has_four(board: Bitboard) -> bool:
    """True if `board` holds four discs in a line in any direction."""
    for shift in _DIRECTIONS:
        pairs = board & board >> shift
        if pairs & pairs >> 2 * shift:
            return True
    return False


def four_cells(board: Bitboard) -> Bitboard:
    """Every cell of `board` that lies in a line of four of its discs (0 if there is none)."""
    cells = 0
    for shift in _DIRECTIONS:
        pairs = board & board >> shift
        starts = pairs & pairs >> 2 * shift
        cells |= starts | starts << shift | starts << 2 * shift | starts << 3 * shift
    return cells


def threat_cells(board: Bitboard, taken: Bitboard) -> Bitboard:
    """The empty cells that would complete a four for `board` (whether or not they can be played yet).

    Pascal Pons' `compute_winning_position`: for each direction, a cell with three of `board`'s discs in a
    line through it, in any of the four places the cell can take in that line. `taken` is both sides' discs,
    stacked as gravity stacks them: a vertical threat is only looked for on top of a column's discs.
    """
    found = (board << 1) & (board << 2) & (board << 3)
    for shift in (STRIDE, STRIDE + 1, STRIDE - 1):
        pair = (board << shift) & (board << 2 * shift)
        found |= pair & (board << 3 * shift)
        found |= pair & (board >> shift)
        pair = (board >> shift) & (board >> 2 * shift)
        found |= pair & (board << shift)
        found |= pair & (board >> 3 * shift)
    return found & (BOARD ^ taken)


def playable(taken: Bitboard) -> Bitboard:
    """The cell each non-full column would receive next (adding the bottom row carries up each column)."""
    return (taken + BOTTOM) & BOARD


def drop(taken: Bitboard, col: Column) -> Bitboard:
    """The cell a disc dropped into `col` lands on; 0 if the column is full."""
    return (taken + BOTTOM_CELL[col]) & COLUMN_MASK[col]


def open_columns(taken: Bitboard) -> list[Column]:
    """The columns that are not full, centre first."""
    return [col for col in CENTRE_ORDER if not taken & TOP_CELL[col]]


def column_of(cell: Bitboard) -> Column:
    """The column of a single-cell mask."""
    return (cell.bit_length() - 1) // STRIDE


def cells(mask: Bitboard) -> Iterator[tuple[int, int]]:
    """The (col, row) of every cell set in `mask`, row 0 at the bottom, in bit order."""
    while mask:
        low = mask & -mask
        yield divmod(low.bit_length() - 1, STRIDE)
        mask ^= low


def positions_per_ply(depth: int, own: Bitboard = 0, taken: Bitboard = 0) -> list[int]:
    """How many distinct positions exist after 0..`depth` plies from the empty board (OEIS A212693), or from
    the position where the side to move has `own` of the discs `taken`.

    A position is the set of discs of each colour (move order forgotten), and one in which a side has
    already made four is counted at its ply but not played on: the game is over there. Positions are
    (discs of the side to move, all discs) pairs; the side to move follows from the disc count.
    """
    layer: set[tuple[Bitboard, Bitboard]] = {(own, taken)}
    counts = [1]
    for _ in range(depth):
        following: set[tuple[Bitboard, Bitboard]] = set()
        for own, taken in layer:
            opp = own ^ taken
            for col in range(COLS):
                cell = drop(taken, col)
                if cell:
                    following.add((opp, taken | cell))
        counts.append(len(following))
        # The side that just moved owns `taken ^ own` (own is the new side to move): a four ends the game.
        layer = {(own, taken) for own, taken in following if not has_four(own ^ taken)}
    return counts


# -- states ------------------------------------------------------------------------------------------

_SEATS = (frozenset((0,)), frozenset((1,)))  # `to_move` answers, built once (asked several times a move)
_NOBODY: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class ConnectFourState:
    """A Connect Four position: each colour's discs as a bitboard, the seat to move and the moves made.

    `turn` is the seat to move (still set once the game is over, when nobody moves). `ply` counts discs.
    """

    red: Bitboard
    yellow: Bitboard
    turn: int
    ply: int

    @property
    def taken(self) -> Bitboard:
        """Every disc on the board."""
        return self.red | self.yellow

    def sides(self) -> tuple[Bitboard, Bitboard]:
        """(discs of the side to move, discs of the other side)."""
        return (self.red, self.yellow) if self.turn == RED else (self.yellow, self.red)

    def winner(self) -> int | None:
        """The seat that has made four, or None."""
        if has_four(self.red):
            return RED
        if has_four(self.yellow):
            return YELLOW
        return None

    def over(self) -> bool:
        """True once a side has four or the board is full."""
        return self.ply == CELLS or self.winner() is not None


def state_from_board(board: Sequence[str]) -> ConnectFourState:
    """A state from six rows drawn as in `ConnectFour.view` ("." empty, "R", "Y"; top row first).

    Red moves first, so the side to move follows from the counts; ValueError for a board no game reaches
    by its disc counts or with a disc floating above an empty cell.
    """
    if len(board) != ROWS or any(len(row) != COLS for row in board):
        raise ValueError(f"a board is {ROWS} rows of {COLS} cells")
    red = yellow = 0
    for index, row in enumerate(board):
        for col, char in enumerate(row):
            bit = 1 << (col * STRIDE + ROWS - 1 - index)
            if char == DISC_CHARS[RED]:
                red |= bit
            elif char == DISC_CHARS[YELLOW]:
                yellow |= bit
            elif char != EMPTY_CHAR:
                raise ValueError(f"board cells are {EMPTY_CHAR!r}, {DISC_CHARS[RED]!r} or {DISC_CHARS[YELLOW]!r}")
    taken = red | yellow
    if taken & ~(taken << 1 | BOTTOM):
        raise ValueError("a disc floats above an empty cell")
    lead = red.bit_count() - yellow.bit_count()
    if lead not in (0, 1):
        raise ValueError("red moves first: red has as many discs as yellow, or one more")
    return ConnectFourState(red, yellow, RED if lead == 0 else YELLOW, taken.bit_count())


# -- the game ----------------------------------------------------------------------------------------


def perft(state: ConnectFourState, depth: int) -> int:
    """The distinct positions `depth` plies after `state` (transpositions counted once; from the empty board
    these are OEIS A212693, the game's perft count)."""
    own, _ = state.sides()
    return positions_per_ply(depth, own, state.taken)[-1]


class ConnectFour(Game[ConnectFourState, Column]):
    """Connect Four: drop discs into seven columns; four in a line of your colour wins, a full board draws."""

    name: ClassVar[str] = "connect4"
    title: ClassVar[str] = "Connect Four"
    reasons: ClassVar[tuple[ReasonText, ...]] = (
        ReasonText("four", "four in a row"),
        ReasonText("draw", "the board filled up without a four", "the board filled up without a four"),
    )

    def seat_names(self, options: Mapping[str, Any]) -> list[str]:
        """Seat 0 plays red (and moves first), seat 1 yellow."""
        return list(SEAT_NAMES)

    def initial_state(self, options: Mapping[str, Any]) -> ConnectFourState:
        """The empty board, red to move (Connect Four has no options)."""
        self.validate_options(options)
        return ConnectFourState(0, 0, RED, 0)

    def plies_left(self, state: ConnectFourState) -> int:
        """Empty cells: every move fills one."""
        return CELLS - state.ply

    def to_move(self, state: ConnectFourState) -> frozenset[int]:
        """The one seat to move, or nobody once the game is over."""
        return _NOBODY if state.over() else _SEATS[state.turn]

    def legal_moves(self, state: ConnectFourState, seat: int) -> list[Column]:
        """The columns that are not full, centre first; empty if it is not `seat`'s turn."""
        if seat != state.turn or state.over():
            return []
        return open_columns(state.taken)

    def apply(self, state: ConnectFourState, moves: Mapping[int, Column]) -> ConnectFourState:
        """The state after the side to move drops a disc into column `moves[seat]`."""
        if state.over():
            raise IllegalMove("the game is over")
        seat = state.turn
        if seat not in moves or len(moves) != 1:
            raise IllegalMove(f"only {SEAT_NAMES[seat]} (seat {seat}) may move now")
        cell = self._landing(state, moves[seat])
        if seat == RED:
            return ConnectFourState(state.red | cell, state.yellow, YELLOW, state.ply + 1)
        return ConnectFourState(state.red, state.yellow | cell, RED, state.ply + 1)

    @staticmethod
    def _landing(state: ConnectFourState, col: Any) -> Bitboard:
        """The cell a disc dropped into `col` lands on; IllegalMove if `col` is no column or is full."""
        if isinstance(col, bool) or not isinstance(col, int):
            raise IllegalMove(f"a move is a column number, not a {type(col).__name__}")
        if not 0 <= col < COLS:
            raise IllegalMove(f"column {col} is off the board: columns are 0-{COLS - 1} (a-g)")
        cell = drop(state.taken, col)
        if not cell:
            raise IllegalMove(f"column {FILES[col]} is full")
        return cell

    def outcome(self, state: ConnectFourState) -> Outcome | None:
        """Four in a line wins ("four"); a full board without one is a draw ("draw")."""
        winner = state.winner()
        if winner is not None:
            return Outcome((winner,), "four")
        if state.ply == CELLS:
            return Outcome((), "draw")
        return None

    def parse_move(self, state: ConnectFourState, text: Any) -> Column:
        """The column a letter "a"-"g" names, any case (whether it is full is left to `apply`)."""
        if not isinstance(text, str):
            raise IllegalMove(f"a move is a column letter a-g, not a {type(text).__name__}")
        key = text.strip().lower()
        if len(key) != 1 or key not in FILES:
            shown = text if len(text) <= 12 else text[:12] + "..."
            raise IllegalMove(f"{shown!r} is not a column: a move is one letter, a to g")
        return FILES.index(key)

    def format_move(self, state: ConnectFourState, move: Column) -> str:
        """The column's letter, e.g. "d" for the centre."""
        return FILES[move]

    def view(self, state: ConnectFourState) -> dict[str, Any]:
        """The board as rows of "." / "R" / "Y" (top row first), no scores, and the winning cells if any."""
        return {
            "board": board_rows(state),
            "scores": None,
            "winning_line": winning_line(state),
        }

    def changes(self, before: ConnectFourState, after: ConnectFourState) -> ViewChanges:
        """The cells whose disc changed (one per move) and, once somebody has four, the winning line."""
        changed = (before.red ^ after.red) | (before.yellow ^ after.yellow)
        found = [
            [ROWS - 1 - row, col, _cell_char(after, 1 << (col * STRIDE + row))]
            for col in range(COLS)
            for row in range(ROWS)
            if changed >> (col * STRIDE + row) & 1
        ]
        line, was = winning_line(after), winning_line(before) if before.ply > after.ply else []
        return ViewChanges(found, {"winning_line": line} if line != was else {})


def board_rows(state: ConnectFourState) -> list[str]:
    """The board drawn one string per row, top row first, column a on the left."""
    rows = []
    for row in range(ROWS - 1, -1, -1):
        bits = [1 << (col * STRIDE + row) for col in range(COLS)]
        rows.append("".join(_cell_char(state, bit) for bit in bits))
    return rows


def winning_line(state: ConnectFourState) -> list[list[int]]:
    """The cells of the winner's four as [row, col] in `board_rows` order (row 0 on top); [] if none.

    Usually four cells; more when the winning disc completed two lines at once or made five in a row.
    """
    winner = state.winner()
    if winner is None:
        return []
    board = state.red if winner == RED else state.yellow
    return sorted([ROWS - 1 - row, col] for col, row in cells(four_cells(board)))


def _cell_char(state: ConnectFourState, bit: Bitboard) -> str:
    """How one cell is drawn: a red or yellow disc, or empty."""
    if state.red & bit:
        return DISC_CHARS[RED]
    return DISC_CHARS[YELLOW] if state.yellow & bit else EMPTY_CHAR
