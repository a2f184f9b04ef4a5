"""Othello (Reversi) on 6x6, 8x8 and 10x10 boards: bitboard rules and the Game interface around them.

A board is two Python ints, one bit per square, `sq = row * size + col`. Row 0 is rank "1" (the top
row as drawn) and col 0 is file "a", so "a1" is square 0 and "h8" is square 63 on 8x8.

The module-level helpers (`legal_mask`, `flip_mask`, `perft`, the square names) are the one copy of
the rules: the AI imports them for its search, and `Othello` wraps them in the checked game interface.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from gamenight.protocol.vocab import EventKind, OptionKind, OptionSpec, ReasonText
from gamenight.server.games.base import Game, IllegalMove, Notice, Outcome, ViewChanges

Square = int
Bitboard = int

BLACK = 0
WHITE = 1
SEAT_NAMES = ("black", "white")
SIZES = (6, 8, 10)
DEFAULT_SIZE = 8
FILES = "abcdefghij"

EMPTY_CHAR = "."
DISC_CHARS = ("B", "W")

FULL_MASK: dict[int, Bitboard] = {size: (1 << size * size) - 1 for size in SIZES}
"""Every square of a board of each size."""

# The eight directions as (row step, col step).
_DIRECTIONS = ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, -1), (1, -1), (-1, 1))


def _column(size: int, col: int) -> Bitboard:
    """Every square of one column."""
    return sum(1 << (row * size + col) for row in range(size))


def _inner_columns(size: int) -> Bitboard:
    """The squares off the left and right edges, where a sideways run may continue without wrapping."""
    return FULL_MASK[size] & ~_column(size, 0) & ~_column(size, size - 1)


def _shifts(size: int) -> tuple[tuple[int, bool], ...]:
    """The positive shift of each direction pair, and whether it moves sideways (and so can wrap)."""
    return ((1, True), (size, False), (size + 1, True), (size - 1, True))


def _ray(size: int, sq: Square, d_row: int, d_col: int) -> list[Square]:
    """The squares from `sq` (excluded) to the board's edge in one direction, nearest first."""
    row, col = divmod(sq, size)
    path = []
    row, col = row + d_row, col + d_col
    while 0 <= row < size and 0 <= col < size:
        path.append(row * size + col)
        row, col = row + d_row, col + d_col
    return path


def _rays(size: int, sq: Square) -> tuple[tuple[Bitboard, Bitboard, bool], ...]:
    """(nearest square, whole ray, ray runs to higher indices) for each ray long enough to flip along."""
    rays = []
    for d_row, d_col in _DIRECTIONS:
        path = _ray(size, sq, d_row, d_col)
        if len(path) >= 2:
            mask = sum(1 << s for s in path)
            rays.append((1 << path[0], mask, d_row * size + d_col > 0))
    return tuple(rays)


_INNER: dict[int, Bitboard] = {size: _inner_columns(size) for size in SIZES}
_SHIFTS: dict[int, tuple[tuple[int, bool], ...]] = {size: _shifts(size) for size in SIZES}
_RAYS: dict[int, tuple[tuple[tuple[Bitboard, Bitboard, bool], ...], ...]] = {
    size: tuple(_rays(size, sq) for sq in range(size * size)) for size in SIZES
}
_NAMES: dict[int, tuple[str, ...]] = {
    size: tuple(f"{FILES[sq % size]}{sq // size + 1}" for sq in range(size * size)) for size in SIZES
}
_SQUARE_OF: dict[int, dict[str, Square]] = {
    size: {name: sq for sq, name in enumerate(names)} for size, names in _NAMES.items()
}
_ANY_SIZE_NAMES = frozenset(_NAMES[max(SIZES)])
_SEAT = (frozenset((BLACK,)), frozenset((WHITE,)))  # `to_move` answers, built once (asked several times a move)
_NOBODY: frozenset[int] = frozenset()


# -- bitboard helpers (the AI's hot path) ------------------------------------------------------------


def legal_mask(own: Bitboard, opp: Bitboard, size: int) -> Bitboard:
    """The empty squares where `own` may play against `opp` on a board of `size` (one of SIZES), as a mask.

    For each direction it grows runs of `opp` discs outward from `own` discs one square at a time
    (dumb7fill), stopping as soon as every run has ended, and keeps the empty squares just past a run.
    """
    edge_free = opp & _INNER[size]
    moves = 0
    for shift, sideways in _SHIFTS[size]:
        # A sideways run may not touch the edge columns, or a shift would wrap it to the next row.
        mask = edge_free if sideways else opp
        run = mask & (own << shift)
        while run:
            moves |= run << shift
            run = mask & (run << shift)
        run = mask & (own >> shift)
        while run:
            moves |= run >> shift
            run = mask & (run >> shift)
    return moves & (FULL_MASK[size] ^ (own | opp))


