"""Connect Four AI: a bitboard adapter for the search core, a threat evaluation, and the `greedy` bot.

Positions are `(own, taken)` pairs: the side to move's discs and every disc (Pascal Pons' representation; the
other side's discs are `own ^ taken`). The hash key `own + taken` is exact: the sentinel bit of each column
keeps the sum of a column from carrying into the next, and within a column it tells every height and
colouring apart. A move is a column number 0-6.

The search never looks at a move that loses at once: `moves` offers only the winning move when there is one,
only the block when the opponent threatens to win, and never a disc right under a cell where the opponent
would complete four. `terminal` scores a side to move that can win at once as won, one ply early.

The evaluation counts "threats": empty cells that would complete a four (an open three-in-a-line). Following
Victor Allis's rule of thumb, a threat on an odd row (1, 3, 5 from the bottom) is worth more to red, who moves
first, and one on an even row to yellow: as the board fills up, those are the ones zugzwang lets their owner
cash in. Discs in the central columns count a little, since more fours pass through them.

The rules are the bitboard helpers of `server.games.connect4`; nothing here re-implements them.
"""

from __future__ import annotations

import random
import time
from typing import Any

from gamenight.server.ai.levels import limits_for, noise_for
from gamenight.server.ai.search import WIN, search
from gamenight.server.games.connect4 import (
    BOARD,
    BOTTOM,
    BOTTOM_CELL,
    CENTRE_ORDER,
    COLUMN_MASK,
    FILES,
    Bitboard,
    Column,
    ConnectFourState,
    column_of,
    has_four,
    playable,
    threat_cells,
)

Position = tuple[Bitboard, Bitboard]
"""(discs of the side to move, every disc)."""

BOTS: dict[str, str] = {
    "greedy": "wins if it can, blocks if it must, else the centre-most column that does not let the opponent "
    "win on top (equal columns at random); no search",
}
"""The named bots this game offers."""

# -- evaluation weights --------------------------------------------------------------------------------------
GOOD_THREAT = 12
"""A threat on a row of the owner's parity (odd rows for red, even rows for yellow)."""
OTHER_THREAT = 6
"""A threat on a row of the other parity: still a cell the opponent may never fill."""
CENTRE_POINTS: tuple[tuple[Bitboard, int], ...] = (
    (COLUMN_MASK[3], 3),
    (COLUMN_MASK[2] | COLUMN_MASK[4], 2),
    (COLUMN_MASK[1] | COLUMN_MASK[5], 1),
)
"""Points per disc by column: the centre column is in the most fours, the edge columns in the fewest."""
LOST_AT_HORIZON = 50_000
"""The opponent has two cells to win on now and we can block one: lost, though not proven by search."""
UNIT = 4
"""The score of a small clear advantage (a central disc and a bit), the unit levels scale their noise by."""

ODD_ROWS: Bitboard = BOTTOM * 0b010101
"""Rows 1, 3 and 5 counted from the bottom (bit rows 0, 2, 4): red's good threat rows."""
EVEN_ROWS: Bitboard = BOTTOM * 0b101010
"""Rows 2, 4 and 6: yellow's good threat rows."""


def _low_column(mask: Bitboard) -> Column:
    """The column of the lowest set bit of `mask`."""
    return column_of(mask & -mask)


def _by_centre(mask: Bitboard) -> list[Column]:
    """The columns holding a cell of `mask`, centre first."""
    return [col for col in CENTRE_ORDER if mask & COLUMN_MASK[col]]


def candidate_cells(own: Bitboard, taken: Bitboard) -> Bitboard:
    """The cells worth playing: a win if there is one, else the forced block, else those that do not lose at once.

    Playing right under a cell where the opponent completes four hands them the win, so those cells are left
    out unless nothing else is left. With two cells to block, one is kept (the game is lost either way).
    """
    possible = playable(taken)
    wins = threat_cells(own, taken) & possible
    if wins:
        return wins & -wins
    opp_threats = threat_cells(own ^ taken, taken)
    forced = possible & opp_threats
    if forced:
        return forced & -forced
    safe = possible & ~(opp_threats >> 1)
    return safe or possible


def evaluate(own: Bitboard, taken: Bitboard) -> int:
    """The static score for the side to move (who cannot win at once here): threats by row parity, centre discs."""
    opp = own ^ taken
    opp_threats = threat_cells(opp, taken)
    urgent = opp_threats & playable(taken)
    # Two cells to block at once, or one with another of the opponent's right above it: blocking cannot save us.
    if urgent & (urgent - 1) or urgent & opp_threats >> 1:
        return -LOST_AT_HORIZON
    own_threats = threat_cells(own, taken)
    # Discs on the board tell who moved first: an even count means the side to move is red.
    own_rows, opp_rows = (ODD_ROWS, EVEN_ROWS) if taken.bit_count() % 2 == 0 else (EVEN_ROWS, ODD_ROWS)
    score = GOOD_THREAT * ((own_threats & own_rows).bit_count() - (opp_threats & opp_rows).bit_count())
    score += OTHER_THREAT * ((own_threats & opp_rows).bit_count() - (opp_threats & own_rows).bit_count())
    for mask, points in CENTRE_POINTS:
        score += points * ((own & mask).bit_count() - (opp & mask).bit_count())
    return score


