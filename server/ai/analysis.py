"""Game review's engine side (issue 36): a position's value and best move at a budget, and a whole game's analysis.

`assess(game, state, budget_ms)` is the one entry point "evaluate this position at this budget, and the best
move", for every turn-based game; the server runs it position by position in the AI workers (`assess_plain`,
server/review.py queues the positions) and bench/review_bench.py times it. server/review_report.py puts the
positions' values together into the analysis of docs/review.md.

Values are win chances in [-1, 1] for the side to move (1 a sure win, 0 even, -1 a sure loss), the unit the
labels are judged in, and when known exactly something people count in:

- Othello: the final disc difference with perfect play, whenever the exact solver (the compiled kernel's on 8x8)
  finishes within the budget; otherwise the search's score, as a win chance.
- Connect Four: moves to a forced win (or loss) whenever the search proves one (the threat search ends most games
  exactly from the middle game on); otherwise the search's score, as a win chance.
- Pentago: a forced win or loss in so many moves when the search proves one, else the search's score as a win
  chance.

A search score becomes a win chance as lichess turns centipawns into winning chances: `tanh(score / (2 * scale))`
(= 2 / (1 + e^(-score / scale)) - 1) with `scale` = `SCALE_UNITS` of the game's `UNIT` (the score of a small clear
advantage, as a pawn is in chess; lichess's scale is 1 / 0.00368208 = 272 centipawns, 2.7 pawns). An exact win is
1, an exact loss -1, a draw 0.

Tron is not valued move by move: `tron_territories` gives each position's Voronoi territory per rider, the open
squares it reaches strictly before every other rider (breadth-first, all riders a layer at a time; squares two reach
at once are nobody's and stop there), with the AI's own split (`tron_ai.voronoi`) when two ride. The module is
pure: no I/O, no asyncio.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gamenight.server.ai.search import PROVEN, WIN, Limits, search
from gamenight.server.review_report import TERRITORY, TICK_SPAN, positions, reviewed, seat_to_move, ticks

SCALE_UNITS = 2.7
"""A win chance's scale in a game's `UNIT`s: lichess's 272 centipawns are 2.7 pawns."""


@dataclass(frozen=True, slots=True)
class Assessment:
    """A position's value for the side to move and its best move (wire notation; None if the game is over).

    `margin` is set when the value is exact: Othello's final disc difference, or the moves (plies) to the forced
    end in Connect Four and Pentago (None for a proven result whose length is unknown).
    """

    chance: float
    exact: bool
    best: str | None
    margin: int | None = None
    nodes: int = 0

    def to_plain(self) -> dict[str, Any]:
        """The assessment as a plain map (it crosses from the worker process as one)."""
        return {"chance": self.chance, "exact": self.exact, "best": self.best, "margin": self.margin}


def win_chance(score: int, unit: int) -> float:
    """A search score (side to move's view) as a win chance in [-1, 1], on a scale of `SCALE_UNITS` × `unit`."""
    return math.tanh(score / (2 * SCALE_UNITS * unit))


def from_search(score: int, unit: int) -> tuple[float, bool, int | None]:
    """A search core score as (win chance, exact?, plies to the end): scores at or past `PROVEN` are proven results,
    `WIN` less one point per ply to the end (search.py)."""
    if abs(score) >= PROVEN:
        return math.copysign(1.0, score), True, WIN - abs(score)
    return win_chance(score, unit), False, None


# -- each game's assessment ------------------------------------------------------------------------------------


def _othello(state: Any, budget_ms: int) -> Assessment:
    """Othello: the exact solver when the empties are few enough for the budget, else the level 5 search."""
    from gamenight.server.ai import othello_ai as ai
    from gamenight.server.games.othello import FULL_MASK, square_name

    start = time.perf_counter()
    own, opp = state.sides()
    size = state.size
    compiled = ai.KERNEL is not None and size == ai.KERNEL_SIZE
    empties = (FULL_MASK[size] ^ (own | opp)).bit_count()
    if empties <= ai.endgame_threshold(5, budget_ms, compiled) + ai.WLD_EXTRA_EMPTIES:
        deadline = start + budget_ms * ai.ENDGAME_TIME_SHARE / 1000
        solver = ai.KernelSolver(deadline) if compiled else ai.EndgameSolver(size, deadline)
        try:
            square, diff = solver.best_move(own, opp)
        except ai._OutOfTime:
            pass
        else:
            best = None if square is None else square_name(square, size)
            return Assessment(float((diff > 0) - (diff < 0)), True, best, diff, solver.nodes)
    remaining = Limits(time_ms=max(1, budget_ms - int((time.perf_counter() - start) * 1000)))
    if compiled:
        move, info = ai.kernel_search(own, opp, remaining)
    else:
        engine = ai.engine_for(size)
        move, info = search(engine, engine.position(own, opp), remaining, rng=random.Random(0))
    chance, exact, _ = from_search(info.score, ai.UNIT)
    # A proven Othello score carries the margin less the plies to the end: the margin itself is not known.
    return Assessment(chance, exact, None if move is None else square_name(move, size), None, info.nodes)


