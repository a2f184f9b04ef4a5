"""The one game-tree search every AI uses: iterative-deepening alpha-beta (PVS) over a small Engine adapter.

A game plugs in through an `Engine` (positions, moves, a static evaluation, a hash key); `search` does the
rest: negamax with alpha-beta and principal-variation (null-window) re-searches, a transposition table,
hash move / killer / history ordering, and a deadline checked every `CHECK_EVERY` nodes (or the engine's own
`check_every`). The answer is always the best move of the last fully completed depth, so any limit gives a
legal move.

Scores are integers from the point of view of the side to move. `terminal` scores at or above `PROVEN`
(= WIN - 1000) are proven wins; the core takes one point off per ply from the root so the shortest win (and
the longest loss) is preferred. The module is pure: no I/O and no global state.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Generic, Protocol, TypeVar, overload

WIN = 10**6
"""The scale of a won game; an engine's exact game-over scores live in [PROVEN, WIN] (and their negatives)."""
PROVEN = WIN - 1000
"""Scores at or above this are proven wins (at or below -PROVEN proven losses), whatever the ply."""
INFINITY = 2 * WIN
"""Beyond every score: the open window's bounds."""

MAX_DEPTH = 64
"""The deepest iteration when no depth limit is given (a timer or node limit stops the search first)."""
TT_LIMIT = 300_000
"""Entries a transposition table may hold; past this only known keys are overwritten (bounded memory)."""
CHECK_EVERY = 128
"""Nodes between two looks at the clock and the node limit."""
NEXT_ITERATION_SHARE = 0.5
"""Do not start a new iteration after this share of the time is spent: it would almost surely be cut off."""

# Transposition table flags: what the stored score is relative to the true value.
EXACT, LOWER, UPPER = 0, 1, 2

PosT = TypeVar("PosT")
"""An engine's position type (whatever the adapter likes; tuples are fastest)."""
MoveT = TypeVar("MoveT", bound=Hashable)
"""An engine's move type: hashable and comparable with `==` (moves key the history table and root scores)."""
PosT_contra = TypeVar("PosT_contra", contravariant=True)
MoveT_co = TypeVar("MoveT_co", bound=Hashable, covariant=True)

TTEntry = tuple[int, int, int, MoveT]
"""A transposition table entry: (depth, flag, node-relative score, best move)."""
Table = dict[int, TTEntry[MoveT]]
"""A transposition table: entries by the engine's hash key."""


@dataclass(frozen=True, slots=True)
class Limits:
    """When a search stops: any of a time budget, a depth and a node count (None = unbounded)."""

    time_ms: int | None = None
    depth: int | None = None
    nodes: int | None = None


@dataclass(frozen=True, slots=True)
class SearchInfo(Generic[MoveT]):
    """What a finished search found out: the depth it completed, its effort, its score and its main line."""

    depth: int
    nodes: int
    score: int
    pv: tuple[MoveT, ...]
    time_ms: int

    def to_wire(self, fmt: Callable[[MoveT], str]) -> dict[str, Any]:
        """The info as a plain map, the moves of the main line written with `fmt`."""
        return {
            "depth": self.depth,
            "nodes": self.nodes,
            "score": self.score,
            "pv": [fmt(move) for move in self.pv],
            "ms": self.time_ms,
        }


class NoMove(Enum):
    """The type of `NO_MOVE`: distinct from every move, `None` (often a pass) included.

    A one-member enum, so a type checker narrows `move is not NO_MOVE` to a real move.
    """

    NO_MOVE = 0

    def __repr__(self) -> str:
        """Shown in tracebacks and reprs of killer tables."""
        return "NO_MOVE"


NO_MOVE: Final = NoMove.NO_MOVE
"""Marks an empty hash-move or killer slot; never a real move."""


class Engine(Protocol[PosT, MoveT]):
    """A per-game adapter the search runs over; positions are whatever the adapter likes (tuples are fastest).

    Moves must be hashable and comparable with `==` (they key the history table and the root's scores).

    Optional hooks, looked up with getattr (each has its own protocol below, to check an adapter against):
    `order(pos, moves, hash_move, killers, history) -> list` (`OrderHook`) replaces the core's ordering at
    nodes two or more plies above the horizon (at the last ply the core's cheap ordering is used: hash move,
    killers, then the engine's own pre-order); `hash_move` is `NO_MOVE` when there is none. `quick(pos) ->
    move` (`QuickHook`) gives a move without search, used if the adapter offers no moves for a position it
    does not call over. Optional attributes: `check_every` (int) — nodes between looks at the clock, for
    engines whose nodes are slow (default `CHECK_EVERY`); `depth_step` (int) — iterative deepening runs
    depths 1, 1 + step, 1 + 2·step, ... (and the depth limit itself), for games whose odd and even horizons
    score differently.
    """

    def key(self, pos: PosT, /) -> int:
        """A Zobrist-style hash of `pos`, side to move included."""

    def moves(self, pos: PosT, /) -> list[MoveT]:
        """The legal moves of the side to move, cheaply pre-ordered; [] only if the game is over."""

    def play(self, pos: PosT, move: MoveT, /) -> PosT:
        """The child position after `move` (the side to move changes; `pos` is not touched)."""

    def terminal(self, pos: PosT, /) -> int | None:
        """The exact score if the game is over (side to move's view), else None."""

    def evaluate(self, pos: PosT, /) -> int:
        """A static score of `pos` from the side to move's view."""


