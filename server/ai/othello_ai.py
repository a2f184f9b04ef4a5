"""Othello AI: a bitboard Engine for the core search, a phase-weighted evaluation, an exact endgame solver, two bots.

Positions are `(own, opp, moves)`: the side to move's discs, the other side's, and the side to move's legal
squares (computed once when the position is made, since every visit needs them). A pass is the move None,
offered only when the side to move has no square but the other side has one. The hash key is the exact pair
`own << 100 | opp` (an int with no collisions, cheap for Python's dict to hash), which identifies the side to
move as well because the pair is always written mover first.

Scores are from the side to move's view. A finished game scores `±(WIN - 600 + 4 * |discs difference|)` (0 for a
draw), above every heuristic score and ranked by the margin; the search core takes one point off per ply. The
exact solver works in plain disc differences (empty squares go to nobody, as in `Othello.outcome`).

The rules are the bitboard helpers of `server.games.othello`; nothing here re-implements them. On 8x8 an optional
compiled kernel (server/ai/_othellokernel.c, issue 38) does level 5's search and solver (`KERNEL`); with the hand
weights it gets the same results, and when the fitted pattern tables ship (othello_patterns.py, `PATTERNS`) its
search scores positions with them instead. The pure-Python code, hand weights, stays as the fallback and the
reference.
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, cast

from gamenight.server.ai import othello_patterns
from gamenight.server.ai.levels import LEVELS, limits_for, noise_for, time_limit_ms
from gamenight.server.ai.search import MAX_DEPTH, TT_LIMIT, WIN, Limits, NoMove, SearchInfo, search
from gamenight.server.games.othello import (
    FULL_MASK,
    Bitboard,
    OthelloState,
    Square,
    flip_mask,
    legal_mask,
    square_name,
    squares,
)

if TYPE_CHECKING:
    from gamenight.server.ai.search import OrderHook, QuickEngine

Position = tuple[Bitboard, Bitboard, Bitboard]
"""An engine position: (side to move's discs, the other side's, the side to move's legal squares)."""
Move = Square | None
"""An engine move: a square, or None for a forced pass."""

KEY_SHIFT = 100
"""Bits of the opponent's board in a key: enough for the 10x10 board."""
GAME_OVER_BASE = WIN - 600
"""A won game scores this plus four points per disc of margin (a lost one the negative)."""
DISC_POINTS = 4
"""Points per disc of final margin in game-over scores."""
MADE_LIMIT = 50_000
"""Children an engine keeps from move ordering for `play` before it forgets them all (bounded memory)."""
UNIT = 100
"""The engine's score of a small clear advantage (about two moves of mobility), the unit of level noise."""

BOTS: dict[str, str] = {
    "classic": "plain minimax without pruning over a 3000-node budget split among children; counts discs",
    "quantum": "alpha-beta over a 3000-node budget split by the move count; weighted discs plus mobility",
}
"""The named classic bots this game offers."""

BOT_BUDGET = 3000
"""The node budget both classic bots share out from the root."""
BOT_GAME_OVER = 10_000
"""The bots' game-over scale, above any of their heuristics: classic scores ±(this + margin), quantum this × margin."""

ENDGAME_EMPTIES = {4: 10, 5: 13}
"""Empty squares at which each level solves exactly with the reference budget.

Level 5's 13 is the largest count whose slowest reference position (of 20) was solved within 70% of
1000 ms on the 2-core machine under load (bench/search.py; docs/ai.md has the figures).
"""
ENDGAME_EMPTIES_KERNEL = {5: 18}
"""`ENDGAME_EMPTIES` for the levels the compiled kernel plays (`KERNEL_LEVELS`): its solver is some 50 times as fast.

With session 3's solver (sort search, ETC, narrowed root window) the slowest of 40 self-play positions was solved
(win / draw / loss, then exact) in 0.16 s at 17 empties, 0.35 s at 18, 0.53 s at 19 and 1.7 s at 20 on the quiet
2-core machine (`python -m bench.othello_bench threshold --counts 17,18,19,20`). 19 fits 70% of 1000 ms only
quietly; 18 keeps twice the headroom, so a loaded machine (times double) still fits (docs/ai.md has the figures).
"""
ENDGAME_REFERENCE_MS = 1000
"""The budget `ENDGAME_EMPTIES` was measured for; each halving of it takes one empty off."""
WLD_EXTRA_EMPTIES = 1
"""Empty squares beyond the exact threshold at which a level still solves for win / draw / loss only."""
ENDGAME_MAX_GAIN = 4
"""The most empty squares a large budget adds to a level's solver threshold."""
ENDGAME_TIME_SHARE = 0.7
"""Share of the move's time the solver may use; if it runs out the midgame search gets the rest."""
SHALLOW_EMPTIES = 6
"""At this many empties and fewer the solver tries squares directly in parity order (no TT, no sorting)."""
LIMIT = 101
"""Beyond any final disc difference (the largest board has 100 squares)."""
SOLVER_CHECK_EVERY = 1024
"""Solver nodes between two looks at the clock."""
KERNEL_SIZE = 8
"""The one board size the compiled kernel handles (6x6 and 10x10 stay on Python)."""
KERNEL_LEVELS = frozenset({5})
"""The levels that use the compiled kernel when it is built; levels 1-4 keep their Python code and character."""


# -- the optional compiled kernel (issue 38) ---------------------------------------------------------------------


class _Kernel(Protocol):
    """`_othellokernel` (server/ai/_othellokernel.c): 8x8 moves, evaluation, level 5's search and the exact solver
    in C, with exactly this module's results (moves are squares, None a pass; a deadline < 0 is none)."""

    WIN: int
    GAME_OVER_BASE: int
    DISC_POINTS: int
    TT_LIMIT: int
    MAX_DEPTH: int

    def legal_moves(self, own: Bitboard, opp: Bitboard) -> Bitboard: ...
    def flips(self, own: Bitboard, opp: Bitboard, sq: Square) -> Bitboard: ...
    def perft(self, own: Bitboard, opp: Bitboard, depth: int) -> int: ...
    def evaluate(self, own: Bitboard, opp: Bitboard) -> int: ...
    def weights(self) -> tuple[tuple[int, ...], ...]: ...
    def pattern_evaluate(self, own: Bitboard, opp: Bitboard) -> int: ...
    def load_patterns(self, instances: tuple[tuple[int, bytes], ...], block: int, weights: bytes) -> None: ...
    def use_patterns(self, on: bool) -> bool: ...
    def search(
        self, own: Bitboard, opp: Bitboard, max_depth: int, deadline: float
    ) -> tuple[Move, int, int, int, tuple[Move, ...]]: ...
    def solve(
        self, own: Bitboard, opp: Bitboard, alpha: int, beta: int, deadline: float, fresh: bool, award: bool
    ) -> tuple[Move, int, int] | None: ...


PATTERNS: othello_patterns.PatternTable | None = None
"""The pattern tables the kernel's search uses (set when the kernel is loaded), None: the hand weights."""


def _load_kernel() -> _Kernel | None:
    """The compiled kernel, unless `GAMENIGHT_PURE_AI=1` turns it off, it was not built (no C compiler at install
    time) or its constants or evaluation weights are not this module's."""
    if os.environ.get("GAMENIGHT_PURE_AI") == "1":
        return None
    try:
        from gamenight.server.ai import _othellokernel
    except ImportError:
        return None
    kernel: _Kernel = _othellokernel
    constants = (kernel.WIN, kernel.GAME_OVER_BASE, kernel.DISC_POINTS, kernel.TT_LIMIT, kernel.MAX_DEPTH)
    if constants != (WIN, GAME_OVER_BASE, DISC_POINTS, TT_LIMIT, MAX_DEPTH):
        return None
    if kernel.weights() != weight_rows(KERNEL_SIZE):
        return None
    _load_patterns(kernel)
    return kernel


def _load_patterns(kernel: _Kernel) -> None:
    """Give the kernel the fitted pattern tables (issue 38, session 2) if the data file is there and readable; its
    search then scores leaves with them, else with level 5's hand weights (`evaluate_sides`, as the pure code)."""
    global PATTERNS
    try:
        table = othello_patterns.read_table()
        kernel.load_patterns(table.kernel_instances, table.block, table.weights.tobytes())
    except (OSError, ValueError):  # no file, not a pattern file, or tables the kernel refuses (too many instances)
        kernel.use_patterns(False)
        PATTERNS = None
        return
    PATTERNS = table


def uses_kernel(size: int, level: int) -> bool:
    """Whether `level` on a `size` board plays with the compiled kernel (it is loaded, the size and level are its)."""
    return KERNEL is not None and size == KERNEL_SIZE and level in KERNEL_LEVELS


# -- board geometry, built once per size ------------------------------------------------------------------------


def _mask(size: int, cells: list[tuple[int, int]]) -> Bitboard:
    """The squares at (row, col) pairs, as a mask."""
    return sum(1 << (row * size + col) for row, col in cells)


@dataclass(frozen=True, slots=True)
class Geometry:
    """The masks of one board size the evaluation and ordering use."""

    size: int
    full: Bitboard
    not_first_col: Bitboard
    not_last_col: Bitboard
    corners: Bitboard
    corner_zones: tuple[tuple[Bitboard, Bitboard, Bitboard], ...]
    corner_rays: tuple[tuple[Bitboard, tuple[tuple[Bitboard, ...], ...]], ...]
    edges: tuple[Bitboard, ...]
    edge_squares: Bitboard
    second_ring: Bitboard
    centre: Bitboard
    quadrants: tuple[Bitboard, ...]
    priority: tuple[Bitboard, ...]


def _corner_zone(size: int, row: int, col: int) -> tuple[Bitboard, Bitboard, Bitboard]:
    """(corner, its X square, its two C squares) for the corner at (row, col)."""
    d_row = 1 if row == 0 else -1
    d_col = 1 if col == 0 else -1
    x_square = _mask(size, [(row + d_row, col + d_col)])
    c_squares = _mask(size, [(row + d_row, col), (row, col + d_col)])
    return _mask(size, [(row, col)]), x_square, c_squares


def _corner_ray(size: int, row: int, col: int) -> tuple[Bitboard, tuple[tuple[Bitboard, ...], ...]]:
    """(corner, the squares along each of its two edges nearest first)."""
    d_row = 1 if row == 0 else -1
    d_col = 1 if col == 0 else -1
    along_row = tuple(_mask(size, [(row, col + k * d_col)]) for k in range(1, size))
    along_col = tuple(_mask(size, [(row + k * d_row, col)]) for k in range(1, size))
    return _mask(size, [(row, col)]), (along_row, along_col)


@cache
def geometry(size: int) -> Geometry:
    """The masks of a `size` board (built on first use, then shared)."""
    last = size - 1
    corner_cells = [(0, 0), (0, last), (last, 0), (last, last)]
    zones = tuple(_corner_zone(size, r, c) for r, c in corner_cells)
    near_corner = 0
    for corner, x_square, c_squares in zones:
        near_corner |= corner | x_square | c_squares
    edge_squares, second_ring, centre = _rings(size, near_corner)
    corners = _mask(size, corner_cells)
    x_squares = sum(zone[1] for zone in zones)
    c_squares = sum(zone[2] for zone in zones)
    # Moves are pre-ordered corners, edges, centre, second ring, C squares, X squares.
    priority = (corners, edge_squares, centre, second_ring, c_squares, x_squares)
    return Geometry(
        size=size,
        full=FULL_MASK[size],
        not_first_col=FULL_MASK[size] & ~_mask(size, [(r, 0) for r in range(size)]),
        not_last_col=FULL_MASK[size] & ~_mask(size, [(r, last) for r in range(size)]),
        corners=corners,
        corner_zones=zones,
        corner_rays=tuple(_corner_ray(size, r, c) for r, c in corner_cells),
        edges=_edges(size),
        edge_squares=edge_squares,
        second_ring=second_ring,
        centre=centre,
        quadrants=_quadrants(size),
        priority=priority,
    )


def _edges(size: int) -> tuple[Bitboard, Bitboard, Bitboard, Bitboard]:
    """The four edges: top row, bottom row, left column, right column."""
    last = size - 1
    return (
        _mask(size, [(0, c) for c in range(size)]),
        _mask(size, [(last, c) for c in range(size)]),
        _mask(size, [(r, 0) for r in range(size)]),
        _mask(size, [(r, last) for r in range(size)]),
    )


def _rings(size: int, near_corner: Bitboard) -> tuple[Bitboard, Bitboard, Bitboard]:
    """(the edge squares, the second ring, the centre), the first two without the corners' zones."""
    last = size - 1
    by_ring: dict[int, list[tuple[int, int]]] = {}
    for r in range(size):
        for c in range(size):
            by_ring.setdefault(min(min(r, c, last - r, last - c), 2), []).append((r, c))
    edge_squares = _mask(size, by_ring.get(0, [])) & ~near_corner
    second_ring = _mask(size, by_ring.get(1, [])) & ~near_corner
    return edge_squares, second_ring, _mask(size, by_ring.get(2, []))


def _quadrants(size: int) -> tuple[Bitboard, ...]:
    """The four quadrants: top-left, top-right, bottom-left, bottom-right."""
    half = size // 2
    cells = [(r, c) for r in range(size) for c in range(size)]
    return tuple(
        _mask(size, [(r, c) for r, c in cells if (r < half) == top and (c < half) == left])
        for top in (True, False)
        for left in (True, False)
    )


def neighbours(board: Bitboard, geo: Geometry) -> Bitboard:
    """The squares next to (in any of 8 directions) some square of `board`."""
    n = geo.size
    east = board & geo.not_last_col
    west = board & geo.not_first_col
    spread = (
        east << 1 | west >> 1 | board << n | board >> n
        | east << (n + 1) | east >> (n - 1) | west << (n - 1) | west >> (n + 1)
    )  # fmt: skip
    return spread & geo.full


def stable_edge_discs(own: Bitboard, opp: Bitboard, geo: Geometry) -> Bitboard:
    """Discs of `own` that can never be flipped because of an edge: runs from an own corner, and full edges.

    An edge square can only be flipped along its edge, so a run anchored on a corner and any full edge stay.
    """
    stable = 0
    for corner, rays in geo.corner_rays:
        if not own & corner:
            continue
        stable |= corner
        for ray in rays:
            for square in ray:
                if not own & square:
                    break
                stable |= square
    taken = own | opp
    for edge in geo.edges:
        if taken & edge == edge:
            stable |= own & edge
    return stable


# -- evaluation --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Weights:
    """The evaluation's weight of each feature at one stage of the game (points per unit of the feature)."""

    mobility: int
    frontier: int
    corner: int
    x_square: int
    c_square: int
    stable: int
    edge: int
    second_ring: int
    parity: int
    discs: int


OPENING = Weights(
    mobility=60, frontier=25, corner=700, x_square=-300, c_square=-100,
    stable=50, edge=10, second_ring=-10, parity=0, discs=-3,
)  # fmt: skip
"""Weights with the board nearly empty: mobility and quiet moves matter, discs are a liability."""
ENDING = Weights(
    mobility=40, frontier=10, corner=450, x_square=-80, c_square=-30,
    stable=70, edge=15, second_ring=-5, parity=80, discs=15,
)  # fmt: skip
"""Weights with the board nearly full: stable discs, parity and the discs themselves count more."""


def _blend(share: float) -> Weights:
    """Weights `share` of the way from OPENING (0.0) to ENDING (1.0)."""
    fields = Weights.__slots__
    return Weights(*(round(getattr(OPENING, f) + (getattr(ENDING, f) - getattr(OPENING, f)) * share) for f in fields))


@cache
def phase_weights(size: int) -> tuple[Weights, ...]:
    """The weights for each number of empty squares on a `size` board (index = empties)."""
    start = size * size - 4
    return tuple(_blend(1.0 - min(empties, start) / start) for empties in range(size * size + 1))


def weight_rows(size: int) -> tuple[tuple[int, ...], ...]:
    """`phase_weights(size)` as plain rows of ints, the fields in `Weights` order (what the kernel reports)."""
    return tuple(tuple(getattr(w, field) for field in Weights.__slots__) for w in phase_weights(size))


def evaluate_sides(own: Bitboard, opp: Bitboard, own_moves: Bitboard, geo: Geometry, table: tuple[Weights, ...]) -> int:
    """The static score of a position with `own` to move (its legal squares `own_moves`), in points."""
    empty = geo.full ^ (own | opp)
    w = table[empty.bit_count()]
    opp_moves = legal_mask(opp, own, geo.size)
    score = w.mobility * (own_moves.bit_count() - opp_moves.bit_count())
    rim = neighbours(empty, geo)
    score += w.frontier * ((opp & rim).bit_count() - (own & rim).bit_count())
    score += w.corner * ((own & geo.corners).bit_count() - (opp & geo.corners).bit_count())
    for corner, x_square, c_squares in geo.corner_zones:
        if empty & corner:
            score += w.x_square * ((own & x_square).bit_count() - (opp & x_square).bit_count())
            score += w.c_square * ((own & c_squares).bit_count() - (opp & c_squares).bit_count())
    if (own | opp) & geo.corners:
        score += w.stable * (
            stable_edge_discs(own, opp, geo).bit_count() - stable_edge_discs(opp, own, geo).bit_count()
        )
    score += w.edge * ((own & geo.edge_squares).bit_count() - (opp & geo.edge_squares).bit_count())
    score += w.second_ring * ((own & geo.second_ring).bit_count() - (opp & geo.second_ring).bit_count())
    score += w.discs * (own.bit_count() - opp.bit_count())
    if w.parity:
        score += w.parity if empty.bit_count() & 1 else -w.parity
    return score


def game_over_score(own: Bitboard, opp: Bitboard) -> int:
    """The score of a finished game for the side `own`: above every heuristic, ranked by the margin."""
    return disc_score(own.bit_count() - opp.bit_count())


def disc_score(diff: int) -> int:
    """The engine score of a known final disc difference (what `game_over_score` gives for it)."""
    if diff > 0:
        return GAME_OVER_BASE + DISC_POINTS * diff
    if diff < 0:
        return -GAME_OVER_BASE + DISC_POINTS * diff
    return 0


KERNEL = _load_kernel()
"""The compiled kernel in use, or None: the pure-Python code (read once, at import; `GAMENIGHT_PURE_AI=1` turns it
off). Level 5 on 8x8 (`uses_kernel`) hands its search and its endgame solver to it; tests set it to None for the pure
path."""


# -- the Engine adapter ------------------------------------------------------------------------------------------


def _bits_in_priority(mask: Bitboard, priority: tuple[Bitboard, ...]) -> list[Move]:
    """The squares of `mask` as engine moves, corners first and X squares last (see `Geometry.priority`)."""
    found: list[Move] = []
    for group in priority:
        part = mask & group
        while part:
            low = part & -part
            found.append(low.bit_length() - 1)
            part ^= low
    return found


class OthelloEngine:
    """The search core's view of Othello on one board size (see the module docstring for the conventions)."""

    def __init__(self, size: int) -> None:
        """An engine for `size` x `size` boards."""
        self.size = size
        self.geo = geometry(size)
        self.table = phase_weights(size)
        # Children made while ordering moves, kept for `play`: the ordering computes exactly the child's
        # legal squares (the opponent's replies), the most expensive part of making a child.
        self._made: dict[tuple[Bitboard, Bitboard, Square], Position] = {}

    def position(self, own: Bitboard, opp: Bitboard) -> Position:
        """The engine position with `own` to move."""
        return own, opp, legal_mask(own, opp, self.size)

    def key(self, pos: Position) -> int:
        """The exact pair of boards as one int, mover first."""
        return pos[0] << KEY_SHIFT | pos[1]

    def moves(self, pos: Position) -> list[Move]:
        """The legal squares corners first; [None] for a forced pass; [] once the game is over."""
        own, opp, mask = pos
        if mask:
            return _bits_in_priority(mask, self.geo.priority)
        return [None] if legal_mask(opp, own, self.size) else []

    def play(self, pos: Position, move: Move) -> Position:
        """The position after `move` (None passes), the other side to move."""
        own, opp, _ = pos
        size = self.size
        if move is None:
            return opp, own, legal_mask(opp, own, size)
        made = self._made.get((own, opp, move))
        if made is not None:
            return made
        flips = flip_mask(own, opp, move, size)
        own |= flips | 1 << move
        opp ^= flips
        return opp, own, legal_mask(opp, own, size)

    def terminal(self, pos: Position) -> int | None:
        """The game-over score once neither side can move, else None."""
        own, opp, mask = pos
        if mask or legal_mask(opp, own, self.size):
            return None
        return game_over_score(own, opp)

    def evaluate(self, pos: Position) -> int:
        """The phase-weighted static score for the side to move."""
        return evaluate_sides(pos[0], pos[1], pos[2], self.geo, self.table)

    def order(
        self,
        pos: Position,
        moves: list[Move],
        hash_move: Move | NoMove,
        killers: list[Move | NoMove],
        history: dict[Move, int],
    ) -> list[Move]:
        """Hash move, then a wipe-out or corner, then fewest replies for the opponent (fastest first)."""
        own, opp, _ = pos
        size = self.size
        corners = self.geo.corners
        made = self._made
        if len(made) > MADE_LIMIT:
            made.clear()
        keyed = []
        for move in moves:
            if move is None or move == hash_move:
                keyed.append((-1_000_000, move))
                continue
            flips = flip_mask(own, opp, move, size)
            new_own = own | flips | 1 << move
            new_opp = opp ^ flips
            if not new_opp:
                keyed.append((-500_000, move))
                continue
            replies = legal_mask(new_opp, new_own, size)
            made[own, opp, move] = (new_opp, new_own, replies)
            rank = replies.bit_count() * 16 - history.get(move, 0) // 64
            if 1 << move & corners:
                rank -= 64
            if move in killers:
                rank -= 8
            keyed.append((rank, move))
        keyed.sort(key=lambda pair: pair[0])
        return [move for _, move in keyed]

    def quick(self, pos: Position) -> Move:
        """A move without search: the first by square priority (a corner if there is one)."""
        found = self.moves(pos)
        return found[0] if found else None


@cache
def engine_for(size: int) -> OthelloEngine:
    """The shared engine for a board size (engines hold only constant tables)."""
    return OthelloEngine(size)


if TYPE_CHECKING:
    # The adapter against the search core's protocols, hooks included (checked by mypy, never run).
    _ENGINE: QuickEngine[Position, Move] = OthelloEngine(8)
    _ORDER: OrderHook[Position, Move] = OthelloEngine(8)


# -- exact endgame solver ----------------------------------------------------------------------------------------


class _OutOfTime(Exception):
    """The solver's deadline passed; its result is unknown."""


class EndgameSolver:
    """Perfect play to the end by negamax alpha-beta on the final disc difference (empties go to nobody).

    Many empties: legal moves from the bitboards, fastest-first ordering (fewest opponent replies, corners
    early), null-window re-searches and a transposition table of bounds. Few empties: each empty square is
    tried directly (cheaper than generating the move mask), those in quadrants with an odd number of
    empties first (parity), and the last square is played out without recursion.
    """

    def __init__(self, size: int, deadline: float | None = None) -> None:
        """A solver for `size` boards that gives up (raising `_OutOfTime`) once `deadline` has passed."""
        self.size = size
        self.geo = geometry(size)
        self.deadline = deadline
        self.nodes = 0
        self.next_check = SOLVER_CHECK_EVERY
        self.tt: dict[int, tuple[int, int]] = {}

    def solve(self, own: Bitboard, opp: Bitboard, alpha: int = -LIMIT, beta: int = LIMIT) -> int:
        """The exact final disc difference for `own` to move, if it lies within (alpha, beta) (else a bound)."""
        empty = self.geo.full ^ (own | opp)
        return self._search(own, opp, empty, empty.bit_count(), alpha, beta, False)

    def best_move(
        self, own: Bitboard, opp: Bitboard, alpha: int = -LIMIT, beta: int = LIMIT
    ) -> tuple[Square | None, int]:
        """The best square for `own` to move and the disc difference it leads to (None: no move).

        With the default window the difference is exact. With a narrow one, e.g. (-1, 1) for a win / draw /
        loss answer, it is exact only inside the window and a bound outside; the first move found at or
        above `beta` is returned at once.
        """
        moves = legal_mask(own, opp, self.size)
        if not moves:
            return None, self.solve(own, opp, alpha, beta)
        empty = self.geo.full ^ (own | opp)
        count = empty.bit_count()
        best_sq, best = None, -LIMIT
        for sq, new_own, new_opp in self._fastest_first(own, opp, moves):
            rest = empty ^ 1 << sq
            floor = max(alpha, best)
            if best_sq is None:
                score = -self._search(new_opp, new_own, rest, count - 1, -beta, -floor, False)
            else:
                score = -self._search(new_opp, new_own, rest, count - 1, -floor - 1, -floor, False)
                if floor < score < beta:
                    score = -self._search(new_opp, new_own, rest, count - 1, -beta, -floor, False)
            if best_sq is None or score > best:
                best_sq, best = sq, score
                if best >= beta:
                    break
        return best_sq, best

    def _tick(self) -> None:
        """Look at the clock now and then."""
        self.next_check = self.nodes + SOLVER_CHECK_EVERY
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            raise _OutOfTime

    def _search(
        self, own: Bitboard, opp: Bitboard, empty: Bitboard, count: int, alpha: int, beta: int, passed: bool
    ) -> int:
        """Negamax over the `count` empty squares in `empty`, fail-soft within (alpha, beta)."""
        if count <= SHALLOW_EMPTIES:
            return self._shallow(own, opp, empty, count, alpha, beta, passed)
        self.nodes += 1
        if self.nodes >= self.next_check:
            self._tick()
        moves = legal_mask(own, opp, self.size)
        if not moves:
            if passed:
                return own.bit_count() - opp.bit_count()
            return -self._search(opp, own, empty, count, -beta, -alpha, True)
        key = own << KEY_SHIFT | opp
        bounds = self.tt.get(key)
        if bounds is not None:
            lower, upper = bounds
            if lower >= beta or lower == upper:
                return lower
            if upper <= alpha:
                return upper
            alpha, beta = max(alpha, lower), min(beta, upper)
        original_alpha = alpha
        best = -LIMIT
        first = True
        for sq, new_own, new_opp in self._fastest_first(own, opp, moves):
            rest = empty ^ 1 << sq
            if first:
                score = -self._search(new_opp, new_own, rest, count - 1, -beta, -alpha, False)
                first = False
            else:
                score = -self._search(new_opp, new_own, rest, count - 1, -alpha - 1, -alpha, False)
                if alpha < score < beta:
                    score = -self._search(new_opp, new_own, rest, count - 1, -beta, -alpha, False)
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        self._store(key, bounds, best, original_alpha, beta)
        return best

    def _store(self, key: int, bounds: tuple[int, int] | None, best: int, alpha: int, beta: int) -> None:
        """Narrow the stored bounds of a node by what a search within (alpha, beta) proved."""
        lower, upper = bounds if bounds is not None else (-LIMIT, LIMIT)
        if best <= alpha:
            upper = min(upper, best)
        elif best >= beta:
            lower = max(lower, best)
        else:
            lower = upper = best
        self.tt[key] = (lower, upper)

    def _fastest_first(self, own: Bitboard, opp: Bitboard, moves: Bitboard) -> list[tuple[Square, Bitboard, Bitboard]]:
        """(square, new own, new opp) for each move, fewest opponent replies first (a corner counts 1.5 less)."""
        size = self.size
        corners = self.geo.corners
        children = []
        while moves:
            bit = moves & -moves
            moves ^= bit
            sq = bit.bit_length() - 1
            flips = flip_mask(own, opp, sq, size)
            new_own = own | flips | bit
            new_opp = opp ^ flips
            rank = legal_mask(new_opp, new_own, size).bit_count() * 4
            if bit & corners:
                rank -= 6
            children.append((rank, sq, new_own, new_opp))
        children.sort(key=_first)
        return [child[1:] for child in children]

    def _shallow(
        self, own: Bitboard, opp: Bitboard, empty: Bitboard, count: int, alpha: int, beta: int, passed: bool
    ) -> int:
        """The same negamax near the end: every empty square tried in parity order, no move generation."""
        self.nodes += 1
        if count == 1:
            return self._last_square(own, opp, empty)
        size = self.size
        best = -LIMIT
        moved = False
        for sq in self._parity_order(empty):
            flips = flip_mask(own, opp, sq, size)
            if not flips:
                continue
            moved = True
            bit = 1 << sq
            score = -self._shallow(opp ^ flips, own | flips | bit, empty ^ bit, count - 1, -beta, -alpha, False)
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        if moved:
            return best
        if passed:
            return own.bit_count() - opp.bit_count()
        return -self._shallow(opp, own, empty, count, -beta, -alpha, True)

    def _parity_order(self, empty: Bitboard) -> list[Square]:
        """The empty squares, those in quadrants holding an odd number of empties first."""
        odd: list[Square] = []
        even: list[Square] = []
        for quadrant in self.geo.quadrants:
            part = empty & quadrant
            if not part:
                continue
            target = odd if part.bit_count() & 1 else even
            while part:
                low = part & -part
                target.append(low.bit_length() - 1)
                part ^= low
        return odd + even

    def _last_square(self, own: Bitboard, opp: Bitboard, empty: Bitboard) -> int:
        """The final difference with one empty square: the mover plays it, else the opponent, else nobody."""
        sq = empty.bit_length() - 1
        diff = own.bit_count() - opp.bit_count()
        flips = flip_mask(own, opp, sq, self.size).bit_count()
        if flips:
            return diff + 2 * flips + 1
        flips = flip_mask(opp, own, sq, self.size).bit_count()
        if flips:
            return diff - 2 * flips - 1
        return diff


def _first(item: tuple[int, ...]) -> int:
    """The first field of a tuple (a sort key)."""
    return item[0]


# -- choosing a move ---------------------------------------------------------------------------------------------


def endgame_threshold(level: int, budget_ms: int, compiled: bool = False) -> int:
    """Empty squares at which `level` solves exactly with `budget_ms` per move (0: never); `compiled`: with the
    kernel's solver (`ENDGAME_EMPTIES_KERNEL`).

    The solver's time roughly doubles per extra empty square, so each doubling of the budget adds one
    (rounded down, so a smaller budget loses a whole square), at most `ENDGAME_MAX_GAIN` over the base.
    """
    base = (ENDGAME_EMPTIES_KERNEL if compiled else ENDGAME_EMPTIES).get(level, 0)
    if not base:
        return 0
    shift = math.floor(math.log2(max(budget_ms, 1) / ENDGAME_REFERENCE_MS))
    return max(0, base + min(shift, ENDGAME_MAX_GAIN))


def _wire(size: int) -> Callable[[Move], str]:
    """A formatter of engine moves as wire strings (a pass is "pass")."""

    def fmt(move: Move) -> str:
        return "pass" if move is None else square_name(move, size)

    return fmt


def _check_turn(state: OthelloState, seat: int) -> None:
    """ValueError unless `seat` is to move in `state`."""
    if state.over or seat != state.turn:
        raise ValueError(f"seat {seat} is not to move")


def choose_level(
    state: OthelloState, seat: int, level: int, budget_ms: int, rng: random.Random
) -> tuple[Square, dict[str, Any]]:
    """The move `seat` (to move in `state`) plays at `level` with `budget_ms`, and how it was found."""
    _check_turn(state, seat)
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(map(str, LEVELS))}, not {level!r}")
    own, opp = state.sides()
    move, info = _choose_level(state.size, own, opp, level, budget_ms, rng)
    # Never a pass: Othello passes for a side with no square itself, so the side to move always has one.
    return cast(Square, move), info