def flip_mask(own: Bitboard, opp: Bitboard, sq: Square, size: int) -> Bitboard:
    """The `opp` discs that `own` flips by playing on the empty square `sq`; 0 if the move is illegal.

    Walks each ray from `sq` with precomputed masks: the run of `opp` discs flips if an `own` disc ends it.
    The caller checks that `sq` is empty (the search only asks about squares from `legal_mask`).
    """
    flips = 0
    for neighbour, ray, ascending in _RAYS[size][sq]:
        if not neighbour & opp:
            continue
        # The first square along the ray that is not an opponent's disc ends the run.
        stop = ray & ~opp
        if ascending:
            stop &= -stop
            if stop & own:
                flips |= ray & (stop - 1)
        elif stop:
            stop = 1 << (stop.bit_length() - 1)
            if stop & own:
                flips |= ray & -(stop << 1)
    return flips


def squares(mask: Bitboard) -> Iterator[Square]:
    """The squares set in `mask`, in ascending order."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def square_name(sq: Square, size: int) -> str:
    """The name of square `sq` on a `size` board, e.g. "f5"; ValueError if it is off the board."""
    if not 0 <= sq < size * size:
        raise ValueError(f"square {sq} is off the {size}x{size} board")
    return _NAMES[size][sq]


def parse_square(text: str, size: int) -> Square:
    """The square named by `text` ("F5", " f5 "); IllegalMove saying why if it names none on this board."""
    if not isinstance(text, str):
        raise IllegalMove(f"a square must be a name like 'f5', not a {type(text).__name__}")
    key = text.strip().lower()
    sq = _SQUARE_OF[size].get(key)
    if sq is not None:
        return sq
    if key in _ANY_SIZE_NAMES:
        raise IllegalMove(f"{key} is off the {size}x{size} board")
    shown = text if len(text) <= 12 else text[:12] + "..."
    last = _NAMES[size][-1]
    raise IllegalMove(f"{shown!r} is not a square name: expected a file a-{last[0]} and a rank 1-{size}, like f5")


def _perft(own: Bitboard, opp: Bitboard, size: int, depth: int, passed: bool) -> int:
    """Leaves `depth` plies below the position with `own` to move; `passed` if the last ply was a pass."""
    if depth == 0:
        return 1
    moves = legal_mask(own, opp, size)
    if not moves:
        # A pass uses up a ply; after two passes the game is over and counts as one leaf.
        return 1 if passed else _perft(opp, own, size, depth - 1, True)
    if depth == 1:
        return moves.bit_count()
    total = 0
    while moves:
        bit = moves & -moves
        moves ^= bit
        flips = flip_mask(own, opp, bit.bit_length() - 1, size)
        total += _perft(opp ^ flips, own | flips | bit, size, depth - 1, False)
    return total


def perft(state: OthelloState, depth: int) -> int:
    """The number of leaves `depth` plies below `state`, by Aart Bik's convention for Reversi perft.

    A forced pass counts as a ply, and a finished game counts as one leaf however much depth is left.
    """
    own, opp = state.sides()
    return _perft(own, opp, state.size, depth, False)


# -- states ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OthelloState:
    """An Othello position: the discs, who moves, and what the last move did.

    `turn` is the seat to move (meaningless once `over`). `passed` is the seat that had to pass right
    after the last move, or None. `last_flips` masks the discs the last move flipped; `ply` counts moves.

    `move_mask` is the mask of the squares the side to move may play, known once per position: `_settle` already
    computes it to decide passes and the game's end, and the server asks for it on every move (the checks,
    `legal` for the next mover), so it is kept rather than computed again. It is derived, not part of the
    position: it takes no part in equality, and a state built any other way (`dataclasses.replace`, a test's
    constructor call) starts with -1, "not known yet", and computes it on first use.
    """

    size: int
    black: Bitboard
    white: Bitboard
    turn: int
    over: bool
    passed: int | None
    last_flips: Bitboard
    ply: int
    known_moves: Bitboard = field(default=-1, init=False, compare=False, repr=False)

    def sides(self) -> tuple[Bitboard, Bitboard]:
        """(discs of the side to move, discs of the other side)."""
        return (self.black, self.white) if self.turn == BLACK else (self.white, self.black)

    @property
    def move_mask(self) -> Bitboard:
        """The squares the side to move may play, as a mask (0 once the game is over); computed once per state."""
        mask = self.known_moves
        if mask < 0:
            mask = 0 if self.over else legal_mask(*self.sides(), self.size)
            object.__setattr__(self, "known_moves", mask)  # a cache of a value derived from the frozen fields
        return mask

    def counts(self) -> tuple[int, int]:
        """(black discs, white discs)."""
        return self.black.bit_count(), self.white.bit_count()


def _settle(size: int, black: Bitboard, white: Bitboard, turn: int, flips: Bitboard, ply: int) -> OthelloState:
    """The state with `turn` due to move, after applying the automatic pass or the game's end."""
    own, opp = (black, white) if turn == BLACK else (white, black)
    mask = legal_mask(own, opp, size)
    if mask:
        state = OthelloState(size, black, white, turn, False, None, flips, ply)
    elif mask := legal_mask(opp, own, size):
        state = OthelloState(size, black, white, 1 - turn, False, turn, flips, ply)
    else:
        state = OthelloState(size, black, white, turn, True, None, flips, ply)
    object.__setattr__(state, "known_moves", mask)  # computed here anyway: the position's legal squares
    return state


