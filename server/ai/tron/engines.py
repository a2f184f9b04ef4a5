"""Tron AI: the search core's adapters (tick, joint-move, voronoi, level 5, floodfill) and the searches driving them."""

from __future__ import annotations

import random
import time
from typing import Any

from gamenight.server.ai.search import PROVEN, WIN, Engine, Limits, search
from gamenight.server.ai.tron import contact, kernel, params, territory
from gamenight.server.ai.tron.fill import _past, exact_ride
from gamenight.server.ai.tron.grid import (
    Direction,
    Grid,
    Index,
    Mask,
    Position,
    TickPosition,
    _quick,
    _Timeout,
    flood,
    grid_of,
    manhattan,
    open_moves,
    spread,
    steps_of,
    walls_around,
)
from gamenight.server.ai.tron.territory import voronoi
from gamenight.server.games.tron import DIRECTION_NAMES, NORTH

# -- the two-player engine -----------------------------------------------------------------------------------


class TronEngine:
    """The search core's adapter for two riders in contact.

    A position is (open, our head, their head, pending, over). With pending = 0 it is our ply; otherwise
    we have chosen the target square `pending` and it is their ply, which resolves the tick. `over` is 0
    while the game goes on, else WON / LOST / DRAWN for us. Scores are from the side to move's view.
    """

    draw_penalty = params.DRAW_PENALTY

    def __init__(self, stride: int, deadline: float | None = None) -> None:
        """An adapter for grids of this stride; past `deadline` (once armed) evaluations raise _Timeout."""
        self.stride = stride
        self.steps = steps_of(stride)
        self.deadline = deadline
        self.armed = False

    def key(self, pos: Position) -> int:
        """The board, both heads and the pending target packed into one int, exactly (see `KEY_SHIFT`)."""
        free, ours, theirs, pending, _ = pos
        return ((free << params.KEY_SHIFT | ours) << params.KEY_SHIFT | theirs) << params.KEY_SHIFT | pending

    def moves(self, pos: Position) -> list[Direction]:
        """The mover's directions onto open squares (a doomed rider gets one, to lose with)."""
        free, ours, theirs, pending, _ = pos
        return open_moves(free, theirs if pending else ours, self.steps) or [NORTH]

    def play(self, pos: Position, move: Direction) -> Position:
        """Our ply records the target; their ply resolves the tick with tron.py's collision rules."""
        free, ours, theirs, pending, _ = pos
        if not pending:
            return free, ours, theirs, ours + self.steps[move], 0
        target = theirs + self.steps[move]
        same = pending == target
        we_crash = same or not free >> pending & 1
        they_crash = same or not free >> target & 1
        if we_crash or they_crash:
            over = params.DRAWN if we_crash and they_crash else params.LOST if we_crash else params.WON
            return free, ours, theirs, 0, over
        return free ^ (1 << pending | 1 << target), pending, target, 0, 0

    def terminal(self, pos: Position) -> int | None:
        """The score of a finished game (always on our ply): a win, a loss, or the draw penalty."""
        over = pos[4]
        if not over:
            return None
        return WIN if over == params.WON else -WIN if over == params.LOST else -self.draw_penalty

    def evaluate(self, pos: Position) -> int:
        """The static score for the side to move; raises _Timeout once the deadline has passed."""
        if self.armed and self.deadline is not None and time.perf_counter() > self.deadline:
            raise _Timeout
        free, ours, theirs, pending, _ = pos
        if not pending:
            return self.score(free, ours, theirs, False, True)
        if not free >> pending & 1:
            return params.DOOMED if open_moves(free, theirs, self.steps) else self.draw_penalty
        return self.score(free ^ 1 << pending, theirs, pending, True, False)

    def score(self, free: Mask, first: Index, second: Index, first_ahead: bool, first_is_us: bool) -> int:
        """The first head's score against the second (see `territory_score`)."""
        draw = -self.draw_penalty if first_is_us else self.draw_penalty
        return territory.territory_score(self.stride, free, first, second, first_ahead, draw)