def choose_bot(
    state: OthelloState, seat: int, bot: str, budget_ms: int, rng: random.Random
) -> tuple[Square, dict[str, Any]]:
    """The move `seat` (to move in `state`) plays as the named `bot`, and how it was found.

    The bots have a fixed node budget, so `budget_ms` is not used; ValueError for a bot not in `BOTS`.
    """
    _check_turn(state, seat)
    own, opp = state.sides()
    return _choose_bot(state.size, own, opp, bot, rng)


def quick_move(state: OthelloState, seat: int) -> Square:
    """An instant move without search (for the server's fallback): the best by one ply of static evaluation."""
    _check_turn(state, seat)
    engine = engine_for(state.size)
    pos = engine.position(*state.sides())
    # Never a pass: Othello passes for a side with no square itself, so the side to move always has one.
    return cast(Square, max(engine.moves(pos), key=lambda move: -engine.evaluate(engine.play(pos, move))))


def _choose_level(
    size: int, own: Bitboard, opp: Bitboard, level: int, budget_ms: int, rng: random.Random
) -> tuple[Move, dict[str, Any]]:
    """A level's move: the endgame solver near the end if the level has one, else (or if it is late) search."""
    start = time.perf_counter()
    limits = limits_for(level, budget_ms)
    time_ms = time_limit_ms(level, budget_ms)  # limits.time_ms, known to be set
    empties = (FULL_MASK[size] ^ (own | opp)).bit_count()
    compiled = uses_kernel(size, level)
    exact_from = endgame_threshold(level, budget_ms, compiled)
    if exact_from and empties <= exact_from + WLD_EXTRA_EMPTIES:
        deadline = start + time_ms * ENDGAME_TIME_SHARE / 1000
        solved = _solve_in_time(size, own, opp, deadline, exact=empties <= exact_from, compiled=compiled)
        if solved is not None:
            move, info = solved
            info["ms"] = int((time.perf_counter() - start) * 1000)
            info["level"] = level
            return move, info
    spent = int((time.perf_counter() - start) * 1000)
    remaining = Limits(time_ms=max(1, time_ms - spent), depth=limits.depth)
    noise = noise_for(level, UNIT)
    if compiled and not noise:
        move, found = kernel_search(own, opp, remaining)
    else:
        engine = engine_for(size)
        move, found = search(engine, engine.position(own, opp), remaining, rng=rng, noise=noise)
    info = found.to_wire(_wire(size))
    info["ms"] = int((time.perf_counter() - start) * 1000)
    info["level"] = level
    return move, info