def _connect4(state: Any, budget_ms: int) -> Assessment:
    """Connect Four: the threat search; a proven result counts the plies to the fourth disc."""
    from gamenight.server.ai import connect4_ai as ai

    move, info = search(ai.ENGINE, ai.position_of(state), Limits(time_ms=budget_ms), rng=random.Random(0))
    chance, exact, plies = from_search(info.score, ai.UNIT)
    return Assessment(chance, exact, ai.notation(move), plies, info.nodes)


def _pentago(state: Any, budget_ms: int) -> Assessment:
    """Pentago: a win in one if there is one, else the search over the root's distinct moves."""
    from gamenight.server.ai import pentago_ai as ai

    pos = ai.position_of(state, state.turn)
    win = ai.winning_move(pos)
    if win is not None:
        return Assessment(1.0, True, ai.notation(win), 1, 1)
    engine = ai.PentagoEngine(ai.safe_moves(pos), pos)
    move, info = search(engine, pos, Limits(time_ms=budget_ms), rng=random.Random(0))
    chance, exact, plies = from_search(info.score, ai.UNIT)
    return Assessment(chance, exact, ai.notation(move), plies, info.nodes)


ASSESSORS: dict[str, Callable[[Any, int], Assessment]] = {
    "othello": _othello,
    "connect4": _connect4,
    "pentago": _pentago,
}
"""Each reviewed game's assessment of a position that is not over."""


def assess(game: str, state: Any, budget_ms: int) -> Assessment:
    """The value of `state` for its side to move and the best move, thinking about `budget_ms`; a finished game's
    exact result (no best move)."""
    rules = reviewed(game)
    outcome = rules.outcome(state)
    if outcome is None:
        return ASSESSORS[game](state, budget_ms)
    mover = seat_to_move(rules, state)
    if outcome.is_draw:
        return Assessment(0.0, True, None, 0)
    won = mover in outcome.winners
    scores = outcome.scores
    # Othello's margin: the mover's discs less the other's (empties to nobody, as in the exact solver).
    margin = scores[mover] - scores[1 - mover] if game == "othello" and scores else 0
    return Assessment(1.0 if won else -1.0, True, None, margin)


def assess_plain(game: str, options: dict[str, Any], moves: Sequence[str], ply: int, budget_ms: int) -> dict[str, Any]:
    """In a worker: the assessment of the position before move `ply` (0 = the start; `len(moves)` the end) as a
    plain map. Replaying the moves costs microseconds next to the search. For Tron, `ply` numbers a span of
    `TICK_SPAN` positions, and their territories come back (no budget applies)."""
    if game in TERRITORY:
        return {"territory": tron_territories(options, moves, ply * TICK_SPAN, TICK_SPAN)}
    state = positions(game, options, moves[:ply])[-1]
    return assess(game, state, budget_ms).to_plain()


# -- Tron: territory -------------------------------------------------------------------------------------------


def tron_territories(
    options: dict[str, Any], moves: Sequence[str], first: int = 0, count: int | None = None
) -> list[list[int]]:
    """Each position's territory per rider (`territory`), start to end, or `count` positions from position `first`
    (0 the start; replaying the ticks before it costs microseconds each)."""
    states = ticks("tron", options, moves)
    return [territory(state) for state in states[first : None if count is None else first + count]]


def territory(state: Any) -> list[int]:
    """The squares each seat of a Tron state reaches strictly before every other living rider (0 for a rider who
    crashed); squares two reach at once count for nobody."""
    from gamenight.server.ai import tron_ai

    grid = tron_ai.grid_of(state)
    riding = [seat for seat, alive in enumerate(grid.alive) if alive]
    counts = [0] * len(grid.alive)
    if len(riding) == 2:
        first, second = riding
        split = tron_ai.voronoi(grid.open, grid.stride, grid.heads[first], grid.heads[second])
        counts[first], counts[second] = split.first.bit_count(), split.second.bit_count()
        return counts
    owned = split_territory(grid.open, grid.stride, [grid.heads[seat] for seat in riding])
    for seat, squares in zip(riding, owned, strict=True):
        counts[seat] = squares.bit_count()
    return counts


def split_territory(free: int, stride: int, heads: Sequence[int]) -> list[int]:
    """The open squares (`free`, tron_ai's padded grid) each head reaches strictly first, a breadth-first layer of
    every head at a time: `tron_ai.voronoi` for any number of heads (squares two reach at once are nobody's)."""
    from gamenight.server.ai.tron_ai import spread

    fronts = [1 << head for head in heads]
    owned = [0] * len(heads)
    while any(fronts):
        reached = [spread(front, stride) & free for front in fronts]
        seen = twice = 0
        for squares in reached:
            twice |= seen & squares
            seen |= squares
        free &= ~seen
        fronts = [squares & ~twice for squares in reached]
        owned = [mine | new for mine, new in zip(owned, fronts, strict=True)]
    return owned