OrderFn = Callable[[PosT, list[MoveT], MoveT | NoMove, list[MoveT | NoMove], dict[MoveT, int]], list[MoveT]]
"""The `order` hook as the core calls it: (pos, moves, hash move, the ply's killers, history) -> moves."""


class OrderHook(Protocol[PosT_contra, MoveT]):
    """An engine's optional move-ordering hook (see `Engine`)."""

    def order(
        self,
        pos: PosT_contra,
        moves: list[MoveT],
        hash_move: MoveT | NoMove,
        killers: list[MoveT | NoMove],
        history: dict[MoveT, int],
        /,
    ) -> list[MoveT]:
        """`moves` in the order to search them."""


class QuickHook(Protocol[PosT_contra, MoveT_co]):
    """An engine's optional move without search (see `Engine`)."""

    def quick(self, pos: PosT_contra, /) -> MoveT_co:
        """A move for `pos` without search."""


class QuickEngine(Engine[PosT, MoveT], QuickHook[PosT, MoveT], Protocol[PosT, MoveT]):
    """An engine with a `quick` hook: the search then always answers a move of the engine's type."""


class _Abort(Exception):
    """Raised inside the tree when time or nodes run out, to unwind the unfinished iteration."""


def _to_tt(score: int, ply: int) -> int:
    """A proven score made relative to the node (not the root), so it stays true wherever the node recurs."""
    if score >= PROVEN:
        return score + ply
    if score <= -PROVEN:
        return score - ply
    return score


def _from_tt(score: int, ply: int) -> int:
    """A node-relative score (stored, or game over) seen from the root: a proven result loses a point per ply."""
    if score >= PROVEN:
        return score - ply
    if score <= -PROVEN:
        return score + ply
    return score