def kernel_search(own: Bitboard, opp: Bitboard, limits: Limits) -> tuple[Move, SearchInfo[Move]]:
    """`search` over `engine_for(8)` without noise, run by the compiled kernel: the same move and info, faster, with
    the hand weights; with the pattern tables loaded (`PATTERNS`) the same search scores its leaves with them."""
    assert KERNEL is not None, "kernel_search needs the compiled kernel"
    start = time.perf_counter()
    deadline = -1.0 if limits.time_ms is None else start + limits.time_ms / 1000
    depth = MAX_DEPTH if limits.depth is None else max(1, limits.depth)
    move, score, done, nodes, pv = KERNEL.search(own, opp, depth, deadline)
    return move, SearchInfo(done, nodes, score, pv, int((time.perf_counter() - start) * 1000))


class KernelSolver:
    """`EndgameSolver.best_move` (8x8) by the compiled kernel, with the same values and the same deadline rule."""

    def __init__(self, deadline: float | None = None) -> None:
        """A solver that gives up (raising `_OutOfTime`) once `deadline` has passed; its table starts empty."""
        assert KERNEL is not None, "KernelSolver needs the compiled kernel"
        self.kernel = KERNEL
        self.deadline = -1.0 if deadline is None else deadline
        self.nodes = 0
        self.fresh = True

    def best_move(
        self, own: Bitboard, opp: Bitboard, alpha: int = -LIMIT, beta: int = LIMIT
    ) -> tuple[Square | None, int]:
        """As `EndgameSolver.best_move`; later calls reuse the table (its bounds stay true for any window)."""
        found = self.kernel.solve(own, opp, alpha, beta, self.deadline, self.fresh, False)
        self.fresh = False
        if found is None:
            raise _OutOfTime
        move, diff, nodes = found
        self.nodes += nodes
        return move, diff