def state_from_board(board: Sequence[str], turn: int) -> OthelloState:
    """A state from rows drawn as in `Othello.view` ("." empty, "B", "W"; row 0 first), `turn` to move.

    As after a move, a side with no move passes at once and a position where nobody can move is over.
    `ply` is taken as the number of discs beyond the starting four.
    """
    size = len(board)
    if size not in SIZES or any(len(row) != size for row in board):
        raise ValueError(f"a board is {' or '.join(f'{n}x{n}' for n in SIZES)} squares")
    if turn not in (BLACK, WHITE):
        raise ValueError(f"turn must be {BLACK} (black) or {WHITE} (white)")
    cells = "".join(board)
    if set(cells) - {EMPTY_CHAR, *DISC_CHARS}:
        raise ValueError(f"board squares are {EMPTY_CHAR!r}, {DISC_CHARS[BLACK]!r} or {DISC_CHARS[WHITE]!r}")
    black = sum(1 << sq for sq, char in enumerate(cells) if char == DISC_CHARS[BLACK])
    white = sum(1 << sq for sq, char in enumerate(cells) if char == DISC_CHARS[WHITE])
    return _settle(size, black, white, turn, 0, max(0, (black | white).bit_count() - 4))


# -- the game ----------------------------------------------------------------------------------------


