"""Pentago AI: a bitboard adapter for the search core, a rotation-aware line evaluation and the `playout` bot.

Positions are (own, opp) bitboard pairs seen from the side to move. A move is an int: `cell * 8 + r` places
on `cell` and then makes quadrant turn `r` (quadrant r // 2, clockwise when r is even, as in
`Pentago.legal_moves`), and `BARE + cell` is a placement that makes five at once. Children that come out
the same (turning an empty or symmetric quadrant) are offered once.

The evaluation counts, over lines of five that hold stones of one colour only, how many stones each holds.
Besides the 32 real lines it uses "turned lines": the five cells that become a real line after one quadrant
turn. A side to move owning four of any line (real or turned) with no enemy stone in it wins next move,
which is the rotation-aware win-in-one test that a plain line count misses. All the counting is done at
once on lanes of three bits packed into one big int, from per-quadrant tables built at import.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gamenight.server.ai.levels import time_limit_ms
from gamenight.server.ai.search import NO_MOVE, WIN, Limits, NoMove, search
from gamenight.server.games.pentago import (
    CELLS,
    FULL,
    LINES5,
    QUADRANT_MASKS,
    SIZE,
    PentagoMove,
    PentagoState,
    has_five,
    rotate,
)

if TYPE_CHECKING:
    from gamenight.server.ai.search import OrderHook, QuickEngine

Move = int
"""A move code: `cell * 8 + r` (place, then turn r), or `BARE + cell` (a placement that makes five)."""
Position = tuple[int, int]
"""(own, opp) bitboards, the side to move first."""

TURNS = 8
BARE = CELLS * TURNS
# Turn r -> (quadrant, clockwise), in the order of Pentago.legal_moves (clockwise first).
TURN_OF: tuple[tuple[int, bool], ...] = tuple((q, clockwise) for q in range(4) for clockwise in (True, False))

BOTS: dict[str, str] = {
    "playout": "2-ply alpha-beta whose leaves are scored by averaging random playouts to the end of the game",
}

# -- search scores ----------------------------------------------------------------------------------------
LEAF_WIN = 200_000
"""A side to move owning four of a clear line wins next move: sure, though not proven by search."""
THREAT = 400
"""Per line where the opponent (not to move) owns four and we own nothing: a threat we must answer."""
WEIGHTS = (0, 1, 4, 16)
"""Lane value by stone count 0-3, in the spirit of pentagod's 1, 3, 9, 27 (fours are threats, scored apart)."""
REAL_COPIES = 2
"""A real line counts this many times a turned line: it needs no turn and no turn can undo it for free."""
UNIT = 16
"""A small clear advantage (one more three-stone line), the unit levels scale their noise by."""
LEVEL_PLAN: dict[int, tuple[int | None, int]] = {1: (1, 1600), 2: (2, 1600), 3: (2, 600), 4: (2, 0), 5: (None, 0)}
"""Each level's depth cap and root-move noise (hundredths of `UNIT`). Pentago's own table: with the shared
caps (1-4) levels 3-5 all reached depth 2 only and differed by noise alone (4 scored 30% against 3, 5 drew
every game against 4); here a level is shallower or noisier than the one above, and level 5 alone may go
past depth 2."""

# -- lanes: real lines, then turned lines ----------------------------------------------------------------
LANE_BITS = 3


def _turned_lines() -> list[int]:
    """The five-cell patterns that one quadrant turn makes into a real line, real lines excluded."""
    found: list[int] = []
    for line in LINES5:
        for q, mask in enumerate(QUADRANT_MASKS):
            if line & mask:
                for clockwise in (True, False):
                    # Cells that the turn carries onto the line: undo the turn on the line's part in q.
                    pattern = line & ~mask | rotate(line & mask, q, not clockwise)
                    if pattern not in LINES5 and pattern not in found:
                        found.append(pattern)
    return found


