"""A frozen copy of the Tron AI as it was before issue 18 (commit 8c7afd3), the "previous level 5" of bench/match.py.

Played with `python -m bench.match --game tron --a 5 --b prev5`: level 5 of this copy (player `prev5`,
or `prevN` for its level N). Only for measuring progress; the server never imports it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from gamenight.server.ai.levels import limits_for
from gamenight.server.ai.search import WIN, Limits, search
from gamenight.server.games.tron import DIRECTION_NAMES, DIRECTIONS, EMPTY, NORTH, TronState

Direction = int
Index = int
Mask = int
Position = tuple[Mask, Index, Index, Index, int]
"""(open squares, our head, their head, our pending target or 0, game-over code): see `TronEngine`."""
TickPosition = tuple[Mask, Index, Index, Index, bool, int]
"""(open squares, mover's head, other's head, other's committed target or 0, mover is us, game-over code)."""
Leaf = Callable[[Mask, int, Index], int]
"""Squares still to ride for a lone rider: (open squares, stride, head) -> count."""

BOTS: dict[str, str] = {
    "chaser": "steps toward the opponent's head (squared distance, ties N, E, S, W)",
    "floodfill": "alpha-beta over both players' moves, leaves scored by the difference of their flood fills",
}

# -- evaluation weights: a1k0n's Voronoi fit is 55 per square and 194 per edge; a degree sum counts edges twice
CELL = 55
EDGE = 97
DRAW_PENALTY = 150_000
"""A mutual crash this tick or the next (`NEAR_DRAW_TICKS`), seen by the AI's own side: worse than anything
but a sure loss. The search underrates us in close fights (the opponent sees our first move), so with a
small penalty here the AI takes a head-on draw a chaser offers where it would in fact have won (measured
at 100 ms on the official maps: 90-95% against the chaser with penalties of 0-40_000, 97-100% with this)."""
NEAR_DRAW_TICKS = 2
"""Mutual crashes within this many ticks of the root cost `DRAW_PENALTY`; later ones `FAR_DRAW_PENALTY`."""
FAR_DRAW_PENALTY = 0
"""What a mutual crash further ahead costs level 5: a draw is worth what an even position is, so it does not
give up a contested gap to a rider that goes for it (a penalty this large everywhere lost those races
against the floodfill bot on keyhole, gate, 15x16, ...: 73-76% instead of 77-82%). Levels 1-4 keep
`DRAW_PENALTY` for every draw."""
APART = 50_000
"""Apart, more space to fill is a near-certain win: this much plus `APART_CELL` per square of lead."""
APART_CELL = 500
DOOMED = 400_000
"""A leaf whose committed move crashes while the opponent can still ride."""
UNIT = CELL + 4 * EDGE
"""A small clear advantage (about one open square of territory), the unit levels scale their noise by."""

# -- time --------------------------------------------------------------------------------------------------
MIN_SEARCH_MS = 6
"""Below this budget only the quick fallback runs."""
DEADLINE_SHARE = 0.9
"""The share of a level's time the search may run; the rest covers the last evaluation and the way home."""
NEXT_DEPTH_SHARE = 0.4
"""Do not start a deeper iteration after this share of the time: it would almost surely not finish."""
MAX_TICK_DEPTH = 60
"""The deepest search without a level cap (the clock stops it long before)."""
LEVEL_PLAN: dict[int, tuple[int | None, int]] = {1: (1, 150), 2: (3, 80), 3: (5, 30), 4: (5, 0), 5: (None, 0)}
"""Each level's depth cap in tick-engine plies and its root-move noise (hundredths of `UNIT`). Caps are odd:
every horizon ends on the opponent answering our move. The shared caps 1-4 gave levels 2 and 4 even
horizons (a tempo the wrong way) and left levels 1-4 unordered; caps 1, 3, 5, 7 left level 5 only 53%
against level 4 (46 games at 100 ms), so level 4 stops at 5 plies; with level 3 at noise 60 and level 4 at
noise 30 the steps 3-2 and 4-3 were 53-57%, so level 3 has noise 30 and level 4 none."""
LEVEL_FAR_DRAW: dict[int, int] = {5: FAR_DRAW_PENALTY}
"""Levels whose far draws cost `FAR_DRAW_PENALTY`; the others pay `DRAW_PENALTY` for every draw."""
CHECK_EVERY = 8
"""Nodes between the core's looks at the clock: a Tron node floods the board, so a tick's budget is few nodes."""
FLOODFILL_MS = 900
"""The floodfill bot thinks this long at most (or the budget, if smaller)."""
FLOOD_SPACE = 1000
"""The floodfill bot's weight of one square of space, above any tie-break (walls 0-4, distance < 100)."""
WON, LOST, DRAWN = 1, 2, 3
"""Game-over codes of a position, for the AI's own side."""


class _Timeout(Exception):
    """Raised from inside a search when the deadline has passed; the last completed depth stands."""


# -- the padded grid ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Grid:
    """A state's board for search: the open squares, the stride, every seat's head index and who rides."""

    open: Mask
    stride: int
    heads: tuple[Index, ...]
    alive: tuple[bool, ...]

    @property
    def steps(self) -> tuple[int, ...]:
        """Index steps by direction (position 0 unused): N, E, S, W."""
        return steps_of(self.stride)

    def open_moves(self, seat: int) -> list[Direction]:
        """The directions whose next square is open for `seat`, in N, E, S, W order."""
        return open_moves(self.open, self.heads[seat], self.steps)


def steps_of(stride: int) -> tuple[int, ...]:
    """Index steps by direction 1-4 (N, E, S, W) in a grid of this stride; position 0 is unused."""
    return (0, -stride, 1, stride, -1)


def open_moves(free: Mask, head: Index, steps: tuple[int, ...]) -> list[Direction]:
    """The directions from `head` onto open squares, in N, E, S, W order."""
    return [d for d in DIRECTIONS if free >> (head + steps[d]) & 1]


def grid_of(state: TronState) -> Grid:
    """The padded search grid of a state: trails and walls blocked, a blocked frame around the map."""
    width, height = state.width, state.height
    stride = width + 3 - width % 2  # odd, so index parity = square colour
    text = bytearray(b"0") * (stride * (height + 2))
    for y in range(height):
        start = (y + 1) * stride + 1
        text[start : start + width] = state.cells[y * width : (y + 1) * width].translate(_OPEN_DIGITS)
    heads = tuple((y + 1) * stride + x + 1 for x, y in state.heads)
    # The text holds bit i at position i; int() reads the most significant digit first.
    return Grid(int(text[::-1], 2), stride, heads, state.alive)


_OPEN_DIGITS = bytes(ord("1") if value == EMPTY else ord("0") for value in range(256))


def spread(front: Mask, stride: int) -> Mask:
    """Every square next to a square of `front` (not masked: callers keep only the open ones)."""
    return front << 1 | front >> 1 | front << stride | front >> stride


def flood(free: Mask, stride: int, start: Index) -> Mask:
    """The open squares connected to square `start` (itself open or a head), `start` excluded."""
    region = 0
    front = 1 << start
    while front:
        front = spread(front, stride) & free & ~region
        region |= front
    return region


@cache
def colour_mask(size: int) -> Mask:
    """The squares of even index (one checkerboard colour) among the first `size` bits."""
    return int("01" * (size // 2 + 1), 2) & ((1 << size) - 1)


def parity_fill(region: Mask, head: Index) -> int:
    """The longest ride through `region` from `head`: steps alternate colours, starting with the other one."""
    same_mask = colour_mask(region.bit_length() + 2)
    if head & 1:
        same_mask <<= 1
    same = (region & same_mask).bit_count()
    other = region.bit_count() - same
    return 2 * min(other, same) + (other > same)


def degree_sum(region: Mask, free: Mask, stride: int) -> int:
    """Open-neighbour links of the squares of `region`: about twice its inner edges (a1k0n's edge term)."""
    return (
        (region & free >> 1).bit_count()
        + (region & free << 1).bit_count()
        + (region & free >> stride).bit_count()
        + (region & free << stride).bit_count()
    )


# -- territory -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Territory:
    """The Voronoi split between two heads: the squares each reaches strictly first, and whether the two
    regions touch (squares reached at once, which count for nobody, or neighbouring squares)."""

    first: Mask
    second: Mask
    touching: bool


def voronoi(free: Mask, stride: int, first: Index, second: Index, first_ahead: bool = False) -> Territory:
    """Split the open squares between two heads by breadth-first search, a whole layer at a time.

    With `first_ahead` the first head expands one layer alone before the two expand together: the second
    has already made this tick's move (its head is its target square, not open in `free`).
    """
    front_a, front_b = 1 << first, 1 << second
    mine = theirs = 0
    touching = False
    if first_ahead:
        front_a = mine = spread(front_a, stride) & free
        free ^= front_a
    while front_a or front_b:
        # spread() written out: this loop is most of the AI's time.
        new_a = (front_a << 1 | front_a >> 1 | front_a << stride | front_a >> stride) & free
        new_b = (front_b << 1 | front_b >> 1 | front_b << stride | front_b >> stride) & free
        both = new_a & new_b
        if both:
            touching = True
            new_a ^= both
            new_b ^= both
        free &= ~(new_a | new_b | both)
        mine |= new_a
        theirs |= new_b
        front_a, front_b = new_a, new_b
    if not touching:
        touching = bool(spread(mine, stride) & theirs)
    return Territory(mine, theirs, touching)


# -- the two-player engine -----------------------------------------------------------------------------------


class TronEngine:
    """The search core's adapter for two riders in contact.

    A position is (open, our head, their head, pending, over). With pending = 0 it is our ply; otherwise
    we have chosen the target square `pending` and it is their ply, which resolves the tick. `over` is 0
    while the game goes on, else WON / LOST / DRAWN for us. Scores are from the side to move's view.
    """

    draw_penalty = DRAW_PENALTY

    def __init__(self, stride: int, deadline: float | None = None) -> None:
        """An adapter for grids of this stride; past `deadline` (once armed) evaluations raise _Timeout."""
        self.stride = stride
        self.steps = steps_of(stride)
        self.deadline = deadline
        self.armed = False

    def key(self, pos: Position) -> int:
        """A hash of the board, both heads and the pending target."""
        return hash(pos[:4])

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
            over = DRAWN if we_crash and they_crash else LOST if we_crash else WON
            return free, ours, theirs, 0, over
        return free ^ (1 << pending | 1 << target), pending, target, 0, 0

    def terminal(self, pos: Position) -> int | None:
        """The score of a finished game (always on our ply): a win, a loss, or the draw penalty."""
        over = pos[4]
        if not over:
            return None
        return WIN if over == WON else -WIN if over == LOST else -self.draw_penalty

    def evaluate(self, pos: Position) -> int:
        """The static score for the side to move; raises _Timeout once the deadline has passed."""
        if self.armed and self.deadline is not None and time.perf_counter() > self.deadline:
            raise _Timeout
        free, ours, theirs, pending, _ = pos
        if not pending:
            return self.score(free, ours, theirs, False, True)
        if not free >> pending & 1:
            return DOOMED if open_moves(free, theirs, self.steps) else self.draw_penalty
        return self.score(free ^ 1 << pending, theirs, pending, True, False)

    def score(self, free: Mask, first: Index, second: Index, first_ahead: bool, first_is_us: bool) -> int:
        """The first head's score against the second (see `territory_score`)."""
        draw = -self.draw_penalty if first_is_us else self.draw_penalty
        return territory_score(self.stride, free, first, second, first_ahead, draw)


def territory_score(stride: int, free: Mask, first: Index, second: Index, first_ahead: bool, draw: int) -> int:
    """The first head's score against the second: Voronoi territory in contact, space to fill apart.

    `draw` is what equal space to fill (both crash on the same tick) is worth to the first head.
    """
    split = voronoi(free, stride, first, second, first_ahead)
    if split.touching:
        cells = split.first.bit_count() - split.second.bit_count()
        edges = degree_sum(split.first, free, stride) - degree_sum(split.second, free, stride)
        return CELL * cells + EDGE * edges
    # Apart: the second rider has already made this tick's move when the first is ahead.
    lead = parity_fill(split.first, first) - parity_fill(split.second, second) - first_ahead
    if lead == 0:
        return draw
    return (APART if lead > 0 else -APART) + APART_CELL * lead


class TickEngine:
    """The levels' adapter: one ply per tick, the mover answering the other's known move and committing its next.

    A position is (open, mover's head, other's head, other's committed target or 0, mover is us, over). At
    the root nobody has committed: we commit our first move (so the opponent answers it knowing it, as in
    the plain pessimistic search). Every later ply replies to the other's committed move, which resolves
    the tick by tron.py's rules, and commits the mover's next move. Who knows whose move alternates from
    tick to tick, so neither side gets the other's move for free all the way down, and leaves are always
    evaluated with one move committed and the mover to answer it. A move code is reply * 5 + commit.
    """

    draw_penalty = DRAW_PENALTY
    far_draw_penalty = DRAW_PENALTY
    """What a mutual crash `NEAR_DRAW_TICKS` or more ticks after the root costs (see `draw_cost`)."""
    root_open: int | None = None
    """The root's open-square count, set by the caller; a tick takes two squares, so it dates a position."""
    depth_step = 2
    """The core deepens by whole ticks plus our commit: depths 1, 3, 5, ... (see `search_depths`)."""
    check_every = CHECK_EVERY

    def __init__(self, stride: int, deadline: float | None = None) -> None:
        """An adapter for grids of this stride; past `deadline` (once armed) evaluations raise _Timeout."""
        self.stride = stride
        self.steps = steps_of(stride)
        self.deadline = deadline
        self.armed = False

    def key(self, pos: TickPosition) -> int:
        """A hash of the board, both heads, the committed target and whose turn it is."""
        return hash(pos[:5])

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
            over = DRAWN if mover_crash and other_crash else WON if mover_crash != mover_is_us else LOST
            return free, other, mover, 0, not mover_is_us, over
        return free ^ (1 << square | 1 << committed), committed, square, square + steps[commit], not mover_is_us, 0

    def terminal(self, pos: TickPosition) -> int | None:
        """The score of a finished game for the side to move."""
        over = pos[5]
        if not over:
            return None
        ours = WIN if over == WON else -WIN if over == LOST else -self.draw_cost(pos[0])
        return ours if pos[4] else -ours

    def draw_cost(self, free: Mask) -> int:
        """What a mutual crash costs us, `free` being the open squares of the tick it happens in."""
        if self.root_open is None or (self.root_open - free.bit_count()) >> 1 < NEAR_DRAW_TICKS:
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
            return territory_score(self.stride, free, mover, other, False, draw)
        if not free >> committed & 1:
            return DOOMED if open_moves(free, mover, self.steps) else draw
        return territory_score(self.stride, free ^ 1 << committed, mover, committed, True, draw)


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
        return FLOOD_SPACE * space + (tie if first_is_us else -tie)


def walls_around(free: Mask, stride: int, square: Index) -> int:
    """How many of the four neighbours of `square` are blocked."""
    return 4 - (spread(1 << square, stride) & free).bit_count()


def manhattan(stride: int, a: Index, b: Index) -> int:
    """The Manhattan distance between two indices of a grid of this stride."""
    ay, ax = divmod(a, stride)
    by, bx = divmod(b, stride)
    return abs(ax - bx) + abs(ay - by)


# -- space filling (apart) ---------------------------------------------------------------------------------


def chamber_fill(free: Mask, stride: int, head: Index) -> int:
    """How many squares a lone rider at `head` can still ride through, estimated over the chamber tree.

    Articulation squares cut the region into chambers; a chamber hanging off a cut square is a dead end
    that can be entered only once, so the estimate is a chamber's size plus the best of the chambers
    hanging off it, down the tree (a1k0n's chambers), capped by the checkerboard parity bound.
    """
    region = flood(free, stride, head)
    if not region:
        return 0
    order, parent, low, disc = _lowpoints(region, stride, head)
    chamber = {head: 0}
    sizes = [0]
    above = [-1]
    for w in order:
        v = parent[w]
        if low[w] >= disc[v]:  # w's subtree hangs off v: a new chamber
            chamber[w] = len(sizes)
            sizes.append(1)
            above.append(chamber[v])
        else:
            chamber[w] = chamber[v]
            sizes[chamber[v]] += 1
    best_below = [0] * len(sizes)
    for c in range(len(sizes) - 1, 0, -1):
        best_below[above[c]] = max(best_below[above[c]], sizes[c] + best_below[c])
    return min(sizes[0] + best_below[0], parity_fill(region, head))


def _lowpoints(
    region: Mask, stride: int, head: Index
) -> tuple[list[Index], dict[Index, Index], dict[Index, int], dict[Index, int]]:
    """Depth-first search from `head` over `region`: discovery order, parents, low-points, discovery times.

    The head is the root and is never re-entered: a cycle through it is no cycle for a rider standing there.
    """
    cells = _members(region)
    steps = steps_of(stride)[1:]
    disc = {head: 1}
    low = {head: 1}
    parent: dict[Index, Index] = {}
    order: list[Index] = []
    stack = [(head, iter(steps))]
    while stack:
        v, pending = stack[-1]
        for step in pending:
            w = v + step
            if w not in cells:
                continue
            if w not in disc:
                disc[w] = low[w] = len(disc) + 1
                parent[w] = v
                order.append(w)
                stack.append((w, iter(steps)))
                break
            if w != parent.get(v):
                low[v] = min(low[v], disc[w])
        else:
            stack.pop()
            if stack:
                u = stack[-1][0]
                low[u] = min(low[u], low[v])
    return order, parent, low, disc


def _members(region: Mask) -> set[Index]:
    """The indices of the set bits of `region`."""
    text = bin(region)[:1:-1]
    return {i for i, bit in enumerate(text) if bit == "1"}


def flood_leaf(free: Mask, stride: int, head: Index) -> int:
    """The floodfill bot's lone-rider leaf: the open squares reachable from `head`."""
    return flood(free, stride, head).bit_count()


def fill_move(
    free: Mask, stride: int, head: Index, deadline: float, max_depth: int | None, leaf: Leaf = chamber_fill
) -> tuple[Direction, dict[str, Any]]:
    """The move that leaves the most squares to ride, by iterative deepening over our own moves alone.

    Leaves are scored by `leaf` (squares still to ride from there). Ties go to the move hugging more walls
    (it wastes least space), then N, E, S, W.
    """
    steps = steps_of(stride)
    choices = open_moves(free, head, steps)
    if len(choices) <= 1:
        return (choices or [NORTH])[0], {"depth": 0, "nodes": 0, "score": len(choices)}
    bound = leaf(free, stride, head)
    best, best_value, done, nodes = choices[0], -1, 0, [0]
    start = time.perf_counter()
    depth = 1
    while max_depth is None or depth <= max_depth:
        try:
            values = {d: _fill_value(free, stride, head + steps[d], depth - 1, deadline, leaf, nodes) for d in choices}
        except _Timeout:
            break
        best = max(choices, key=lambda d: (values[d], walls_around(free, stride, head + steps[d]), -d))
        best_value, done = values[best], depth
        if best_value >= bound or depth >= bound or _past(start, deadline, NEXT_DEPTH_SHARE):
            break
        depth += 1
    return best, {"depth": done, "nodes": nodes[0], "score": best_value}


def _fill_value(free: Mask, stride: int, at: Index, depth: int, deadline: float, leaf: Leaf, nodes: list[int]) -> int:
    """Moves a lone rider stepping onto the open square `at` makes from here on, searched `depth` deep."""
    nodes[0] += 1
    free ^= 1 << at
    if depth == 0:
        if time.perf_counter() > deadline:
            raise _Timeout
        return 1 + leaf(free, stride, at)
    steps = steps_of(stride)
    onward = (
        _fill_value(free, stride, at + steps[d], depth - 1, deadline, leaf, nodes) for d in open_moves(free, at, steps)
    )
    return 1 + max(onward, default=0)


def _past(start: float, deadline: float, share: float) -> bool:
    """True once `share` of the time from `start` to `deadline` is gone."""
    return time.perf_counter() - start >= share * (deadline - start)


# -- three or four riders -------------------------------------------------------------------------------------


def crowd_move(grid: Grid, seat: int) -> tuple[Direction, dict[str, Any]]:
    """Three or more riders: the move with the biggest Voronoi share; a square a rival can also take counts a third."""
    steps = grid.steps
    rivals = [grid.heads[s] for s, riding in enumerate(grid.alive) if riding and s != seat]
    rival_reach = 0
    for head in rivals:
        rival_reach |= spread(1 << head, grid.stride)
    best, best_key = NORTH, None
    for d in grid.open_moves(seat):
        target = grid.heads[seat] + steps[d]
        share = _crowd_share(grid, target, rivals)
        key = (share // 3 if rival_reach >> target & 1 else share, -d)
        if best_key is None or key > best_key:
            best, best_key = d, key
    return best, {"depth": 1, "nodes": 4, "score": best_key[0] if best_key else 0}


def _crowd_share(grid: Grid, target: Index, rivals: list[Index]) -> int:
    """Our Voronoi score standing on `target` while the rivals move this tick too (so one layer ahead)."""
    free = grid.open & ~(1 << target)
    fronts = [0] + [1 << head for head in rivals]
    fronts, free = _layer(fronts, free, grid.stride)
    fronts[0] = 1 << target
    ours = 0
    while any(fronts):
        fronts, free = _layer(fronts, free, grid.stride)
        ours |= fronts[0]
    return CELL * ours.bit_count() + EDGE * degree_sum(ours, grid.open, grid.stride)


def _layer(fronts: list[Mask], free: Mask, stride: int) -> tuple[list[Mask], Mask]:
    """One breadth-first layer for several riders at once; a square two riders reach together is nobody's."""
    news = [spread(front, stride) & free for front in fronts]
    once = twice = 0
    for new in news:
        twice |= once & new
        once |= new
    return [new & ~twice for new in news], free & ~once


# -- the quick fallback and the chaser ---------------------------------------------------------------------------


def _quick(grid: Grid, seat: int) -> Direction:
    """The safest direction without search: not onto a square a rival can also take, then the most space."""
    rival_reach = 0
    for s, riding in enumerate(grid.alive):
        if riding and s != seat:
            rival_reach |= spread(1 << grid.heads[s], grid.stride)
    best, best_key = NORTH, None
    for d in grid.open_moves(seat):
        target = grid.heads[seat] + grid.steps[d]
        room = flood(grid.open & ~(1 << target), grid.stride, target).bit_count()
        key = (not rival_reach >> target & 1, room, -d)
        if best_key is None or key > best_key:
            best, best_key = d, key
    return best


def quick_move(state: TronState, seat: int) -> Direction:
    """The instant fallback for a living seat (no search): a safe direction toward the most space."""
    return _quick(grid_of(state), seat)


def chaser_move(grid: Grid, seat: int) -> Direction:
    """The chaser: of N, E, S, W, the first open square closest (squared distance) to the nearest rival's head."""
    stride, head = grid.stride, grid.heads[seat]
    rivals = [grid.heads[s] for s, riding in enumerate(grid.alive) if riding and s != seat]
    if not rivals:
        return _quick(grid, seat)
    prey = min(rivals, key=lambda h: _squared(stride, head, h))
    best, best_distance = NORTH, None
    for d in grid.open_moves(seat):
        distance = _squared(stride, head + grid.steps[d], prey)
        if best_distance is None or distance < best_distance:
            best, best_distance = d, distance
    return best


def _squared(stride: int, a: Index, b: Index) -> int:
    """The squared Euclidean distance between two indices."""
    ay, ax = divmod(a, stride)
    by, bx = divmod(b, stride)
    return (ax - bx) ** 2 + (ay - by) ** 2


# -- choosing a move ---------------------------------------------------------------------------------------------


def choose(
    state: TronState,
    seat: int,
    *,
    level: int | None,
    bot: str | None,
    budget_ms: int,
    rng: random.Random,
) -> tuple[Direction, dict[str, Any]]:
    """A direction for `seat` (a level's search or a named bot) within about `budget_ms`, and what it found."""
    start = time.perf_counter()
    grid = grid_of(state)
    if bot is not None:
        if bot not in BOTS:
            raise ValueError(f"tron has no bot {bot!r}; it has {', '.join(BOTS)}")
        move, found = _bot_move(grid, seat, bot, budget_ms, start)
        return move, {**_info(move, found, start), "bot": bot}
    if level is None:
        raise ValueError("give a level or a bot")
    move, found = _level_move(grid, seat, level, limits_for(level, budget_ms).time_ms or 1, rng, start)
    return move, {**_info(move, found, start), "level": level}


def _info(move: Direction, found: dict[str, Any], start: float) -> dict[str, Any]:
    """A complete info map: depth, nodes, score, pv (wire letters) and milliseconds."""
    return {
        "depth": found.get("depth", 0),
        "nodes": found.get("nodes", 0),
        "score": found.get("score", 0),
        "pv": found.get("pv", [DIRECTION_NAMES[move]]),
        "ms": int((time.perf_counter() - start) * 1000),
    }


def _rival(grid: Grid, seat: int) -> int | None:
    """The one other rider when exactly two ride, else None."""
    others = [s for s, riding in enumerate(grid.alive) if riding and s != seat]
    return others[0] if len(others) == 1 else None


def _level_move(
    grid: Grid, seat: int, level: int, time_ms: int, rng: random.Random, start: float
) -> tuple[Direction, dict[str, Any]]:
    """A level's move: quick when the budget is tiny, greedy in a crowd, filling when apart, else searching."""
    if time_ms < MIN_SEARCH_MS:
        return _quick(grid, seat), {}
    rival = _rival(grid, seat)
    if rival is None:
        return crowd_move(grid, seat)
    deadline = start + DEADLINE_SHARE * time_ms / 1000
    ours, theirs = grid.heads[seat], grid.heads[rival]
    max_depth, noise = LEVEL_PLAN[level]
    if not voronoi(grid.open, grid.stride, ours, theirs).touching:
        return fill_move(grid.open, grid.stride, ours, deadline, max_depth)
    engine = TickEngine(grid.stride)
    engine.far_draw_penalty = LEVEL_FAR_DRAW.get(level, DRAW_PENALTY)
    engine.root_open = grid.open.bit_count()
    root = (grid.open, ours, theirs, 0, True, 0)
    limits = Limits(time_ms=max(1, int((deadline - time.perf_counter()) * 1000)), depth=max_depth or MAX_TICK_DEPTH)
    move, info = search(engine, root, limits, rng=rng, noise=noise * UNIT // 100)
    return move, {"depth": info.depth, "nodes": info.nodes, "score": info.score, "pv": _pv(info.pv)}


def search_depths(max_depth: int | None, odd: bool) -> list[int]:
    """The depths iterative deepening completes in turn: 1, then odd or even ones only, up to `max_depth`.

    A horizon of one parity keeps the leaves alike from one iteration to the next: with the tick engine,
    odd depths end on the opponent answering our committed move (even ones would end on us answering
    theirs, a tempo the other way); with two plies per tick, even depths end on whole ticks. A level's
    cap is searched even if it has the other parity.
    """
    cap = MAX_TICK_DEPTH if max_depth is None else max_depth
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
) -> tuple[Direction, dict[str, Any]]:
    """Iterative deepening through the core over `depths`, one call per depth sharing a table, until the deadline.

    The floodfill bot's search, kept as it was measured (the levels make one core call, see `_level_move`).

    Each call runs to completion or is cut by the engine's _Timeout (the core looks at the clock only every
    few hundred nodes, too seldom for a tick); only completed depths count, so the answer never waits more
    than one evaluation past the deadline.
    """
    table: dict[Any, Any] = {}
    move, found = _quick(grid, seat), {}
    nodes = 0
    for depth in depths:
        engine.armed = depth > 1
        try:
            best, info = search(engine, root, Limits(depth=depth), rng=rng, noise=noise, tt=table)
        except _Timeout:
            break
        nodes += info.nodes
        move = best
        found = {"depth": info.depth, "score": info.score, "pv": _pv(info.pv)}
        if abs(info.score) >= WIN - 1000 or info.depth < depth or _past(start, deadline, NEXT_DEPTH_SHARE):
            break
    return move, {**found, "nodes": nodes}


def _pv(line: tuple[int, ...]) -> list[str]:
    """A main line as wire letters; a tick engine's combined moves (reply * 5 + commit) give both."""
    letters: list[str] = []
    for move in line:
        parts = divmod(move, 5) if move >= 5 else (move,)
        letters.extend(DIRECTION_NAMES[d] for d in parts)
    return letters


def _bot_move(grid: Grid, seat: int, bot: str, budget_ms: int, start: float) -> tuple[Direction, dict[str, Any]]:
    """A named bot's move."""
    if bot == "chaser":
        return chaser_move(grid, seat), {"depth": 1, "nodes": 4}
    time_ms = min(FLOODFILL_MS, budget_ms)
    if time_ms < MIN_SEARCH_MS:
        return _quick(grid, seat), {}
    rival = _rival(grid, seat)
    if rival is None:
        return _flood_greedy(grid, seat), {"depth": 1, "nodes": 4}
    deadline = start + DEADLINE_SHARE * time_ms / 1000
    ours, theirs = grid.heads[seat], grid.heads[rival]
    if not spread(1 << theirs, grid.stride) & flood(grid.open, grid.stride, ours):
        return fill_move(grid.open, grid.stride, ours, deadline, None, flood_leaf)
    engine = FloodfillEngine(grid.stride, deadline)
    root = (grid.open, ours, theirs, 0, 0)
    depths = search_depths(None, odd=False)
    return joint_search(engine, root, grid, seat, depths, 0, random.Random(0), start, deadline)


def _flood_greedy(grid: Grid, seat: int) -> Direction:
    """The floodfill bot among three or more riders: the open move with the most space, then more walls."""
    best, best_key = NORTH, None
    for d in grid.open_moves(seat):
        target = grid.heads[seat] + grid.steps[d]
        rest = grid.open & ~(1 << target)
        key = (flood(rest, grid.stride, target).bit_count(), walls_around(rest, grid.stride, target), -d)
        if best_key is None or key > best_key:
            best, best_key = d, key
    return best


# -- benchmark positions ---------------------------------------------------------------------------------------


def bench_positions() -> list[tuple[str, TickEngine, TickPosition]]:
    """Fixed positions for bench/search.py: official maps at the start, seat 0 to move (no deadline of its own)."""
    from gamenight.server.games.tron import new_state, official_maps

    found = []
    for name in ("duel-small", "joust", "huge-room"):
        grid = grid_of(new_state(official_maps()[name]))
        found.append((f"{name} start", TickEngine(grid.stride), (grid.open, grid.heads[0], grid.heads[1], 0, True, 0)))
    return found