class Othello(Game[OthelloState, Square]):
    """Othello: outflank the opponent's discs to turn them; the most discs when nobody can move wins."""

    name = "othello"
    title = "Othello"
    option_specs = (
        OptionSpec("size", OptionKind.INT, DEFAULT_SIZE, "board width and height", choices=SIZES, label="Board size"),
        OptionSpec(
            "first",
            OptionKind.CHOICE,
            SEAT_NAMES[BLACK],
            "the colour that moves first",
            choices=SEAT_NAMES,
            label="First to move",
        ),
    )
    reasons = (ReasonText("discs", "most discs", "equal discs"),)

    def seat_names(self, options: Mapping[str, Any]) -> list[str]:
        """Seat 0 plays black, seat 1 white."""
        return list(SEAT_NAMES)

    def initial_state(self, options: Mapping[str, Any]) -> OthelloState:
        """The four centre discs, white on the a1-h8 diagonal, and the `first` colour to move."""
        options = self.validate_options(options)
        size = options["size"]
        low, high = size // 2 - 1, size // 2
        white = 1 << (low * size + low) | 1 << (high * size + high)
        black = 1 << (low * size + high) | 1 << (high * size + low)
        return _settle(size, black, white, SEAT_NAMES.index(options["first"]), 0, 0)

    def plies_left(self, state: OthelloState) -> int:
        """Empty cells: every move fills one."""
        return state.size * state.size - (state.black | state.white).bit_count()

    def to_move(self, state: OthelloState) -> frozenset[int]:
        """The one seat to move, or nobody once the game is over."""
        return _NOBODY if state.over else _SEAT[state.turn]

    def legal_moves(self, state: OthelloState, seat: int) -> list[Square]:
        """The squares `seat` may play, ascending; empty if it is not that seat's turn."""
        if state.over or seat != state.turn:
            return []
        return list(squares(state.move_mask))

    def apply(self, state: OthelloState, moves: Mapping[int, Square]) -> OthelloState:
        """The state after the side to move plays `moves[seat]`, including any pass or end it forces."""
        if state.over:
            raise IllegalMove("the game is over")
        seat = state.turn
        if seat not in moves or len(moves) != 1:
            raise IllegalMove(f"only {SEAT_NAMES[seat]} (seat {seat}) may move now")
        sq = moves[seat]
        flips = self._flips(state, sq)
        own, opp = state.sides()
        own |= flips | 1 << sq
        opp ^= flips
        black, white = (own, opp) if seat == BLACK else (opp, own)
        return _settle(state.size, black, white, 1 - seat, flips, state.ply + 1)

    @staticmethod
    def _flips(state: OthelloState, sq: Any) -> Bitboard:
        """The discs playing `sq` flips; IllegalMove if it is not a legal square for the side to move."""
        if isinstance(sq, bool) or not isinstance(sq, int):
            raise IllegalMove(f"a move is a square number, not a {type(sq).__name__}")
        if not 0 <= sq < state.size * state.size:
            raise IllegalMove(f"square {sq} is off the {state.size}x{state.size} board")
        if (state.black | state.white) >> sq & 1:
            raise IllegalMove(f"{square_name(sq, state.size)} is already taken")
        flips = flip_mask(*state.sides(), sq, state.size)
        if not flips:
            raise IllegalMove(f"{square_name(sq, state.size)} does not outflank any {SEAT_NAMES[1 - state.turn]} disc")
        return flips

    def outcome(self, state: OthelloState) -> Outcome | None:
        """Once over: the colour with more discs wins (empty squares go to nobody); equal counts draw."""
        if not state.over:
            return None
        black, white = state.counts()
        if black == white:
            winners: tuple[int, ...] = ()
        else:
            winners = (BLACK,) if black > white else (WHITE,)
        return Outcome(winners, "discs", (black, white))

    def notices(self, before: OthelloState, after: OthelloState) -> list[Notice]:
        """A "pass" notice naming the seat that could not answer the last move."""
        if after.passed is None:
            return []
        return [Notice(EventKind.PASS, {"seat": after.passed})]

    def parse_move(self, state: OthelloState, text: str) -> Square:
        """The square a name like "f5" denotes (legality is left to `apply`)."""
        return parse_square(text, state.size)

    def format_move(self, state: OthelloState, move: Square) -> str:
        """The move's square name, e.g. "f5"."""
        return square_name(move, state.size)

    def legal_notation(self, state: OthelloState, seat: int) -> list[str]:
        """The legal squares' names straight from the move mask (every `state` message lists them)."""
        if state.over or seat != state.turn:
            return []
        names = _NAMES[state.size]
        mask, legal = state.move_mask, []
        while mask:
            low = mask & -mask
            legal.append(names[low.bit_length() - 1])
            mask ^= low
        return legal

    def view(self, state: OthelloState) -> dict[str, Any]:
        """The board as rows of "." / "B" / "W" (row 0 first), disc counts, the last pass and flips."""
        return {
            "size": state.size,
            "board": _board_rows(state),
            "scores": list(state.counts()),
            "passed": state.passed,
            "flipped": [_NAMES[state.size][sq] for sq in squares(state.last_flips)],
        }

    def changes(self, before: OthelloState, after: OthelloState) -> ViewChanges:
        """The squares whose disc changed (the new disc and the flips), the disc counts, the pass and the flips."""
        size, black, white = after.size, after.black, after.white
        changed = (before.black ^ black) | (before.white ^ white)
        cells: list[list[Any]] = []
        while changed:
            low = changed & -changed
            changed ^= low
            row, col = divmod(low.bit_length() - 1, size)
            cells.append([row, col, DISC_CHARS[0] if black & low else DISC_CHARS[1] if white & low else EMPTY_CHAR])
        keys: dict[str, Any] = {"scores": [black.bit_count(), white.bit_count()]}
        if after.passed != before.passed:
            keys["passed"] = after.passed
        if after.last_flips != before.last_flips:
            names, flips, flipped = _NAMES[size], after.last_flips, []
            while flips:
                low = flips & -flips
                flipped.append(names[low.bit_length() - 1])
                flips ^= low
            keys["flipped"] = flipped
        return ViewChanges(cells, keys)

    def transcript(self, moves: list[str]) -> str:
        """The moves run together, as Othello games are usually written: "f5d6c3..."."""
        return "".join(moves)


def _board_rows(state: OthelloState) -> list[str]:
    """The board drawn one string per row, row 0 first.

    Every move's `state` message carries the board, so rows come from a cache keyed by the row's discs:
    a game has few distinct rows, and a cached row costs two shifts instead of a loop over its squares.
    """
    size = state.size
    full = (1 << size) - 1
    black, white = state.black, state.white
    return [_row(size, black >> shift & full, white >> shift & full) for shift in range(0, size * size, size)]


@lru_cache(maxsize=1 << 16)
def _row(size: int, black: int, white: int) -> str:
    """One row of `size` squares drawn from its black and white bits (bit 0 = leftmost square)."""
    return "".join(
        DISC_CHARS[BLACK] if black >> col & 1 else DISC_CHARS[WHITE] if white >> col & 1 else EMPTY_CHAR
        for col in range(size)
    )