def _solve_in_time(
    size: int, own: Bitboard, opp: Bitboard, deadline: float, exact: bool, compiled: bool = False
) -> tuple[Move, dict[str, Any]] | None:
    """The solver's move and info if it settles the game before `deadline`, else None (search instead).

    First a win / draw / loss pass (a null window around 0, several times faster than an exact solve);
    then, if `exact`, the exact margin with the table the first pass filled. A lost position without an
    exact answer returns None: the midgame search then picks the most stubborn-looking move. `compiled`: the
    kernel's solver (8x8).
    """
    solver: EndgameSolver | KernelSolver = KernelSolver(deadline) if compiled else EndgameSolver(size, deadline)
    try:
        move, diff = solver.best_move(own, opp, -1, 1)
    except _OutOfTime:
        return None
    solved_exactly = False
    if exact:
        try:
            move, diff = solver.best_move(own, opp)
            solved_exactly = True
        except _OutOfTime:
            pass
    if diff < 0 and not solved_exactly:
        return None
    empties = (FULL_MASK[size] ^ (own | opp)).bit_count()
    info = SearchInfo(empties, solver.nodes, disc_score(diff), (move,), 0).to_wire(_wire(size))
    return move, info


# -- the named bots ----------------------------------------------------------------------------------------------


class _Counter:
    """Counts the nodes a bot visits (so tests can check its budget)."""

    __slots__ = ("leaves", "nodes")

    def __init__(self) -> None:
        """Nothing counted yet."""
        self.nodes = 0
        self.leaves = 0