# -- the engine adapter ----------------------------------------------------------------------------------------


class ConnectFourEngine:
    """The search core's adapter for (own, taken) positions (see the module docstring for the conventions)."""

    def key(self, pos: Position) -> int:
        """Pons' exact key: own + taken."""
        return pos[0] + pos[1]

    def moves(self, pos: Position) -> list[Column]:
        """The candidate columns (win, forced block, or the moves that do not lose at once), centre first."""
        return _by_centre(candidate_cells(*pos))

    def play(self, pos: Position, move: Column) -> Position:
        """The position after dropping into column `move`, the other side to move."""
        own, taken = pos
        return own ^ taken, taken | (taken + BOTTOM_CELL[move]) & COLUMN_MASK[move]

    def terminal(self, pos: Position) -> int | None:
        """Lost if the side that just moved made four, drawn on a full board, won if the side to move wins now."""
        own, taken = pos
        if has_four(own ^ taken):
            return -WIN
        if taken == BOARD:
            return 0
        if threat_cells(own, taken) & playable(taken):
            # One ply early: the search core takes a point per ply, so this equals playing the win.
            return WIN - 1
        return None

    def evaluate(self, pos: Position) -> int:
        """The static score for the side to move."""
        return evaluate(*pos)

    def order(
        self, pos: Position, moves: list[Column], hash_move: object, killers: list[Any], history: dict[Any, int]
    ) -> list[Column]:
        """Far from the horizon: the hash move, then the moves making the most threats (Pons' order)."""
        own, taken = pos

        def threats_made(col: Column) -> int:
            cell = (taken + BOTTOM_CELL[col]) & COLUMN_MASK[col]
            return threat_cells(own | cell, taken | cell).bit_count()

        ranked = sorted(moves, key=lambda col: -threats_made(col))
        if isinstance(hash_move, int) and hash_move in moves:  # NO_MOVE is not an int
            ranked.remove(hash_move)
            ranked.insert(0, hash_move)
        return ranked

    def quick(self, pos: Position) -> Column:
        """A move without search: the first candidate (a win, a block, or the centre-most safe column)."""
        return self.moves(pos)[0]


ENGINE = ConnectFourEngine()
"""The one engine: it holds no state, so every search shares it."""


def position_of(state: ConnectFourState) -> Position:
    """The engine position of a game state."""
    own, _ = state.sides()
    return own, state.taken


def notation(move: Column) -> str:
    """The wire form of a column: its letter."""
    return FILES[move]


# -- the GameAI interface --------------------------------------------------------------------------------------


def _check_turn(state: ConnectFourState, seat: int) -> Position:
    """The engine position, or ValueError if `seat` is not to move in `state`."""
    if seat != state.turn or state.over():
        raise ValueError(f"seat {seat} is not to move")
    return position_of(state)


def choose_level(
    state: ConnectFourState, seat: int, level: int, budget_ms: int, rng: random.Random
) -> tuple[Column, dict[str, Any]]:
    """The column `seat` plays at `level` (1-5) with `budget_ms` to think, and what the search found."""
    start = time.perf_counter()
    pos = _check_turn(state, seat)
    limits = limits_for(level, budget_ms)
    move, found = search(ENGINE, pos, limits, rng=rng, noise=noise_for(level, UNIT))
    info = found.to_wire(notation)
    info["ms"] = _ms(start)
    info["level"] = level
    return move, info


def choose_bot(
    state: ConnectFourState, seat: int, bot: str, budget_ms: int, rng: random.Random
) -> tuple[Column, dict[str, Any]]:
    """The column the named `bot` plays, and an info map in the common form; ValueError for an unknown bot."""
    if bot not in BOTS:
        raise ValueError(f"connect4 has no bot {bot!r}; it has {', '.join(BOTS)}")
    start = time.perf_counter()
    candidates = _by_centre(candidate_cells(*_check_turn(state, seat)))
    # Columns as central as the first (c and e, say) are equally good to the bot: the seed picks.
    distance = abs(candidates[0] - 3)
    move = rng.choice([col for col in candidates if abs(col - 3) == distance])
    info = {"depth": 0, "nodes": 1, "score": 0, "pv": [notation(move)], "ms": _ms(start), "bot": bot}
    return move, info


def quick_move(state: ConnectFourState, seat: int) -> Column:
    """An instant move without search (the server's fallback): win, block, else the centre-most safe column."""
    return ENGINE.quick(_check_turn(state, seat))


def _ms(start: float) -> int:
    """Whole milliseconds since `start`."""
    return int((time.perf_counter() - start) * 1000)


def bench_positions() -> list[tuple[str, ConnectFourEngine, Position]]:
    """Positions for bench/search.py: the empty board, an opening and a crowded middle game."""
    from gamenight.server.games.connect4 import ConnectFour

    game, positions = ConnectFour(), []
    for label, moves in (("start", ""), ("opening dcdee", "dcdee"), ("middle game", "dddcceegfbfbaa")):
        state = game.initial_state({})
        for letter in moves:
            state = game.apply(state, {state.turn: game.parse_move(state, letter)})
        positions.append((label, ENGINE, position_of(state)))
    return positions