TURNED_LINES: tuple[int, ...] = tuple(_turned_lines())
LANES: tuple[int, ...] = LINES5 * REAL_COPIES + TURNED_LINES
LOW: int = sum(1 << LANE_BITS * i for i in range(len(LANES)))
"""The lowest bit of every lane."""


def _cell_lanes(cell: int) -> int:
    """A one in every lane whose pattern holds `cell`."""
    return sum(1 << LANE_BITS * i for i, lane in enumerate(LANES) if lane >> cell & 1)


def _subsets(mask: int) -> list[int]:
    """Every subset of the bits of `mask`."""
    subsets = [0]
    for bit in (1 << i for i in range(CELLS) if mask >> i & 1):
        subsets += [s | bit for s in subsets]
    return subsets


_CELL_LANES = tuple(_cell_lanes(cell) for cell in range(CELLS))


def _quadrant_counts(mask: int) -> dict[int, int]:
    """Stones in one quadrant (as board bits) -> their count in every lane."""
    table = {}
    for bits in _subsets(mask):
        table[bits] = sum(_CELL_LANES[cell] for cell in range(CELLS) if bits >> cell & 1)
    return table


_Q0, _Q1, _Q2, _Q3 = (_quadrant_counts(mask) for mask in QUADRANT_MASKS)
_M0, _M1, _M2, _M3 = QUADRANT_MASKS


def lane_counts(board: int) -> int:
    """How many stones of `board` every lane holds, three bits per lane."""
    return _Q0[board & _M0] + _Q1[board & _M1] + _Q2[board & _M2] + _Q3[board & _M3]


def _present(counts: int) -> int:
    """The low bit of every lane holding at least one stone."""
    return (counts | counts >> 1 | counts >> 2) & LOW


def wins_next(own: int, opp: int) -> bool:
    """True if the side owning `own` can make five with its next move (placement, or placement and turn).

    Exact but for the rare turn that makes five for both sides (a draw, not a win).
    """
    return bool(lane_counts(own) >> 2 & (LOW ^ _present(lane_counts(opp))))


def evaluate(own: int, opp: int) -> int:
    """The static score of (own, opp) for the side to move: lane counts, threats, and a sure win next move."""
    oc, pc = lane_counts(own), lane_counts(opp)
    mine = LOW ^ _present(pc)  # lanes with none of the opponent's stones
    o0, o1, o2 = oc & mine, oc >> 1 & mine, oc >> 2 & mine
    if o2:
        return LEAF_WIN
    theirs = LOW ^ _present(oc)
    p0, p1, p2 = pc & theirs, pc >> 1 & theirs, pc >> 2 & theirs
    # Counts are 0-5, so bit patterns 011 and 1x1 / 100 tell three from five and four.
    o3, p3 = o0 & o1, p0 & p1
    score = WEIGHTS[3] * (o3.bit_count() - p3.bit_count())
    score += WEIGHTS[2] * ((o1 ^ o3).bit_count() - (p1 ^ p3).bit_count())
    score += WEIGHTS[1] * ((o0 ^ o3).bit_count() - (p0 & ~(p1 | p2)).bit_count())
    return score - THREAT * p2.bit_count()


# -- moves and children ------------------------------------------------------------------------------------


def _turn_parts(q: int, clockwise: bool) -> tuple[int, int, dict[int, int]]:
    """What a turn needs: the board outside the quadrant, the quadrant, and its contents' turned images."""
    mask = QUADRANT_MASKS[q]
    return FULL ^ mask, mask, {bits: rotate(bits, q, clockwise) for bits in _subsets(mask)}


_TURN_PARTS = tuple(_turn_parts(q, clockwise) for q, clockwise in TURN_OF)
# _MOVED[cell][r]: where a stone placed on `cell` ends up after turn r.
_MOVED = tuple(tuple(rotate(1 << cell, q, cw) for q, cw in TURN_OF) for cell in range(CELLS))
_BITS = tuple(1 << cell for cell in range(CELLS))


