"""Pentago: five in a row on a 6x6 board whose four 3x3 quadrants twist after every placement.

Rules as published (pentago.co.uk, and Irving's formal statement behind the strong solution): black
(seat 0) places a marble, then turns any one quadrant 90 degrees either way; the turn is mandatory even
when it changes nothing. A five made by placing wins at once and no quadrant is turned. After the turn:
only the mover has a five -> the mover wins; only the opponent -> the opponent wins; both -> draw. The
36th marble is placed and turned like any other; no five then -> draw.

Boards are two bitboards (black, white) with bit = row * 6 + col; row 0 is rank "1", drawn at the top,
col 0 is file "a". A quadrant turn is one dictionary lookup in a table built at import.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from gamenight.protocol.vocab import ReasonText
from gamenight.server.games.base import Game, GameError, IllegalMove, Outcome, ViewChanges

Bitboard = int
Cell = int

SIZE = 6
CELLS = SIZE * SIZE
FULL: Bitboard = (1 << CELLS) - 1
BLACK, WHITE = 0, 1
SEAT_NAMES = ("black", "white")
FILES = "abcdef"
RANKS = "123456"

# Quadrants by index: wire name and (top row, left column). "Top" and "clockwise" are as drawn, row 0 on top.
QUADRANTS = ("tl", "tr", "bl", "br")
QUADRANT_ORIGINS = ((0, 0), (0, 3), (3, 0), (3, 3))
DIRECTIONS = {True: "cw", False: "ccw"}

REASON_FIVE = "five"
REASON_FIVE_BOTH = "five_both"
REASON_FULL = "full"


def cell_name(cell: Cell) -> str:
    """The notation of a cell index: 0 -> "a1", 13 -> "b3"."""
    row, col = divmod(cell, SIZE)
    return FILES[col] + RANKS[row]


CELL_NAMES = tuple(cell_name(cell) for cell in range(CELLS))
CELL_BY_NAME = {name: cell for cell, name in enumerate(CELL_NAMES)}
QUADRANT_BY_NAME = {name: index for index, name in enumerate(QUADRANTS)}
DIRECTION_BY_NAME = {name: clockwise for clockwise, name in DIRECTIONS.items()}


def _bit(row: int, col: int) -> Bitboard:
    """The bitboard with only (row, col) set."""
    return 1 << (row * SIZE + col)


def _quadrant_mask(quadrant: int) -> Bitboard:
    """All nine cells of a quadrant."""
    top, left = QUADRANT_ORIGINS[quadrant]
    return sum(_bit(top + r, left + c) for r in range(3) for c in range(3))


def _turn_quadrant_bits(bits: Bitboard, quadrant: int, clockwise: bool) -> Bitboard:
    """Turn the marbles of `bits` (all inside `quadrant`) a quarter turn, slowly; used to build tables."""
    top, left = QUADRANT_ORIGINS[quadrant]
    turned = 0
    for r in range(3):
        for c in range(3):
            if bits & _bit(top + r, left + c):
                # Clockwise as drawn sends the top-left corner to the top-right: (r, c) -> (c, 2 - r).
                nr, nc = (c, 2 - r) if clockwise else (2 - c, r)
                turned |= _bit(top + nr, left + nc)
    return turned


def _subsets(mask: Bitboard) -> list[Bitboard]:
    """Every subset of the bits of `mask`."""
    subsets = [0]
    for bit in (1 << i for i in range(CELLS) if mask >> i & 1):
        subsets += [s | bit for s in subsets]
    return subsets


QUADRANT_MASKS: tuple[Bitboard, ...] = tuple(_quadrant_mask(q) for q in range(4))
_KEEP_MASKS: tuple[Bitboard, ...] = tuple(FULL ^ mask for mask in QUADRANT_MASKS)
# _TURNS[quadrant][clockwise] maps the 512 possible contents of a quadrant to their turned contents.
_TURNS: tuple[tuple[dict[Bitboard, Bitboard], ...], ...] = tuple(
    tuple(
        {bits: _turn_quadrant_bits(bits, q, clockwise) for bits in _subsets(QUADRANT_MASKS[q])}
        for clockwise in (False, True)
    )
    for q in range(4)
)


def rotate(board: Bitboard, quadrant: int, clockwise: bool) -> Bitboard:
    """`board` with the marbles of one quadrant turned 90 degrees (clockwise as drawn, row 0 on top)."""
    return board & _KEEP_MASKS[quadrant] | _TURNS[quadrant][clockwise][board & QUADRANT_MASKS[quadrant]]


def _line(row: int, col: int, drow: int, dcol: int) -> Bitboard:
    """The five cells from (row, col) stepping by (drow, dcol)."""
    return sum(_bit(row + i * drow, col + i * dcol) for i in range(5))


LINES5: tuple[Bitboard, ...] = (
    tuple(_line(r, c, 0, 1) for r in range(SIZE) for c in range(2))
    + tuple(_line(r, c, 1, 0) for r in range(2) for c in range(SIZE))
    + tuple(_line(r, c, 1, 1) for r in range(2) for c in range(2))
    + tuple(_line(r, c, 1, -1) for r in range(2) for c in range(4, SIZE))
)


def _starts(rows: range, cols: range) -> Bitboard:
    """The cells where a five in one direction may start."""
    return sum(_bit(r, c) for r in rows for c in cols)


# Where a five may start, per direction (step 1 along a row, 6 down a column, 7 and 5 diagonally).
_ROW_STARTS = _starts(range(SIZE), range(2))
_COLUMN_STARTS = _starts(range(2), range(SIZE))
_DIAGONAL_STARTS = _starts(range(2), range(2))
_ANTIDIAGONAL_STARTS = _starts(range(2), range(4, SIZE))


def has_five(board: Bitboard) -> bool:
    """True if the marbles of `board` include five in a row (row, column or diagonal).

    Same answer as testing the 32 masks of LINES5, about 3.5 times faster: a bit survives the shifted
    ANDs only if the four cells after it in that direction are set too, and the start masks drop runs
    that would wrap around an edge.
    """
    rows = board & board >> 1
    rows &= rows >> 2
    columns = board & board >> 6
    columns &= columns >> 12
    diagonals = board & board >> 7
    diagonals &= diagonals >> 14
    antidiagonals = board & board >> 5
    antidiagonals &= antidiagonals >> 10
    return bool(
        rows & board >> 4 & _ROW_STARTS
        or columns & board >> 24 & _COLUMN_STARTS
        or diagonals & board >> 28 & _DIAGONAL_STARTS
        or antidiagonals & board >> 20 & _ANTIDIAGONAL_STARTS
    )


def winning_cells(own: Bitboard, taken: Bitboard) -> Bitboard:
    """The empty cells (not in `taken`) where one more marble of `own` completes a five."""
    wins = 0
    for mask in LINES5:
        missing = mask & ~own
        # At most one cell missing (clearing the lowest bit leaves nothing); a complete line adds nothing.
        if missing & (missing - 1) == 0:
            wins |= missing
    return wins & ~taken


def five_cells(board: Bitboard) -> Bitboard:
    """The cells of every completed five in `board` (0 if none), for highlighting."""
    cells = 0
    for mask in LINES5:
        if mask & board == mask:
            cells |= mask
    return cells


def fives_result(black: Bitboard, white: Bitboard) -> Outcome | None:
    """The result by fives alone: both colours -> draw; one -> that seat wins; none -> None (play on).

    This is also the whole judgement right after a placement, since a five made by placing wins at once.
    """
    black_five, white_five = has_five(black), has_five(white)
    if black_five and white_five:
        return Outcome((), REASON_FIVE_BOTH)
    if black_five or white_five:
        return Outcome((BLACK if black_five else WHITE,), REASON_FIVE)
    return None


def rotation_result(black: Bitboard, white: Bitboard) -> Outcome | None:
    """The result after a quadrant turn: fives as in `fives_result`, else a full board draws."""
    result = fives_result(black, white)
    if result is None and black | white == FULL:
        return Outcome((), REASON_FULL)
    return result


_SEATS = (frozenset((0,)), frozenset((1,)))  # `to_move` answers, built once (asked several times a move)
_NOBODY: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class PentagoMove:
    """Place on `cell`, then turn `quadrant` (0-3) clockwise or not; `quadrant` None for a winning placement.

    A bare placement has `clockwise` False, so equal moves compare equal.
    """

    cell: Cell
    quadrant: int | None = None
    clockwise: bool = False

    def __post_init__(self) -> None:
        """Refuse moves that cannot exist on any board, so every PentagoMove can be formatted."""
        if not (isinstance(self.cell, int) and 0 <= self.cell < CELLS):
            raise IllegalMove(f"a cell is 0-{CELLS - 1}, not {self.cell!r}")
        if self.quadrant is None:
            if self.clockwise:
                raise IllegalMove("a placement without a rotation has no direction")
        elif not (isinstance(self.quadrant, int) and 0 <= self.quadrant < 4):
            raise IllegalMove(f"a quadrant is 0-3, not {self.quadrant!r}")

    def notation(self) -> str:
        """The wire form: "b3 tr cw", or "b3" for a placement that wins at once."""
        if self.quadrant is None:
            return CELL_NAMES[self.cell]
        return f"{CELL_NAMES[self.cell]} {QUADRANTS[self.quadrant]} {DIRECTIONS[self.clockwise]}"


# Every move object is built once: the eight rotating moves of each cell, in legal_moves order.
_ROTATING_MOVES: tuple[tuple[PentagoMove, ...], ...] = tuple(
    tuple(PentagoMove(cell, q, clockwise) for q in range(4) for clockwise in (True, False)) for cell in range(CELLS)
)
_BARE_MOVES: tuple[PentagoMove, ...] = tuple(PentagoMove(cell) for cell in range(CELLS))
# ... and their wire forms, for the legal list the seat to move gets with every move (up to 288 names).
_ROTATING_NOTATION: tuple[tuple[str, ...], ...] = tuple(tuple(m.notation() for m in ms) for ms in _ROTATING_MOVES)
_BARE_NOTATION: tuple[str, ...] = tuple(m.notation() for m in _BARE_MOVES)

_EXPECTED = (
    "expected a move like 'b3 tr cw' (cell a1-f6, quadrant tl/tr/bl/br, direction cw/ccw),"
    " or a bare 'b3' when placing there makes five"
)


@dataclass(frozen=True, slots=True)
class PentagoState:
    """A position: both bitboards, the seat to move, the result once over, moves made, cells of fives."""

    black: Bitboard
    white: Bitboard
    turn: int
    result: Outcome | None
    ply: int
    fives: Bitboard = 0

    def board_of(self, seat: int) -> Bitboard:
        """The marbles of `seat`."""
        return self.white if seat else self.black


def play(state: PentagoState, move: PentagoMove) -> PentagoState:
    """The state after `move`, trusting that it is legal (the fast path for search; `apply` checks first)."""
    mover = state.turn
    black, white = state.black, state.white
    if mover == BLACK:
        black |= 1 << move.cell
    else:
        white |= 1 << move.cell
    if move.quadrant is None:
        result = fives_result(black, white)
    else:
        black = rotate(black, move.quadrant, move.clockwise)
        white = rotate(white, move.quadrant, move.clockwise)
        result = rotation_result(black, white)
    fives = five_cells(black) | five_cells(white) if result is not None else 0
    return PentagoState(black, white, 1 - mover, result, state.ply + 1, fives)


def generate_moves(state: PentagoState) -> list[PentagoMove]:
    """The legal moves of the seat to move, in `Pentago.legal_moves` order; none once the game is over.

    Rotating an empty or symmetric quadrant repeats a position, but each such move is kept: they are
    different moves on the wire.
    """
    if state.result is not None:
        return []
    taken = state.black | state.white
    wins = winning_cells(state.board_of(state.turn), taken)
    moves: list[PentagoMove] = []
    for cell in range(CELLS):
        if not taken >> cell & 1:
            if wins >> cell & 1:
                moves.append(_BARE_MOVES[cell])
            else:
                moves.extend(_ROTATING_MOVES[cell])
    return moves


def perft(state: PentagoState, depth: int) -> int:
    """The number of move sequences `depth` moves long from `state`; a finished game counts as one leaf."""
    if depth == 0 or state.result is not None:
        return 1
    moves = generate_moves(state)
    if depth == 1:
        return len(moves)
    return sum(perft(play(state, move), depth - 1) for move in moves)


def state_from_boards(black: Bitboard, white: Bitboard, turn: int) -> PentagoState:
    """A state from two bitboards with `turn` to place, judged as just after the other seat's rotation."""
    if black & white or (black | white) & ~FULL:
        raise GameError("the two boards must be disjoint subsets of the 36 cells")
    blacks, whites = black.bit_count(), white.bit_count()
    if turn not in (BLACK, WHITE) or blacks - whites != turn:
        raise GameError(f"{blacks} black and {whites} white marbles cannot have {SEAT_NAMES[turn]} to move")
    result = rotation_result(black, white)
    fives = five_cells(black) | five_cells(white) if result is not None else 0
    return PentagoState(black, white, turn, result, blacks + whites, fives)