class TickEngine:
    """The levels' adapter: one ply per tick, the mover answering the other's known move and committing its next.

    A position is (open, mover's head, other's head, other's committed target or 0, mover is us, over). At
    the root nobody has committed: we commit our first move (so the opponent answers it knowing it, as in
    the plain pessimistic search). Every later ply replies to the other's committed move, which resolves
    the tick by tron.py's rules, and commits the mover's next move. Who knows whose move alternates from
    tick to tick, so neither side gets the other's move for free all the way down, and leaves are always
    evaluated with one move committed and the mover to answer it. A move code is reply * 5 + commit.
    """

    draw_penalty = params.DRAW_PENALTY
    far_draw_penalty = params.DRAW_PENALTY
    """What a mutual crash `NEAR_DRAW_TICKS` or more ticks after the root costs (see `draw_cost`)."""
    root_open: int | None = None
    """The root's open-square count, set by the caller; a tick takes two squares, so it dates a position."""
    depth_step = 2
    """The core deepens by whole ticks plus our commit: depths 1, 3, 5, ... (see `search_depths`)."""
    check_every = params.CHECK_EVERY

    def __init__(self, stride: int, deadline: float | None = None) -> None:
        """An adapter for grids of this stride; past `deadline` (once armed) evaluations raise _Timeout."""
        self.stride = stride
        self.steps = steps_of(stride)
        self.deadline = deadline
        self.armed = False

    def key(self, pos: TickPosition) -> int:
        """The board, both heads, the committed target and whose turn it is packed into one int, exactly."""
        free, mover, other, committed, mover_is_us, _ = pos
        return (
            ((free << params.KEY_SHIFT | mover) << params.KEY_SHIFT | other) << params.KEY_SHIFT | committed
        ) << 1 | mover_is_us

    def moves(self, pos: TickPosition) -> list[int]:
        """The root's commits, or every (safe reply, commit from there); a doomed rider gets one move."""
        free, mover, _, committed, _, _ = pos
        steps = self.steps
        if not committed:
            return open_moves(free, mover, steps) or [NORTH]
        codes = []
        for reply in open_moves(free, mover, steps):
            square = mover + steps[reply]
            if square == committed or not free >> committed & 1:
                codes.append(reply * 5 + NORTH)  # the tick ends the game: the commit does not matter
                continue
            after = free ^ (1 << square | 1 << committed)
            codes.extend(reply * 5 + commit for commit in open_moves(after, square, steps) or [NORTH])
        return codes or [NORTH * 5 + NORTH]

    def play(self, pos: TickPosition, move: int) -> TickPosition:
        """Commit (root), or resolve the tick with the reply and commit the next move."""
        free, mover, other, committed, mover_is_us, _ = pos
        steps = self.steps
        if not committed:
            return free, other, mover, mover + steps[move], not mover_is_us, 0
        reply, commit = divmod(move, 5)
        square = mover + steps[reply]
        same = square == committed
        mover_crash = same or not free >> square & 1
        other_crash = same or not free >> committed & 1
        if mover_crash or other_crash:
            # Exactly one crash: we won if the crashed rider is not us (the mover is us or not).
            over = (
                params.DRAWN
                if mover_crash and other_crash
                else params.WON
                if mover_crash != mover_is_us
                else params.LOST
            )
            return free, other, mover, 0, not mover_is_us, over
        return free ^ (1 << square | 1 << committed), committed, square, square + steps[commit], not mover_is_us, 0

    def terminal(self, pos: TickPosition) -> int | None:
        """The score of a finished game for the side to move."""
        over = pos[5]
        if not over:
            return None
        ours = WIN if over == params.WON else -WIN if over == params.LOST else -self.draw_cost(pos[0])
        return ours if pos[4] else -ours

    def draw_cost(self, free: Mask) -> int:
        """What a mutual crash costs us, `free` being the open squares of the tick it happens in."""
        if self.root_open is None or (self.root_open - free.bit_count()) >> 1 < params.NEAR_DRAW_TICKS:
            return self.draw_penalty
        return self.far_draw_penalty

    def evaluate(self, pos: TickPosition) -> int:
        """The static score for the mover, the other's committed move made; raises _Timeout past the deadline."""
        if self.armed and self.deadline is not None and time.perf_counter() > self.deadline:
            raise _Timeout
        free, mover, other, committed, mover_is_us, _ = pos
        cost = self.draw_cost(free)
        draw = -cost if mover_is_us else cost
        if not committed:
            return territory.territory_score(self.stride, free, mover, other, False, draw)
        if not free >> committed & 1:
            return params.DOOMED if open_moves(free, mover, self.steps) else draw
        return territory.territory_score(self.stride, free ^ 1 << committed, mover, committed, True, draw)