def classic_value(own: Bitboard, opp: Bitboard, size: int, budget: int, counter: _Counter) -> int:
    """The `classic` bot's minimax value for `own` to move, the node's share of the budget being `budget`.

    No pruning: every child gets `budget // children`; a node whose children would get nothing is a leaf
    scored by the disc difference. A finished game scores beyond every disc difference.
    """
    counter.nodes += 1
    moves = legal_mask(own, opp, size)
    if not moves:
        if not legal_mask(opp, own, size):
            return _bot_game_over(own, opp)
        return -classic_value(opp, own, size, budget, counter)
    share = budget // moves.bit_count()
    if share < 1:
        counter.leaves += 1
        return own.bit_count() - opp.bit_count()
    best = -BOT_GAME_OVER * 2
    for sq in squares(moves):
        flips = flip_mask(own, opp, sq, size)
        best = max(best, -classic_value(opp ^ flips, own | flips | 1 << sq, size, share, counter))
    return best


def _bot_game_over(own: Bitboard, opp: Bitboard) -> int:
    """A finished game for the classic bot: a win above and a loss below every disc difference."""
    diff = own.bit_count() - opp.bit_count()
    if diff > 0:
        return BOT_GAME_OVER + diff
    if diff < 0:
        return -BOT_GAME_OVER + diff
    return 0