def parse_notation(text: Any) -> PentagoMove:
    """Read "b3 tr cw" or a bare "b3" (any case and spacing), or raise IllegalMove saying what is expected."""
    if not isinstance(text, str):
        raise IllegalMove(_EXPECTED)
    words = text.lower().split()
    if len(words) not in (1, 3) or words[0] not in CELL_BY_NAME:
        raise IllegalMove(_EXPECTED)
    cell = CELL_BY_NAME[words[0]]
    if len(words) == 1:
        return _BARE_MOVES[cell]
    quadrant, direction = QUADRANT_BY_NAME.get(words[1]), DIRECTION_BY_NAME.get(words[2])
    if quadrant is None or direction is None:
        raise IllegalMove(_EXPECTED)
    return PentagoMove(cell, quadrant, direction)


def _check_move(state: PentagoState, move: Any) -> None:
    """Raise IllegalMove unless `move` is legal for the seat to move in `state`."""
    if not isinstance(move, PentagoMove):
        raise IllegalMove(f"{move!r} is not a Pentago move")
    name = CELL_NAMES[move.cell]
    if (state.black | state.white) >> move.cell & 1:
        raise IllegalMove(f"{name} is already taken")
    wins_at_once = has_five(state.board_of(state.turn) | 1 << move.cell)
    if wins_at_once and move.quadrant is not None:
        raise IllegalMove(f"placing on {name} already makes five; send '{name}' without a rotation")
    if not wins_at_once and move.quadrant is None:
        raise IllegalMove(f"a rotation is required, e.g. '{name} tl cw'")