class VoronoiEngine(TronEngine):
    """The voronoi bot's adapter, a1k0n's 2010 winner as his post-mortem describes it: two plies per tick, our
    move first and the opponent answering it knowing it (pessimistic at every tick), iterative deepening a
    whole tick at a time; leaves scored by Voronoi squares and edges counted along the best chain of chambers
    (`chamber_value`), and by the space to fill once apart. A draw is worth nothing either way.
    Level 5 (`Level5Engine`) differs in its draw cost, the ordering carried from move to move, the whole
    budget, and the exhaustive endgame filler."""

    draw_penalty = 0
    chambers = True
    """Territory counted by chambers; False (an experiment of bench/tron_bench.py) counts plain Voronoi."""
    edge = params.EDGE
    """The worth of one open-neighbour link of a territory square."""
    parity = False
    """Count a chain of chambers by the checkerboard bound of its squares (`chamber_value`)."""

    def score(self, free: Mask, first: Index, second: Index, first_ahead: bool, first_is_us: bool) -> int:
        """The first head's chamber-counted territory against the second's (see `territory_score`)."""
        draw = -self.draw_penalty if first_is_us else self.draw_penalty
        return territory.territory_score(
            self.stride, free, first, second, first_ahead, draw, self.chambers, self.edge, self.parity
        )


class Level5Engine(VoronoiEngine):
    """Level 5's contact adapter: the voronoi bot's search with level 5's own evaluation weights and draws,
    and separations near the root scored by the rides each side can really make (`exact_ticks`)."""

    edge = params.LEVEL5_EDGE
    draw_penalty = params.LEVEL5_DRAW
    draw_ahead = params.LEVEL5_DRAW_AHEAD
    """The draw cost of a move whose root level 5 does not trail (`LEVEL5_DRAW_AHEAD`; 0: `draw_penalty`)."""
    close = params.LEVEL5_CLOSE
    chains = params.LEVEL5_CHAINS
    exact_ticks = params.LEVEL5_EXACT_TICKS
    root_open: int | None = None
    """The root's open-square count, set by the caller: a tick takes two squares, so it dates a position."""
    exact_until: float | None = None
    """After this time no new room is searched for `exact_ride` (None: no limit)."""

    def score(self, free: Mask, first: Index, second: Index, first_ahead: bool, first_is_us: bool) -> int:
        """The first head's score against the second (see `territory_score`), close splits apart by rides."""
        draw = -self.draw_penalty if first_is_us else self.draw_penalty
        return territory.territory_score(
            self.stride,
            free,
            first,
            second,
            first_ahead,
            draw,
            self.chambers,
            self.edge,
            self.parity,
            self.close,
            self.chains,
        )

    def compiled(self) -> bool:
        """Whether `contact_search` (the kernel's, or its Python port in `contact`) searches this engine's tree:
        chambers on, parity off, no close-split rides and no proven separations (level 5's settings since session 7).
        Other settings (benches' experiments) are searched by the core (`joint_search`)."""
        return self.chambers and not self.parity and self.close < 0 and self.exact_ticks <= 0

    def contempt(self, free: Mask, ours: Index, theirs: Index) -> None:
        """Set this move's draw cost from its root: `draw_ahead` (when set) unless level 5's chamber-counted
        territory is below the opponent's, else `draw_penalty` stays (`LEVEL5_DRAW`)."""
        if self.draw_ahead and self.score(free, ours, theirs, False, True) >= 0:
            self.draw_penalty = self.draw_ahead

    def terminal(self, pos: Position) -> int | None:
        """A finished game, or a position at most `exact_ticks` ticks from the root whose riders are apart
        and whose two longest rides are proven (`exact_ride`): scored by them rather than searched on."""
        found = super().terminal(pos)
        free, ours, theirs, pending, _ = pos
        if found is not None or pending or self.root_open is None:
            return found
        ticks = (self.root_open - free.bit_count()) >> 1
        if not 0 < ticks <= self.exact_ticks or voronoi(free, self.stride, ours, theirs).touching:
            return None
        deadline = float("inf") if self.deadline is None else self.deadline
        fresh = self.exact_until is None or time.perf_counter() < self.exact_until
        mine = exact_ride(free, self.stride, ours, deadline, fresh)
        if mine is None:
            return None
        rival = exact_ride(free, self.stride, theirs, deadline, fresh)
        if rival is None:
            return None
        lead = mine - rival
        if lead == 0:
            return -self.draw_penalty
        return (params.APART if lead > 0 else -params.APART) + params.APART_CELL * lead