def classic_move(
    own: Bitboard, opp: Bitboard, size: int, rng: random.Random, budget: int = BOT_BUDGET
) -> tuple[Square, int, _Counter]:
    """The `classic` bot's square, its value and the nodes it looked at; equal values are broken by `rng`."""
    counter = _Counter()
    counter.nodes += 1
    moves = list(squares(legal_mask(own, opp, size)))
    share = budget // len(moves)
    scored = []
    for sq in moves:
        flips = flip_mask(own, opp, sq, size)
        new_own, new_opp = own | flips | 1 << sq, opp ^ flips
        if share < 1:
            counter.leaves += 1
            value = new_own.bit_count() - new_opp.bit_count()
        else:
            value = -classic_value(new_opp, new_own, size, share, counter)
        scored.append((value, sq))
    best = max(value for value, _ in scored)
    return rng.choice([sq for value, sq in scored if value == best]), best, counter


QUANTUM_CORNER = 4
QUANTUM_EDGE = 2
"""How many discs a corner and an edge square count for in the quantum bot's evaluation."""


@cache
def _quantum_masks(size: int) -> tuple[Bitboard, Bitboard]:
    """(corners, edge squares other than corners) of a `size` board."""
    geo = geometry(size)
    rim = geo.edges[0] | geo.edges[1] | geo.edges[2] | geo.edges[3]
    return geo.corners, rim & ~geo.corners