def _centrality(cell: int) -> int:
    """How many real lines pass through `cell`: busy cells are tried first."""
    return sum(1 for line in LINES5 if line >> cell & 1)


CELL_ORDER: tuple[int, ...] = tuple(sorted(range(CELLS), key=lambda cell: -_centrality(cell)))


def _center(q: int) -> int:
    """The middle cell of quadrant q, the one cell a turn leaves in place."""
    top, left = (q // 2) * 3, (q % 2) * 3
    return (top + 1) * SIZE + left + 1


_CENTERS = tuple(1 << _center(q) for q in range(4))
_QUADRANT_OF = tuple(next(q for q in range(4) if QUADRANT_MASKS[q] >> cell & 1) for cell in range(CELLS))


def _turn_codes(cell: int, idle: int) -> tuple[Move, ...]:
    """The move codes worth trying on `cell` when the quadrants in bit set `idle` look the same turned.

    Turning an idle quadrant either way gives one child, whichever idle quadrant it is, so one such turn is
    kept. Placing on a quadrant other than its middle stops it being idle.
    """
    q = _QUADRANT_OF[cell]
    if cell != _center(q):
        idle &= ~(1 << q)
    busy = [r for r, (quadrant, _) in enumerate(TURN_OF) if not idle >> quadrant & 1]
    spare = [r for r, (quadrant, _) in enumerate(TURN_OF) if idle >> quadrant & 1][:1]
    return tuple(cell * TURNS + r for r in busy + spare)


_TURN_CODES = tuple(tuple(_turn_codes(cell, idle) for idle in range(16)) for cell in range(CELLS))


def idle_quadrants(taken: int) -> int:
    """The set (bit q) of quadrants holding nothing or only their middle stone: a turn leaves them unchanged."""
    return sum(1 << q for q in range(4) if not taken & QUADRANT_MASKS[q] & ~_CENTERS[q])


def plain_moves(pos: Position) -> list[Move]:
    """The moves of a position where the side to move cannot make five, busy cells first.

    Children alike because of idle quadrants are offered once; rarer coincidences (placing on another cell
    of a quadrant that was idle) are left for the transposition table.
    """
    taken = pos[0] | pos[1]
    idle = idle_quadrants(taken)
    codes: list[Move] = []
    for cell in CELL_ORDER:
        if not taken >> cell & 1:
            codes.extend(_TURN_CODES[cell][idle])
    return codes


def turned(board: int) -> list[int]:
    """`board` after each of the eight turns, in turn order."""
    return [board & keep | images[board & mask] for keep, mask, images in _TURN_PARTS]


def move_of(code: Move) -> PentagoMove:
    """The game's move object for a move code."""
    if code >= BARE:
        return PentagoMove(code - BARE)
    q, clockwise = TURN_OF[code % TURNS]
    return PentagoMove(code // TURNS, q, clockwise)


def code_of(move: PentagoMove) -> Move:
    """The move code of a game move."""
    if move.quadrant is None:
        return BARE + move.cell
    return move.cell * TURNS + TURN_OF.index((move.quadrant, move.clockwise))


def notation(code: Move) -> str:
    """The wire form of a move code."""
    return move_of(code).notation()


def child(pos: Position, code: Move) -> Position:
    """The position after move `code`, seen from the opponent (who moves next)."""
    own, opp = pos
    if code >= BARE:
        return opp, own | _BITS[code - BARE]
    cell, r = divmod(code, TURNS)
    keep, mask, images = _TURN_PARTS[r]
    placed = own | _BITS[cell]
    return opp & keep | images[opp & mask], placed & keep | images[placed & mask]


def children(pos: Position) -> Iterator[tuple[Move, Position]]:
    """Every distinct child with one move reaching it: bare winning placements, then placement x turn."""
    own, opp = pos
    taken = own | opp
    own_turned, opp_turned = turned(own), turned(opp)
    seen: set[int] = set()
    for cell in CELL_ORDER:
        bit = _BITS[cell]
        if taken & bit:
            continue
        if has_five(own | bit):
            yield BARE + cell, (opp, own | bit)
            continue
        moved = _MOVED[cell]
        for r in range(TURNS):
            mover = own_turned[r] | moved[r]
            key = mover << CELLS | opp_turned[r]
            if key not in seen:
                seen.add(key)
                yield cell * TURNS + r, (opp_turned[r], mover)


def outcome_score(pos: Position) -> int | None:
    """The exact result for the side to move if the game is over: WIN, -WIN or 0 (draw), else None."""
    own, opp = pos
    own_five, opp_five = has_five(own), has_five(opp)
    if own_five or opp_five:
        return 0 if own_five and opp_five else (WIN if own_five else -WIN)
    return 0 if own | opp == FULL else None


def winning_move(pos: Position) -> Move | None:
    """A move that wins at once (five by placing, or five for us only after the turn), or None."""
    own, opp = pos
    if not wins_next(own, opp):
        return None
    for code, after in children(pos):
        if outcome_score(after) == -WIN:
            return code
    return None


# -- the engine adapter ----------------------------------------------------------------------------------
EVAL_MEMO_LIMIT = 400_000


class PentagoEngine:
    """The search core's adapter: keys, moves, children and scores of (own, opp) positions."""

    def __init__(self, root_moves: list[Move] | None = None, root: Position | None = None) -> None:
        """An adapter; `root_moves` (if given) replaces the moves offered at `root`, e.g. only the safe ones."""
        self.root = root
        self.root_moves = root_moves
        self.memo: dict[int, int] = {}

    def key(self, pos: Position) -> int:
        """A perfect key: both boards side by side, the side to move first."""
        return pos[0] << CELLS | pos[1]

    def moves(self, pos: Position) -> list[Move]:
        """The distinct moves, busy cells first; only the winning move when one exists."""
        if self.root_moves is not None and pos == self.root:
            return list(self.root_moves)
        own, opp = pos
        if not wins_next(own, opp):
            return plain_moves(pos)
        win = winning_move(pos)
        # Only turns that make five for both sides stand in the way: the careful list then.
        return [win] if win is not None else [code for code, _ in children(pos)]

    def play(self, pos: Position, move: Move) -> Position:
        """The child position."""
        return child(pos, move)

    def terminal(self, pos: Position) -> int | None:
        """The exact score once a five or a full board ended the game."""
        return outcome_score(pos)

    def evaluate(self, pos: Position) -> int:
        """The static score, remembered by position (iterative deepening asks for the same leaves again)."""
        key = pos[0] << CELLS | pos[1]
        score = self.memo.get(key)
        if score is None:
            if len(self.memo) >= EVAL_MEMO_LIMIT:
                self.memo.clear()
            score = self.memo[key] = evaluate(*pos)
        return score

    def order(
        self,
        pos: Position,
        moves: list[Move],
        hash_move: Move | NoMove,
        killers: list[Move | NoMove],
        history: dict[Move, int],
    ) -> list[Move]:
        """Far from the horizon: the hash move, then the others by the static score of their children."""
        scored = sorted(moves, key=lambda code: self.evaluate(child(pos, code)))
        if hash_move is not NO_MOVE and hash_move in moves:
            scored.remove(hash_move)
            scored.insert(0, hash_move)
        return scored

    def quick(self, pos: Position) -> Move:
        """Any legal move, without search."""
        return next(children(pos))[0]


if TYPE_CHECKING:
    # The adapter against the search core's protocols, hooks included (checked by mypy, never run).
    _ENGINE: QuickEngine[Position, Move] = PentagoEngine()
    _ORDER: OrderHook[Position, Move] = PentagoEngine()


# -- symmetry of the root --------------------------------------------------------------------------------


def _symmetry_maps() -> list[tuple[int, ...]]:
    """The eight symmetries of the board (turns and mirrors of the whole board) as cell permutations."""
    last = SIZE - 1
    forms: tuple[Callable[[int, int], tuple[int, int]], ...] = (
        lambda r, c: (r, c),
        lambda r, c: (c, last - r),
        lambda r, c: (last - r, last - c),
        lambda r, c: (last - c, r),
        lambda r, c: (r, last - c),
        lambda r, c: (last - r, c),
        lambda r, c: (c, r),
        lambda r, c: (last - c, last - r),
    )
    maps = []
    for form in forms:
        images = (form(*divmod(cell, SIZE)) for cell in range(CELLS))
        maps.append(tuple(row * SIZE + col for row, col in images))
    return maps


def _row_tables(perm: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Per row, the image of each of the 64 contents of that row under the permutation."""
    return tuple(
        tuple(sum(1 << perm[row * SIZE + col] for col in range(SIZE) if bits >> col & 1) for bits in range(64))
        for row in range(SIZE)
    )


SYMMETRIES = tuple(_row_tables(perm) for perm in _symmetry_maps())


def transform(board: int, symmetry: tuple[tuple[int, ...], ...]) -> int:
    """`board` under one board symmetry, six rows at a time."""
    image = 0
    for row, table in enumerate(symmetry):
        image |= table[board >> row * SIZE & 63]
    return image


def distinct_up_to_symmetry(pos: Position, moves: list[tuple[Move, Position]]) -> list[tuple[Move, Position]]:
    """`moves` with those dropped whose child is a mirror image of an earlier one under a symmetry of `pos`."""
    own, opp = pos
    stabilizer = [s for s in SYMMETRIES[1:] if transform(own, s) == own and transform(opp, s) == opp]
    if not stabilizer:
        return moves
    kept: list[tuple[Move, Position]] = []
    seen: set[Position] = set()
    for code, (a, b) in moves:
        images = {(a, b)} | {(transform(a, s), transform(b, s)) for s in stabilizer}
        if seen.isdisjoint(images):
            kept.append((code, (a, b)))
        seen |= images
    return kept


# -- choosing a move ----------------------------------------------------------------------------------------


def position_of(state: PentagoState, seat: int) -> Position:
    """The (own, opp) position of `seat` in a game state."""
    return state.board_of(seat), state.board_of(1 - seat)


def safe_moves(pos: Position) -> list[Move]:
    """The root's distinct moves (up to symmetry) after which the opponent cannot win next move.

    When nothing is safe, every distinct move comes back: the search then finds the longest resistance.
    """
    moves = distinct_up_to_symmetry(pos, list(children(pos)))
    safe = [code for code, (own, opp) in moves if not wins_next(own, opp)]
    return safe or [code for code, _ in moves]


def quick_move(state: PentagoState, seat: int) -> PentagoMove:
    """An instant move without search: a win in one, else the first move leaving the opponent none, else any."""
    pos = position_of(state, seat)
    win = winning_move(pos)
    if win is not None:
        return move_of(win)
    first: Move | None = None
    for code, (own, opp) in children(pos):
        if not wins_next(own, opp):
            return move_of(code)
        first = code if first is None else first
    if first is None:
        raise ValueError(f"seat {seat} has no move to make")
    return move_of(first)


def _check_turn(state: PentagoState, seat: int) -> None:
    """ValueError unless `seat` is to move in `state`."""
    if state.result is not None or seat != state.turn:
        raise ValueError(f"seat {seat} is not to move")


def choose_level(
    state: PentagoState, seat: int, level: int, budget_ms: int, rng: random.Random
) -> tuple[PentagoMove, dict[str, Any]]:
    """A legal move for `seat` (to move in `state`) by `level`'s search with `budget_ms`, and what it found out."""
    start = time.perf_counter()
    _check_turn(state, seat)
    code, info = level_move(position_of(state, seat), level, budget_ms, rng, start)
    return move_of(code), {**info, "level": level}


def choose_bot(
    state: PentagoState, seat: int, bot: str, budget_ms: int, rng: random.Random
) -> tuple[PentagoMove, dict[str, Any]]:
    """A legal move for `seat` (to move in `state`) by the named `bot`, and what it found out.

    ValueError for a bot not in `BOTS`.
    """
    _check_turn(state, seat)
    if bot not in BOTS:
        raise ValueError(f"pentago has no bot {bot!r}; it has {', '.join(BOTS)}")
    code, info = playout_bot(position_of(state, seat), budget_ms, rng)
    return move_of(code), {**info, "bot": bot}


def level_move(
    pos: Position, level: int, budget_ms: int, rng: random.Random, start: float
) -> tuple[Move, dict[str, Any]]:
    """A level's move: sanity checks first (all levels but the lowest), then the search core."""
    if level > 1:
        win = winning_move(pos)
        if win is not None:
            return win, _info(1, 1, WIN - 1, [win], start)
        engine = PentagoEngine(safe_moves(pos), pos)
    else:
        engine = PentagoEngine()
    depth, noise = LEVEL_PLAN[level]
    spent = int((time.perf_counter() - start) * 1000)
    limits = Limits(max(1, time_limit_ms(level, budget_ms) - spent), depth)
    code, info = search(engine, pos, limits, rng=rng, noise=noise * UNIT // 100)
    return code, {**info.to_wire(notation), "ms": _ms(start)}


def _info(depth: int, nodes: int, score: int, pv: list[Move], start: float) -> dict[str, Any]:
    """An info map for a move found without the search core."""
    return {"depth": depth, "nodes": nodes, "score": score, "pv": [notation(m) for m in pv], "ms": _ms(start)}


def _ms(start: float) -> int:
    """Whole milliseconds since `start`."""
    return int((time.perf_counter() - start) * 1000)


# -- the playout bot ---------------------------------------------------------------------------------------
PLAYOUTS = 8
"""Random games per leaf."""
PLAYOUT_RATE = 5
"""Playouts allowed per millisecond of budget: the work limit that keeps the bot seedable. About half the
speed measured here (9-12 playouts per ms in the opening and middle game), so the wall-clock deadline,
a safety net only, is not what stops it on a machine like ours."""


@dataclass(slots=True)
class _Budget:
    """The playout bot's allowance: a playout count (deterministic) and a deadline (a safety net)."""

    playouts: int
    deadline: float

    def spend(self, count: int) -> None:
        """Take `count` playouts, or raise _OutOfTime."""
        self.playouts -= count
        if self.playouts < 0 or time.perf_counter() > self.deadline:
            raise _OutOfTime


class _OutOfTime(Exception):
    """Unwinds the playout bot's search when its allowance is spent."""


@dataclass(slots=True)
class _Best:
    """The playout bot's best root move so far and its value."""

    move: Move
    value: float


def playout(own: int, opp: int, rng: random.Random) -> float:
    """One random game from (own, opp), side to move first: 1 if that side wins, 0.5 a draw, 0 a loss."""
    sign = 0  # 0 while `own` belongs to the side that started the playout
    rand = rng.random
    while True:
        empty = FULL ^ (own | opp)
        if not empty:
            return 0.5
        k = int(rand() * empty.bit_count())
        for _ in range(k):
            empty &= empty - 1
        own |= empty & -empty
        if has_five(own):
            return 1.0 - sign
        keep, mask, images = _TURN_PARTS[int(rand() * TURNS)]
        own, opp = own & keep | images[own & mask], opp & keep | images[opp & mask]
        own_five, opp_five = has_five(own), has_five(opp)
        if own_five or opp_five:
            return 0.5 if own_five and opp_five else (1.0 - sign if own_five else float(sign))
        own, opp, sign = opp, own, 1 - sign


def _leaf_value(pos: Position, rng: random.Random, budget: _Budget) -> float:
    """The side to move's expected result from `pos`: exact if the game is over, else the playouts' mean."""
    over = outcome_score(pos)
    if over is not None:
        return 0.5 + 0.5 * (over > 0) - 0.5 * (over < 0)
    budget.spend(PLAYOUTS)
    return sum(playout(pos[0], pos[1], rng) for _ in range(PLAYOUTS)) / PLAYOUTS


def _shuffled_children(pos: Position, rng: random.Random) -> list[tuple[Move, Position]]:
    """The distinct children in random order, won games first (so the alpha-beta cuts at once)."""
    kids = list(children(pos))
    rng.shuffle(kids)
    kids.sort(key=lambda kid: outcome_score(kid[1]) != -WIN)
    return kids


def _negamax(pos: Position, depth: int, alpha: float, beta: float, rng: random.Random, budget: _Budget) -> float:
    """The side to move's value of `pos` searched `depth` plies, leaves scored by playouts (fail-hard)."""
    if depth == 0 or outcome_score(pos) is not None:
        return _leaf_value(pos, rng, budget)
    for _, after in _shuffled_children(pos, rng):
        value = 1.0 - _negamax(after, depth - 1, 1.0 - beta, 1.0 - alpha, rng, budget)
        if value > alpha:
            alpha = value
            if alpha >= beta:
                break
    return alpha


def playout_bot(pos: Position, budget_ms: int, rng: random.Random) -> tuple[Move, dict[str, Any]]:
    """Depth 1, then depth 2 alpha-beta with random-playout leaves, as far as the allowance goes.

    Depth 2 tries root moves that leave the opponent no win at once first, best depth-1 value first, so a
    cut-off depth 2 still improves on depth 1 for every move it finished.
    """
    start = time.perf_counter()
    allowance = PLAYOUT_RATE * max(1, budget_ms)
    budget = _Budget(allowance, start + max(1, budget_ms) / 1000)
    kids = _shuffled_children(pos, rng)
    values: dict[Move, float] = {}
    best = _Best(kids[0][0], 0.0)
    depth = 0
    for search_depth in (1, 2):
        try:
            _root(kids, search_depth, values, best, rng, budget)
        except _OutOfTime:
            break
        depth = search_depth
        # Depth 2 tries first the moves that leave the opponent no win at once, best depth-1 value first.
        kids.sort(key=lambda kid: (wins_next(*kid[1]), -values.get(kid[0], -1.0)))
    info: dict[str, Any] = {
        "depth": depth,
        "nodes": allowance - max(budget.playouts, 0),
        "score": round(1000 * best.value),
        "pv": [notation(best.move)],
        "ms": _ms(start),
    }
    return best.move, info


def _root(
    kids: list[tuple[Move, Position]],
    depth: int,
    values: dict[Move, float],
    best: _Best,
    rng: random.Random,
    budget: _Budget,
) -> None:
    """Search the root's children `depth` plies, recording their values and the best move and value so far."""
    alpha = -1.0
    for code, after in kids:
        value = 1.0 - _negamax(after, depth - 1, 0.0, 1.0 - alpha if alpha >= 0 else 1.0, rng, budget)
        values[code] = value
        if value > alpha:
            alpha = value
            best.move, best.value = code, value
            if alpha >= 1.0:
                return


# -- benchmark positions ---------------------------------------------------------------------------------------


def bench_positions() -> list[tuple[str, PentagoEngine, Position]]:
    """Fixed positions for bench/search.py: the empty board and two quiet random games' middle game.

    Quiet: every random move leaves the next player no win at once, so the search has work to do.
    """
    found: list[tuple[str, PentagoEngine, Position]] = [("empty board", PentagoEngine(), (0, 0))]
    for label, plies, seed in (("middle (ply 8)", 8, 2024), ("late middle (ply 16)", 16, 2024)):
        rng = random.Random(seed)
        pos: Position = (0, 0)
        for _ in range(plies):
            pos = rng.choice([after for _, after in children(pos) if not wins_next(*after)])
        found.append((label, PentagoEngine(), pos))
    return found