class FloodfillEngine(TronEngine):
    """The floodfill bot's adapter: the same plies, leaves scored by the two flood fills and its tie-breaks.

    A draw is worth nothing either way to this classic bot.
    """

    draw_penalty = 0

    def score(self, free: Mask, first: Index, second: Index, first_ahead: bool, first_is_us: bool) -> int:
        """Space difference first; then, from the bot's own side, adjacent walls when apart, else nearness."""
        region = flood(free, self.stride, first)
        apart = not spread(1 << second, self.stride) & region
        if apart:
            space = region.bit_count() - flood(free, self.stride, second).bit_count() - first_ahead
            tie = walls_around(free, self.stride, first if first_is_us else second)
        else:
            space = 0
            tie = -manhattan(self.stride, first, second)
        return params.FLOOD_SPACE * space + (tie if first_is_us else -tie)


# -- the searches ------------------------------------------------------------------------------------------------------


def _pessimistic_move(
    grid: Grid, seat: int, ours: Index, theirs: Index, rng: random.Random, start: float, deadline: float
) -> tuple[Direction, dict[str, Any]]:
    """Level 5 in contact: two plies per tick, the opponent answering our move at every tick, leaves scored by
    chamber-counted territory (`Level5Engine`), deepening a whole tick at a time until the deadline: the kernel's
    `contact_search`, or where it is absent or declines the board the same search in Python (`contact`)."""
    engine = Level5Engine(grid.stride, deadline)
    engine.root_open = grid.open.bit_count()
    engine.contempt(grid.open, ours, theirs)
    engine.exact_until = start + params.EXACT_SHARE * (deadline - start)
    if engine.compiled():
        draw, edge, chains = engine.draw_penalty, engine.edge, engine.chains
        job = (grid.open, grid.stride, ours, theirs, draw, edge, chains, deadline, params.MAX_TICK_DEPTH)
        tie: tuple[int] | tuple[int, float, int] = (params.LEVEL5_REDUCTION,)
        if params.LEVEL5_TIE_SHARE and draw != params.LEVEL5_TIE_DRAW:  # a root pinned at the draw value breaks the tie
            pinned = start + params.LEVEL5_TIE_SHARE * (deadline - start)
            tie = (params.LEVEL5_REDUCTION, pinned, params.LEVEL5_TIE_DRAW)
        compiled = kernel.KERNEL
        searched = NotImplemented if compiled is None else compiled.contact_search(*job, *tie)
        if searched is NotImplemented:  # no kernel, or a board it declines: the same search in Python
            searched = contact.contact_search(*job, *tie)
        move, score, depth, nodes, line = searched
        return move, {"depth": depth, "score": score, "pv": _pv(line), "nodes": nodes, "phase": "contact"}
    root: Position = (grid.open, ours, theirs, 0, 0)
    owner = (5, seat)
    table = {key: (-1, flag, score, best) for key, (_, flag, score, best) in _CARRY.pop(owner, {}).items()}
    depths = search_depths(None, odd=False)
    move, found = joint_search(engine, root, grid, seat, depths, 0, rng, start, deadline, 1.0, table)
    engine.armed = False
    line = tuple(_PV_CODES[letter] for letter in found.get("pv", []))
    if len(_CARRY) >= CARRY_OWNERS:
        _CARRY.clear()
    _CARRY[owner] = _main_line(engine, root, line, table)
    return move, {**found, "phase": "contact"}


_PV_CODES = {letter: direction for direction, letter in DIRECTION_NAMES.items()}


def deepen(
    engine: TickEngine,
    root: TickPosition,
    cap: int,
    noise: int,
    rng: random.Random,
    deadline: float,
    owner: tuple[int, int],
) -> tuple[Direction, dict[str, Any]]:
    """Iterative deepening through the core until the deadline, not just until half the time has gone.

    The core starts no new depth after half its time (it would rarely finish); when it stops there, the
    next call asks for two plies more with the same table, so the depths it has done come back from the
    table and the rest of the time goes to the deeper one (cut at the deadline, the last completed depth
    stands). The table starts from the hash moves of this `owner`'s (level, seat) previous move: the last
    tick's main line, two plies on, is tried first.
    """
    table = {key: (-1, flag, score, best) for key, (_, flag, score, best) in _CARRY.pop(owner, {}).items()}
    start = time.perf_counter()
    move, info, nodes = NORTH, None, 0
    depth = cap
    while True:
        left = int((deadline - time.perf_counter()) * 1000)
        if info is not None and left < params.MIN_SEARCH_MS:
            break
        found, more = search(engine, root, Limits(time_ms=max(1, left), depth=depth), rng=rng, noise=noise, tt=table)
        nodes += more.nodes
        if info is not None and more.depth < info.depth:
            break  # cut off before it even redid the depth already done: the earlier answer stands
        move, info = (move if found is None else found), more  # None only when nothing can be played
        spent = time.perf_counter() - start
        solved = abs(info.score) >= PROVEN or (
            info.depth < depth and spent < params.NEXT_DEPTH_SHARE * (deadline - start)
        )
        if solved or info.depth >= cap or len(engine.moves(root)) == 1:
            break
        depth = min(cap, info.depth + engine.depth_step)
    if len(_CARRY) >= CARRY_OWNERS:
        _CARRY.clear()
    _CARRY[owner] = _main_line(engine, root, info.pv, table)
    return move, {"depth": info.depth, "nodes": nodes, "score": info.score, "pv": _pv(info.pv)}