def quantum_evaluate(own: Bitboard, opp: Bitboard, size: int) -> int:
    """Weighted discs (corners 4, edges 2, others 1) plus the mobility difference, for `own` to move."""
    corners, edges = _quantum_masks(size)

    def weight(board: Bitboard) -> int:
        return (
            board.bit_count()
            + (QUANTUM_CORNER - 1) * (board & corners).bit_count()
            + (QUANTUM_EDGE - 1) * (board & edges).bit_count()
        )

    mobility = legal_mask(own, opp, size).bit_count() - legal_mask(opp, own, size).bit_count()
    return weight(own) - weight(opp) + mobility


def _quantum_children(
    own: Bitboard, opp: Bitboard, moves: Bitboard, size: int, rng: random.Random
) -> list[tuple[Square, Bitboard, Bitboard]]:
    """(square, new own, new opp) by the discs each move flips, most first; equal counts in `rng`'s order."""
    children: list[tuple[int, float, Square, Bitboard, Bitboard]] = []
    for sq in squares(moves):
        flips = flip_mask(own, opp, sq, size)
        children.append((flips.bit_count(), rng.random(), sq, own | flips | 1 << sq, opp ^ flips))
    children.sort(key=lambda child: (-child[0], child[1]))
    return [child[2:] for child in children]