class _Tree(Generic[PosT, MoveT]):
    """One search's working state: the engine, the table, the heuristics and the stopping rules."""

    __slots__ = (
        "check_every",
        "deadline",
        "engine",
        "history",
        "horizon",
        "killers",
        "next_check",
        "node_limit",
        "nodes",
        "order_hook",
        "stoppable",
        "tt",
    )

    def __init__(
        self, engine: Engine[PosT, MoveT], tt: Table[MoveT], deadline: float | None, node_limit: int | None
    ) -> None:
        """Ready to search with `engine`, storing into `tt`, until `deadline` or `node_limit` (if any)."""
        self.engine = engine
        # Engines with slow nodes (a Tron leaf floods the board) look at the clock more often.
        self.check_every: int = max(1, getattr(engine, "check_every", CHECK_EVERY))
        self.tt = tt
        self.deadline = deadline
        self.node_limit = node_limit
        self.nodes = 0
        self.next_check = self.check_every
        self.killers: list[list[MoveT | NoMove]] = []
        self.history: dict[MoveT, int] = {}
        self.order_hook: OrderFn[PosT, MoveT] | None = getattr(engine, "order", None)
        self.stoppable = False
        self.horizon = False

    def check(self) -> None:
        """Abort the iteration in progress if the clock or the node count says so."""
        self.next_check = self.nodes + self.check_every
        if not self.stoppable:
            return
        if self.node_limit is not None and self.nodes >= self.node_limit:
            raise _Abort
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            raise _Abort

    def killer_slots(self, ply: int) -> list[MoveT | NoMove]:
        """The two killer moves remembered for `ply`."""
        while len(self.killers) <= ply:
            self.killers.append([NO_MOVE, NO_MOVE])
        return self.killers[ply]

    def ordered(self, pos: PosT, moves: list[MoveT], hash_move: MoveT | NoMove, ply: int, depth: int) -> list[MoveT]:
        """`moves` in the order to try them: the engine's hook high in the tree, else hash move and killers."""
        killers = self.killer_slots(ply)
        if self.order_hook is not None and depth >= 2:
            return self.order_hook(pos, moves, hash_move, killers, self.history)
        front = [m for m in (hash_move, *killers) if m is not NO_MOVE and m in moves]
        if not front:
            return moves
        seen: list[MoveT] = []
        for move in front:
            if move not in seen:
                seen.append(move)
        return seen + [m for m in moves if m not in seen]

    def reward(self, move: MoveT, ply: int, depth: int) -> None:
        """Remember a move that caused a cutoff, as a killer of its ply and in the history table."""
        slots = self.killer_slots(ply)
        if slots[0] != move:
            slots[1] = slots[0]
            slots[0] = move
        self.history[move] = self.history.get(move, 0) + depth * depth

    def store(self, key: int, depth: int, flag: int, score: int, move: MoveT, ply: int) -> None:
        """Record a node's result; a full table only overwrites keys it already holds."""
        tt = self.tt
        if len(tt) < TT_LIMIT or key in tt:
            tt[key] = (depth, flag, _to_tt(score, ply), move)

    def negamax(self, pos: PosT, depth: int, alpha: int, beta: int, ply: int) -> int:
        """The score of `pos` searched `depth` plies deep within (alpha, beta), fail-soft."""
        self.nodes += 1
        if self.nodes >= self.next_check:
            self.check()
        engine = self.engine
        over = engine.terminal(pos)
        if over is not None:
            return _from_tt(over, ply)
        if depth <= 0:
            self.horizon = True
            return engine.evaluate(pos)
        key = engine.key(pos)
        entry = self.tt.get(key)
        hash_move: MoveT | NoMove = NO_MOVE
        if entry is not None:
            stored_depth, flag, stored, hash_move = entry
            if stored_depth >= depth:
                score = _from_tt(stored, ply)
                if flag == EXACT or (flag == LOWER and score >= beta) or (flag == UPPER and score <= alpha):
                    if -PROVEN < score < PROVEN:
                        self.horizon = True
                    return score
        moves = engine.moves(pos)
        if not moves:
            # An adapter that offers no move here although the game is not over: score it as it stands.
            return engine.evaluate(pos)
        return self.expand(pos, key, self.ordered(pos, moves, hash_move, ply, depth), depth, alpha, beta, ply)

    def expand(self, pos: PosT, key: int, moves: list[MoveT], depth: int, alpha: int, beta: int, ply: int) -> int:
        """Search the children of `pos` in order (the first with the full window, the rest null-window first)."""
        engine = self.engine
        original_alpha = alpha
        best = -INFINITY
        best_move = moves[0]
        for index, move in enumerate(moves):
            child = engine.play(pos, move)
            if index == 0:
                score = -self.negamax(child, depth - 1, -beta, -alpha, ply + 1)
            else:
                score = -self.negamax(child, depth - 1, -alpha - 1, -alpha, ply + 1)
                if alpha < score < beta:
                    score = -self.negamax(child, depth - 1, -beta, -alpha, ply + 1)
            if score > best:
                best, best_move = score, move
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        self.reward(move, ply, depth)
                        break
        if best <= original_alpha:
            flag = UPPER
        elif best >= beta:
            flag = LOWER
        else:
            flag = EXACT
        self.store(key, depth, flag, best, best_move, ply)
        return best

    def root(self, pos: PosT, moves: list[MoveT], depth: int, noise: int) -> dict[MoveT, int]:
        """Score every root move at `depth`: exact for the best (and, with `noise`, for those within it of the best).

        Moves that fail low keep an upper bound as their score, which is all the ordering needs.
        """
        scores: dict[MoveT, int] = {}
        best = -INFINITY
        for index, move in enumerate(moves):
            child = self.engine.play(pos, move)
            # Moves within `noise` of the best need exact scores for the noisy choice between them.
            floor = best - noise - 1 if noise and best > -INFINITY else best
            if index == 0 or noise:
                score = -self.negamax(child, depth - 1, -INFINITY, -floor, 1)
            else:
                score = -self.negamax(child, depth - 1, -floor - 1, -floor, 1)
                if score > floor:
                    score = -self.negamax(child, depth - 1, -INFINITY, -floor, 1)
            scores[move] = score
            best = max(best, score)
        return scores

    def pv(self, pos: PosT, first: MoveT, depth: int) -> tuple[MoveT, ...]:
        """The main line: the root's best move, then the table's best moves while they stay legal."""
        line = [first]
        engine = self.engine
        pos = engine.play(pos, first)
        seen = {engine.key(pos)}
        while len(line) < max(depth, 1) and engine.terminal(pos) is None:
            entry = self.tt.get(engine.key(pos))
            if entry is None or entry[3] is NO_MOVE or entry[3] not in engine.moves(pos):
                break
            line.append(entry[3])
            pos = engine.play(pos, entry[3])
            key = engine.key(pos)
            if key in seen:
                break
            seen.add(key)
        return tuple(line)


def _pick(scores: dict[MoveT, int], noise: int, rng: random.Random) -> MoveT:
    """The best-scored move, or with `noise` one of those within `noise` of it, better ones more often."""
    best_move = max(scores, key=scores.__getitem__)
    best = scores[best_move]
    if noise <= 0 or abs(best) >= PROVEN:
        # A proven result is played straight: noise must not spoil a win or shorten a lost fight.
        return best_move
    near = [move for move, score in scores.items() if score >= best - noise and score > -PROVEN]
    return max(near, key=lambda move: scores[move] + rng.randint(0, noise))