def _main_line(engine: Any, root: Any, line: tuple[int, ...], table: dict[Any, Any]) -> dict[Any, Any]:
    """The table's entries along the main line from `root` (its first two plies are the coming tick): all
    the next move's search needs to try the last main line first. Carrying the whole table would let it
    grow past the core's size limit, after which new positions go unstored."""
    carried = {}
    pos = root
    for move in line:
        key = engine.key(pos)
        if key in table:
            carried[key] = table[key]
        pos = engine.play(pos, move)
        if engine.terminal(pos) is not None:
            break
    return carried


_CARRY: dict[tuple[int, int], dict[Any, Any]] = {}
"""Each (level, seat)'s last search table, whose best moves order the next move's search."""
CARRY_OWNERS = 16


def search_depths(max_depth: int | None, odd: bool) -> list[int]:
    """The depths iterative deepening completes in turn: 1, then odd or even ones only, up to `max_depth`.

    A horizon of one parity keeps the leaves alike from one iteration to the next: with the tick engine,
    odd depths end on the opponent answering our committed move (even ones would end on us answering
    theirs, a tempo the other way); with two plies per tick, even depths end on whole ticks. A level's
    cap is searched even if it has the other parity.
    """
    cap = params.MAX_TICK_DEPTH if max_depth is None else max_depth
    depths = [1, *range(3 if odd else 2, cap + 1, 2)]
    return depths if cap in depths else [*depths, cap]


def joint_search(
    engine: TronEngine | TickEngine,
    root: Position | TickPosition,
    grid: Grid,
    seat: int,
    depths: list[int],
    noise: int,
    rng: random.Random,
    start: float,
    deadline: float,
    next_share: float = params.NEXT_DEPTH_SHARE,
    table: dict[Any, Any] | None = None,
) -> tuple[Direction, dict[str, Any]]:
    """Iterative deepening through the core over `depths`, one call per depth sharing a table, until the deadline.

    No new depth starts after `next_share` of the time (1.0: deepen until the deadline cuts a depth off).

    The floodfill bot's search, kept as it was measured (the levels make one core call, see `_level_move`).

    Each call runs to completion or is cut by the engine's _Timeout (the core looks at the clock only every
    few hundred nodes, too seldom for a tick); only completed depths count, so the answer never waits more
    than one evaluation past the deadline.
    """
    table = {} if table is None else table
    move, found = _quick(grid, seat), {}
    nodes = 0
    for depth in depths:
        engine.armed = depth > 1
        try:
            core: Engine[Any, Direction] = engine  # either engine: the core needs only the Engine protocol
            best, info = search(core, root, Limits(depth=depth), rng=rng, noise=noise, tt=table)
        except _Timeout:
            break
        nodes += info.nodes
        move = move if best is None else best
        found = {"depth": info.depth, "score": info.score, "pv": _pv(info.pv)}
        if abs(info.score) >= WIN - 1000 or info.depth < depth or _past(start, deadline, next_share):
            break
    return move, {**found, "nodes": nodes}


def _pv(line: tuple[int, ...]) -> list[str]:
    """A main line as wire letters; a tick engine's combined moves (reply * 5 + commit) give both."""
    letters: list[str] = []
    for move in line:
        parts = divmod(move, 5) if move >= 5 else (move,)
        letters.extend(DIRECTION_NAMES[d] for d in parts)
    return letters


# -- benchmark positions ---------------------------------------------------------------------------------------


def bench_positions() -> list[tuple[str, TickEngine, TickPosition]]:
    """Fixed positions for bench/search.py: official maps at the start, seat 0 to move (no deadline of its own)."""
    from gamenight.server.games.tron import new_state, official_maps

    found = []
    for name in ("duel-small", "joust", "huge-room"):
        grid = grid_of(new_state(official_maps()[name]))
        found.append((f"{name} start", TickEngine(grid.stride), (grid.open, grid.heads[0], grid.heads[1], 0, True, 0)))
    return found