class Pentago(Game[PentagoState, PentagoMove]):
    """Pentago for two seats, black (moves first) and white; no options."""

    name: ClassVar[str] = "pentago"
    title: ClassVar[str] = "Pentago"
    reasons: ClassVar[tuple[ReasonText, ...]] = (
        ReasonText(REASON_FIVE, "five in a row"),
        ReasonText(REASON_FIVE_BOTH, "both made five in a row", "both made five in a row"),
        ReasonText(REASON_FULL, "the board filled up without a five", "the board filled up without a five"),
    )

    def seat_names(self, options: Mapping[str, Any]) -> list[str]:
        """Black moves first, then white."""
        return list(SEAT_NAMES)

    def initial_state(self, options: Mapping[str, Any]) -> PentagoState:
        """The empty board, black to move."""
        return PentagoState(0, 0, BLACK, None, 0)

    def plies_left(self, state: PentagoState) -> int:
        """Empty cells: every move fills one."""
        return CELLS - (state.black | state.white).bit_count()

    def to_move(self, state: PentagoState) -> frozenset[int]:
        """The seat whose turn it is, or nobody once the game is over."""
        return _NOBODY if state.result is not None else _SEATS[state.turn]

    def legal_moves(self, state: PentagoState, seat: int) -> list[PentagoMove]:
        """Every empty cell x 8 rotations (cell, then quadrant, cw first); a winning placement once, bare."""
        return generate_moves(state) if seat == state.turn else []

    def legal_notation(self, state: PentagoState, seat: int) -> list[str]:
        """The legal moves' wire forms, in `legal_moves` order, from names built once (not a move object each)."""
        if seat != state.turn or state.result is not None:
            return []
        taken = state.black | state.white
        wins = winning_cells(state.board_of(state.turn), taken)
        names: list[str] = []
        for cell in range(CELLS):
            if not taken >> cell & 1:
                if wins >> cell & 1:
                    names.append(_BARE_NOTATION[cell])
                else:
                    names.extend(_ROTATING_NOTATION[cell])
        return names

    def apply(self, state: PentagoState, moves: Mapping[int, PentagoMove]) -> PentagoState:
        """The state after the mover's move; IllegalMove if the game is over, wrong seat, or not legal."""
        if state.result is not None:
            raise IllegalMove("the game is over")
        if set(moves) != {state.turn}:
            raise IllegalMove(f"only {SEAT_NAMES[state.turn]} (seat {state.turn}) may move now")
        move = moves[state.turn]
        _check_move(state, move)
        return play(state, move)

    def outcome(self, state: PentagoState) -> Outcome | None:
        """The result once a five or a full board has ended the game."""
        return state.result

    def parse_move(self, state: PentagoState, text: str) -> PentagoMove:
        """Read the wire form "b3 tr cw" (or "b3" for a placement making five); legality is `apply`'s job."""
        return parse_notation(text)

    def format_move(self, state: PentagoState, move: PentagoMove) -> str:
        """The wire form of `move`."""
        return move.notation()

    def view(self, state: PentagoState) -> dict[str, Any]:
        """Six rows of "." / "B" / "W" (rank 1 first), no scores, and the cells of completed fives."""
        return {
            "board": [_row_text(state, row) for row in range(SIZE)],
            "scores": None,
            "fives": [CELL_NAMES[cell] for cell in range(CELLS) if state.fives >> cell & 1],
        }

    def changes(self, before: PentagoState, after: PentagoState) -> ViewChanges:
        """The cells the placement and the rotation changed, and the fives once there are any new ones."""
        changed = (before.black ^ after.black) | (before.white ^ after.white)
        cells = [
            [c // SIZE, c % SIZE, "B" if after.black >> c & 1 else "W" if after.white >> c & 1 else "."]
            for c in range(CELLS)
            if changed >> c & 1
        ]
        keys: dict[str, Any] = {}
        if after.fives != before.fives:
            keys["fives"] = [CELL_NAMES[cell] for cell in range(CELLS) if after.fives >> cell & 1]
        return ViewChanges(cells, keys)

    def transcript(self, moves: list[str]) -> str:
        """Moves joined with commas, since each move has spaces inside it."""
        return ", ".join(moves)


def _row_text(state: PentagoState, row: int) -> str:
    """One row of the board as "." / "B" / "W" characters, file a first."""
    cells = range(row * SIZE, row * SIZE + SIZE)
    return "".join("B" if state.black >> c & 1 else "W" if state.white >> c & 1 else "." for c in cells)