def _root_order(moves: list[MoveT], scores: dict[MoveT, int], best: MoveT) -> list[MoveT]:
    """Root moves for the next iteration: the last best first, then by last scores (stable for ties)."""
    rest = sorted((m for m in moves if m != best), key=lambda m: -scores.get(m, -INFINITY))
    return [best, *rest]


@overload
def search(
    engine: QuickEngine[PosT, MoveT],
    pos: PosT,
    limits: Limits,
    *,
    rng: random.Random | None = None,
    noise: int = 0,
    tt: Table[MoveT] | None = None,
) -> tuple[MoveT, SearchInfo[MoveT]]: ...


@overload
def search(
    engine: Engine[PosT, MoveT],
    pos: PosT,
    limits: Limits,
    *,
    rng: random.Random | None = None,
    noise: int = 0,
    tt: Table[MoveT] | None = None,
) -> tuple[MoveT | None, SearchInfo[MoveT]]: ...


def search(
    engine: Engine[PosT, MoveT],
    pos: PosT,
    limits: Limits,
    *,
    rng: random.Random | None = None,
    noise: int = 0,
    tt: Table[MoveT] | None = None,
) -> tuple[MoveT | None, SearchInfo[MoveT]]:
    """The best move for the side to move in `pos` within `limits`, and what the search found.

    Iterative deepening from depth 1; depth 1 always completes (the limits are only enforced from depth 2),
    so even `time_ms=1` or `nodes=1` gives a legal move. Stops early once the tree is solved (no horizon
    reached) or a proven result is found. `noise` > 0 picks among root moves within `noise` of the best,
    with `rng` (a fixed seed if None). `tt` may be passed in to keep the table between calls.

    The answer is None only if the adapter offers no root move and has no `quick` hook: an engine with one
    (a `QuickEngine`) always gets a move of its own type back.
    """
    start = time.perf_counter()
    rng = rng if rng is not None else random.Random(0)
    tt = {} if tt is None else tt
    deadline = None if limits.time_ms is None else start + limits.time_ms / 1000
    tree = _Tree(engine, tt, deadline, limits.nodes)
    moves = list(engine.moves(pos))
    if not moves:
        return _no_search(engine, pos, start)
    max_depth = MAX_DEPTH if limits.depth is None else max(1, limits.depth)
    if len(moves) == 1:
        max_depth = 1
    best_move, best_score, depth_done = moves[0], 0, 0
    scores: dict[MoveT, int] = {}
    for depth in _depths(max_depth, getattr(engine, "depth_step", 1)):
        tree.stoppable = depth > 1
        tree.horizon = False
        try:
            scores = tree.root(pos, moves, depth, noise)
        except _Abort:
            break
        depth_done = depth
        best_move = max(scores, key=scores.__getitem__)
        best_score = scores[best_move]
        moves = _root_order(moves, scores, best_move)
        if not tree.horizon or abs(best_score) >= PROVEN or _out_of_time(start, limits):
            break
    chosen = _pick(scores, noise, rng) if scores else best_move
    info = SearchInfo(
        depth=depth_done,
        nodes=tree.nodes,
        score=scores.get(chosen, best_score),
        pv=tree.pv(pos, chosen, depth_done),
        time_ms=_elapsed_ms(start),
    )
    return chosen, info


def _depths(max_depth: int, step: int) -> list[int]:
    """The iterations to run: 1, then every `step`-th depth up to `max_depth`, which is always included."""
    depths = list(range(1, max_depth + 1, max(1, step)))
    return depths if depths[-1] == max_depth else [*depths, max_depth]


def _no_search(engine: Engine[PosT, MoveT], pos: PosT, start: float) -> tuple[MoveT | None, SearchInfo[MoveT]]:
    """The answer when the adapter offers no root move: its `quick` move if it has one, else None."""
    quick: Callable[[PosT], MoveT] | None = getattr(engine, "quick", None)
    move = quick(pos) if quick is not None else None
    over = engine.terminal(pos)
    score = over if over is not None else engine.evaluate(pos)
    return move, SearchInfo(0, 0, score, (), _elapsed_ms(start))


def _out_of_time(start: float, limits: Limits) -> bool:
    """True when so much of the time is gone that the next iteration would be cut off anyway."""
    if limits.time_ms is None:
        return False
    return (time.perf_counter() - start) * 1000 >= limits.time_ms * NEXT_ITERATION_SHARE


def _elapsed_ms(start: float) -> int:
    """Whole milliseconds since `start`."""
    return int((time.perf_counter() - start) * 1000)