def quantum_value(
    own: Bitboard, opp: Bitboard, size: int, budget: int, alpha: int, beta: int, rng: random.Random,
    counter: _Counter,
) -> int:  # fmt: skip
    """The `quantum` bot's alpha-beta value for `own` to move with `budget` nodes to share among the children."""
    counter.nodes += 1
    moves = legal_mask(own, opp, size)
    if not moves:
        if not legal_mask(opp, own, size):
            return BOT_GAME_OVER * (own.bit_count() - opp.bit_count())
        return -quantum_value(opp, own, size, budget, -beta, -alpha, rng, counter)
    share = budget // moves.bit_count()
    if share < 1:
        counter.leaves += 1
        return quantum_evaluate(own, opp, size)
    best = -BOT_GAME_OVER * 200
    for _, new_own, new_opp in _quantum_children(own, opp, moves, size, rng):
        score = -quantum_value(new_opp, new_own, size, share, -beta, -alpha, rng, counter)
        if score > best:
            best = score
            alpha = max(alpha, score)
            if alpha >= beta:
                break
    return best


def quantum_move(
    own: Bitboard, opp: Bitboard, size: int, rng: random.Random, budget: int = BOT_BUDGET
) -> tuple[Square, int, _Counter]:
    """The `quantum` bot's square, its value and the nodes it looked at."""
    counter = _Counter()
    counter.nodes += 1
    moves = legal_mask(own, opp, size)
    share = budget // moves.bit_count()
    best_sq, best = -1, -BOT_GAME_OVER * 200  # -1: no square yet (there is at least one move)
    for sq, new_own, new_opp in _quantum_children(own, opp, moves, size, rng):
        if share < 1:
            counter.leaves += 1
            score = -quantum_evaluate(new_opp, new_own, size)
        else:
            score = -quantum_value(new_opp, new_own, size, share, -BOT_GAME_OVER * 200, -best, rng, counter)
        if best_sq < 0 or score > best:
            best_sq, best = sq, score
    return best_sq, best, counter


_BOT_MOVES: dict[str, Callable[[Bitboard, Bitboard, int, random.Random], tuple[Square, int, _Counter]]] = {
    "classic": classic_move,
    "quantum": quantum_move,
}


def _choose_bot(size: int, own: Bitboard, opp: Bitboard, bot: str, rng: random.Random) -> tuple[Square, dict[str, Any]]:
    """A named bot's move and an info map in the common form."""
    if bot not in _BOT_MOVES:
        raise ValueError(f"othello has no bot {bot!r}; it has {', '.join(BOTS)}")
    start = time.perf_counter()
    sq, value, counter = _BOT_MOVES[bot](own, opp, size, rng)
    info: dict[str, Any] = {
        "depth": 0,
        "nodes": counter.nodes,
        "score": value,
        "pv": [square_name(sq, size)],
        "ms": int((time.perf_counter() - start) * 1000),
        "bot": bot,
    }
    return sq, info
