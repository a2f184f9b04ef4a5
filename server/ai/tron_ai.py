"""Tron AI: joint-move alpha-beta over Voronoi territory and chambers, space filling once apart, three bots.

The search sees the board as one big int, a bit per square of a padded grid (bit set = open), framed by
blocked squares so a neighbour is always `index + step` and a whole breadth-first layer is four shifts and
a mask. The stride is odd, so an index's parity is its square's colour on a checkerboard: a path alternates
colours, which bounds how many squares a lone rider can fill.

Two riders in contact, levels 1-4 search through the core one tick per ply (`TickEngine`): at the root we
commit our move and the opponent answers it knowing it; every later ply answers the other side's committed
move, which resolves the tick with tron.py's rules, and commits the mover's next move, so who sees whose
move alternates down the tree. Ticks resolve as in tron.py: a target that is a wall or trail crashes, the
same target crashes both, and swapping heads crashes both (each runs into the other's head, which is
trail). Their leaves are scored by Voronoi territory (a1k0n's squares-and-edges form); squares both reach at
once count for nobody; a mutual crash is valued below everything but a sure loss, so a chaser cannot force
draws. Level 5 searches two plies per tick with the opponent answering our move at every tick (a1k0n's
pessimistic search, `VoronoiEngine`, as the voronoi bot does), scoring each side's territory only along
its best chain of chambers (articulation squares by Tarjan's low-links, `chamber_value`), until its
deadline; a draw costs it about five squares (`LEVEL5_DRAW`). The floodfill bot uses flood fills, two
plies per tick (`TronEngine`).
Apart, each rider only fills its own space: levels 1-4 search their moves alone, scored by a chamber-tree
estimate of the squares still reachable; level 5 searches for the longest ride depth-first, cut by the
parity and chamber bounds (per chain of chambers), until it proves one or the deadline comes (`fill_search`).
Three or four riders: a greedy pick of the safe move with the largest Voronoi share.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from types import NotImplementedType
from typing import Any, Protocol

from gamenight.server.ai.levels import limits_for
from gamenight.server.ai.search import PROVEN, WIN, Engine, Limits, search
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
    "voronoi": "a1k0n's 2010 winner re-derived: pessimistic joint-move alpha-beta over Voronoi squares and edges"
    " along the best chain of chambers; greedy-tree space filling apart",
}

# -- evaluation weights: a1k0n's Voronoi fit is 55 per square and 194 per edge; a degree sum counts edges twice
CELL = 55
EDGE = 97
LEVEL5_EDGE = 97
"""Level 5's weight of an open-neighbour link. a1k0n's 194 is per unit of a degree sum too (his edge count adds
each square's open neighbours), but at 194 level 5 scored 68.5% against prev5 against 72.8% at 97 (46 games
each at 100 ms): kept at 97."""
LEVEL5_DRAW = 2000
"""What a mutual crash (or equal room apart) costs level 5: about five squares of territory (`UNIT` is one),
so of two lines it takes the draw only if the other is clearly worse; worth 0, as in a1k0n's bot, it rode into
head-on and equal-room draws where it stood better (against prev5 at 100 ms: 15 draws in 46 and 72.8% at 0;
at 2000 81.5% on the first run of 46 games, 75.3% over four runs of 46; at 8000 68.5% on one run)."""
LEVEL5_DRAW_AHEAD = 0
"""What a draw costs level 5 instead of `LEVEL5_DRAW` on a move whose root it does not trail (its chamber-counted
territory at least the opponent's): contempt, to steer away from equal splits and head-on crashes while even or
ahead, and still to take a draw rather than a loss when behind; 0: `LEVEL5_DRAW` always (session 7)."""
LEVEL5_TIE_SHARE = 0.5
"""Share of the deadline after which level 5's contact search stops deepening while its score is the draw value
(the opponent, who sees our move, can answer every move with a head-on crash or a mirror image); the moves that
tie at that value are then searched again, alone, with draws worth `-LEVEL5_TIE_DRAW`, until the deadline, and the
best of them is played (session 15; the kernel's search only: the Python search still plays the first drawn move;
0: off). Against the code without it, same seeds: prev5 84.8% at 1 s (80.4%) and 82.2% at 100 ms (79.3%),
floodfill 82.6% at 100 ms (81.9%), a1k0n's bot 50.0% at 1 s (50.0%) and 58.7% at 100 ms (60.1%)."""
LEVEL5_TIE_DRAW = 0
"""The draw's cost in that second search: 0, as good as an even position. With -2000 (a draw worth as much to us
as it costs the opponent) level 5 scored 77.5% against prev5 at 100 ms (82.2% with 0, 79.3% without the
tie-break)."""
LEVEL5_REDUCTION = 2
"""Plies (one tick) by which level 5's contact search first searches every move after a node's first (late move
reductions: the kernel's search only; the Python search does not reduce; 0: off). Only a move that beats the best
there is searched again at the full depth. On the `speed` positions the nodes to 18 plies fall from 1.21 million to
0.22 million and the depth reached in 1 s rises from 22 to 28 plies (median); a1k0n's bot at 1 s: 60.3% over 92
games (+23 =65 -4; 62.0% on seed 3 against 50.0% without), prev5 87.7% at 100 ms (82.2% without) (session 16)."""
LEVEL5_CLOSE = -1
"""Apart leaves whose chamber estimates (`chamber_fill`, an upper bound) differ by at most this many squares
are scored by greedy rides (`ride_length`, a lower bound) instead; -1: never. Off: at 2 (session 4) level 5
scored 76.1% against prev5 over 92 games (75.3% over 184 without), 82.6% against floodfill (79.9%) and 80.4%
against level 4 (89.1%), 46 games each at 100 ms: not shown better (`bench.tron_bench games --close 2`)."""
LEVEL5_CHAINS = False
"""Level 5's apart leaves take the checkerboard bound per chain of chambers (`chain_fill`, a tighter upper bound
of the longest ride) rather than over the whole region (`chamber_fill`). Off: on (session 6, 100 ms against
prev5, run side by side with main's level 5 and this one without it on one loaded machine) it scored 68.8% over
138 games against 70.3% without and 73.2% for main's in the same runs: not shown better
(`bench.tron_bench games --chains 1`)."""
LEVEL5_EXACT_TICKS = 0
"""Within this many ticks of the root, a line on which the riders have come apart ends there for level 5 when
both longest rides are proven by a short search (`exact_ride`), scored by them instead of being searched on
to the horizon and scored by the chamber estimate; 0: never (see `Level5Engine.terminal`). Off: at 2
(session 5, 100 ms against prev5, runs side by side on one loaded machine) it scored 71.7% over 138 games
against 71.2% over 184 without: not shown better (`bench.tron_bench games --exact-ticks 2`); ending every
such line, unproven rides counted by the chamber estimate, scored 66.7% over 138."""
EXACT_MS = 3
"""The time `exact_ride` gives `fill_search` to prove one room's longest ride (a fill node costs 0.1-0.3 ms)."""
EXACT_ROOM = 150
"""Rooms above this many squares keep the chamber estimate at separations near the root."""
EXACT_SHARE = 0.3
"""The share of a move's time after which no new room is searched by `exact_ride` (known ones still count)."""
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
"""Levels whose far draws cost `FAR_DRAW_PENALTY`; the others pay `DRAW_PENALTY` for every draw. Only for
levels searching with the tick engine: level 5 does so only when `LEVEL_PESSIMISTIC` leaves it out."""
LEVEL_PESSIMISTIC = frozenset({5})
"""Levels whose contact search is the pessimistic two-plies-per-tick one (`_pessimistic_move`)."""
CHECK_EVERY = 8
"""Nodes between the core's looks at the clock: a Tron node floods the board, so a tick's budget is few nodes."""
FLOODFILL_MS = 900
"""The floodfill bot thinks this long at most (or the budget, if smaller)."""
FLOOD_SPACE = 1000
"""The floodfill bot's weight of one square of space, above any tie-break (walls 0-4, distance < 100)."""
WON, LOST, DRAWN = 1, 2, 3
"""Game-over codes of a position, for the AI's own side."""
KEY_SHIFT = 32
"""Bits a square index takes in a search key. The keys are exact (a dict then tells positions apart by value);
until session 10 they were `hash()` of the position tuple, and Python hashes an int modulo 2**61 - 1, so two
boards differing by a trail square moved 61 bits along (61 squares on) hashed alike and shared table entries."""


# -- the optional compiled kernel (issue 18, session 8) --------------------------------------------------------


class _Kernel(Protocol):
    """`_tronkernel` (server/ai/_tronkernel.c): level 5's leaf evaluation and, since session 10, its whole contact
    search in C, with exactly this module's results.

    Each function returns NotImplemented for a board it does not handle (wider than 61 squares); the pure code
    then runs."""

    CELL: int
    APART: int
    APART_CELL: int
    WIN: int
    DOOMED: int

    def split(
        self, free: Mask, stride: int, first: Index, second: Index, first_ahead: bool
    ) -> tuple[Mask, Mask, bool] | NotImplementedType: ...
    def chamber_value(
        self, territory: Mask, free: Mask, stride: int, head: Index, edge: int
    ) -> int | NotImplementedType: ...
    def chamber_fill(self, free: Mask, stride: int, head: Index) -> int | NotImplementedType: ...
    def chain_fill(self, free: Mask, stride: int, head: Index) -> int | NotImplementedType: ...
    def room_after(self, free: Mask, stride: int, head: Index) -> int | NotImplementedType: ...
    def greedy_ride(
        self, free: Mask, stride: int, head: Index, deadline: float
    ) -> tuple[list[Index], bool] | NotImplementedType: ...
    def territory_score(
        self,
        stride: int,
        free: Mask,
        first: Index,
        second: Index,
        first_ahead: bool,
        draw: int,
        edge: int,
        chains: bool,
    ) -> int | NotImplementedType: ...
    def contact_search(
        self,
        free: Mask,
        stride: int,
        ours: Index,
        theirs: Index,
        draw_penalty: int,
        edge: int,
        chains: bool,
        deadline: float,
        max_depth: int,
        reduction: int = ...,
        pinned_deadline: float = ...,
        tie_draw: int = ...,
    ) -> tuple[Direction, int, int, int, tuple[Direction, ...]] | NotImplementedType: ...


def _load_kernel() -> _Kernel | None:
    """The compiled kernel, unless `GAMENIGHT_PURE_AI=1` turns it off, it was not built (no C compiler at install
    time) or its weights are not this module's."""
    if os.environ.get("GAMENIGHT_PURE_AI") == "1":
        return None
    try:
        from gamenight.server.ai import _tronkernel
    except ImportError:
        return None
    kernel: _Kernel = _tronkernel
    if (kernel.CELL, kernel.APART, kernel.APART_CELL, kernel.WIN, kernel.DOOMED) != (
        CELL,
        APART,
        APART_CELL,
        WIN,
        DOOMED,
    ):
        return None
    return kernel


KERNEL = _load_kernel()
"""The compiled kernel in use, or None: the pure-Python code (read once, at import; `GAMENIGHT_PURE_AI=1` turns
it off). `_split`, `chamber_value` (parity off), `chamber_fill`, `chain_fill` and `territory_score` (chambers on,
parity off, no close-split rides: level 5's leaves) hand their work to it; tests set it to None for the pure path."""


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
    return Territory(*_split(free, stride, first, second, first_ahead))


def _split(free: Mask, stride: int, first: Index, second: Index, first_ahead: bool) -> tuple[Mask, Mask, bool]:
    """`voronoi` as a plain tuple (first's squares, second's, touching): the evaluation's hot path.

    Only the second side's squares and the squares both reach at once are gathered layer by layer; the
    first side's are what was taken and is neither, at the end. Once the second front dies out, the first
    floods on alone.
    """
    if KERNEL is not None:
        found = KERNEL.split(free, stride, first, second, first_ahead)
        if found is not NotImplemented:
            return found
    front_a, front_b = 1 << first, 1 << second
    start = free
    theirs = both_ways = 0
    if first_ahead:
        front_a = (front_a << 1 | front_a >> 1 | front_a << stride | front_a >> stride) & free
        free ^= front_a
    while front_b:
        # spread() written out: this loop is most of the AI's time.
        new_a = (front_a << 1 | front_a >> 1 | front_a << stride | front_a >> stride) & free
        new_b = (front_b << 1 | front_b >> 1 | front_b << stride | front_b >> stride) & free
        free ^= new_a | new_b
        both = new_a & new_b
        if both:
            both_ways |= both
            new_a ^= both
            new_b ^= both
        theirs |= new_b
        front_a, front_b = new_a, new_b
    while front_a:
        front_a = (front_a << 1 | front_a >> 1 | front_a << stride | front_a >> stride) & free
        free ^= front_a
    mine = start ^ free ^ theirs ^ both_ways
    if both_ways:
        return mine, theirs, True
    return mine, theirs, bool((mine << 1 | mine >> 1 | mine << stride | mine >> stride) & theirs)


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
        """The board, both heads and the pending target packed into one int, exactly (see `KEY_SHIFT`)."""
        free, ours, theirs, pending, _ = pos
        return ((free << KEY_SHIFT | ours) << KEY_SHIFT | theirs) << KEY_SHIFT | pending

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


def territory_score(
    stride: int,
    free: Mask,
    first: Index,
    second: Index,
    first_ahead: bool,
    draw: int,
    chambers: bool = False,
    edge: int = EDGE,
    parity: bool = False,
    close: int = -1,
    chains: bool = False,
) -> int:
    """The first head's score against the second: Voronoi territory in contact, space to fill apart.

    `draw` is what equal space to fill (both crash on the same tick) is worth to the first head. With
    `chambers` each side's territory counts only along its best chain of chambers (`chamber_value`), an
    open-neighbour link being worth `edge`. Apart, when the chamber estimates are at most `close` squares
    from each other, each side counts the squares of a greedy ride instead (`ride_length`, a lower bound).
    With `chains` the apart estimate takes the parity bound per chain of chambers (`chain_fill`).
    """
    if KERNEL is not None and chambers and not parity and close < 0:
        score = KERNEL.territory_score(stride, free, first, second, first_ahead, draw, edge, chains)
        if score is not NotImplemented:
            return score
    mine, theirs, touching = _split(free, stride, first, second, first_ahead)
    if touching:
        if chambers:
            return chamber_value(mine, free, stride, first, edge, parity) - chamber_value(
                theirs, free, stride, second, edge, parity
            )
        cells = mine.bit_count() - theirs.bit_count()
        edges = degree_sum(mine, free, stride) - degree_sum(theirs, free, stride)
        return CELL * cells + EDGE * edges
    # Apart: the second rider has already made this tick's move when the first is ahead. With `chambers` the
    # room each can fill is its chamber tree capped by the parity bound (dead ends only one at a time).
    if chambers:
        fill = chain_fill if chains else chamber_fill
        lead = fill(free, stride, first) - fill(free, stride, second) - first_ahead
        if -close <= lead <= close:
            ours, theirs = ride_length(free, stride, first), ride_length(free, stride, second)
            if ours >= 0 and theirs >= 0:
                lead = ours - theirs - first_ahead
    else:
        lead = parity_fill(mine, first) - parity_fill(theirs, second) - first_ahead
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
        """The board, both heads, the committed target and whose turn it is packed into one int, exactly."""
        free, mover, other, committed, mover_is_us, _ = pos
        return (((free << KEY_SHIFT | mover) << KEY_SHIFT | other) << KEY_SHIFT | committed) << 1 | mover_is_us

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
    edge = EDGE
    """The worth of one open-neighbour link of a territory square."""
    parity = False
    """Count a chain of chambers by the checkerboard bound of its squares (`chamber_value`)."""

    def score(self, free: Mask, first: Index, second: Index, first_ahead: bool, first_is_us: bool) -> int:
        """The first head's chamber-counted territory against the second's (see `territory_score`)."""
        draw = -self.draw_penalty if first_is_us else self.draw_penalty
        return territory_score(
            self.stride, free, first, second, first_ahead, draw, self.chambers, self.edge, self.parity
        )


class Level5Engine(VoronoiEngine):
    """Level 5's contact adapter: the voronoi bot's search with level 5's own evaluation weights and draws,
    and separations near the root scored by the rides each side can really make (`exact_ticks`)."""

    edge = LEVEL5_EDGE
    draw_penalty = LEVEL5_DRAW
    draw_ahead = LEVEL5_DRAW_AHEAD
    """The draw cost of a move whose root level 5 does not trail (`LEVEL5_DRAW_AHEAD`; 0: `draw_penalty`)."""
    close = LEVEL5_CLOSE
    chains = LEVEL5_CHAINS
    exact_ticks = LEVEL5_EXACT_TICKS
    root_open: int | None = None
    """The root's open-square count, set by the caller: a tick takes two squares, so it dates a position."""
    exact_until: float | None = None
    """After this time no new room is searched for `exact_ride` (None: no limit)."""

    def score(self, free: Mask, first: Index, second: Index, first_ahead: bool, first_is_us: bool) -> int:
        """The first head's score against the second (see `territory_score`), close splits apart by rides."""
        draw = -self.draw_penalty if first_is_us else self.draw_penalty
        return territory_score(
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
        """Whether the kernel's `contact_search` searches this engine's tree (exactly, with no reductions): chambers
        on, parity off, no close-split rides and no proven separations (level 5's settings since session 7)."""
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
        return (APART if lead > 0 else -APART) + APART_CELL * lead


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


# -- chambers in contact (level 5's evaluation) ------------------------------------------------------------------


def local_cuts(graph: Mask, stride: int) -> Mask:
    """The squares whose open neighbours (in `graph`) fall into two or more groups around them, a corner
    joining the two sides it touches: every articulation square is one (a square whose neighbours stay
    joined round it cuts nothing), bit-parallel over the whole board (`RING_GROUPS` square by square)."""
    north, south = graph << stride, graph >> stride
    east, west = graph >> 1, graph << 1
    north_east, north_west = north >> 1, north << 1
    south_east, south_west = south >> 1, south << 1
    a = north & ~(west & north_west)
    b = east & ~(north & north_east)
    c = south & ~(east & south_east)
    d = west & ~(south & south_west)
    return graph & (((a | b) & (c | d)) | (a & b) | (c & d))


def chamber_value(territory: Mask, free: Mask, stride: int, head: Index, edge: int = EDGE, parity: bool = False) -> int:
    """What a rider can really use of its Voronoi `territory`: `CELL`·squares + `edge`·open-neighbour links
    along the best chain of the chamber tree from `head`.

    Articulation squares (Tarjan's low-links over the territory, head included) cut it into chambers; a ride
    enters a chamber through its cut square and cannot come back, so only one chain of chambers from the
    head down can be had, the most valuable. The chamber that touches the opponent's territory (the
    battlefront, where the rest of the board is fought for) is exclusive with the dead ends hanging off
    elsewhere: the chain holds one or the other, never both. With `parity` the chain's squares count only as
    far as the checkerboard bound lets a ride through them (a1k0n's fillable squares).
    """
    if KERNEL is not None and not parity:
        compiled = KERNEL.chamber_value(territory, free, stride, head, edge)
        if compiled is not NotImplemented:
            return compiled
    graph = territory | 1 << head
    cuts = local_cuts(graph, stride)
    if not territory & cuts:
        squares = parity_fill(territory, head) if parity else territory.bit_count()
        return CELL * squares + edge * degree_sum(territory, free, stride)
    key = (territory, head)
    tree = _TREES.get(key)
    if tree is None:
        if len(_TREES) >= TREE_CACHE:
            _TREES.clear()
        tree = _TREES[key] = _chamber_tree(graph, stride, head, cuts)
    masks, above = tree
    if len(masks) == 1:
        return 0
    if len(masks) == 2:
        squares = parity_fill(masks[1], head) if parity else masks[1].bit_count()
        return CELL * squares + edge * degree_sum(masks[1], free, stride)
    east, west, south, north = free >> 1, free << 1, free >> stride, free << stride
    value = [
        CELL * mask.bit_count()
        + edge
        * (
            (mask & east).bit_count()
            + (mask & west).bit_count()
            + (mask & south).bit_count()
            + (mask & north).bit_count()
        )
        for mask in masks
    ]
    below = [0] * len(masks)
    if not parity:
        for c in range(len(masks) - 1, 0, -1):
            chain = value[c] + below[c]
            if chain > below[above[c]]:
                below[above[c]] = chain
        return value[0] + below[0]
    pick = [0] * len(masks)
    for c in range(len(masks) - 1, 0, -1):
        chain = value[c] + below[c]
        if chain > below[above[c]]:
            below[above[c]] = chain
            pick[above[c]] = c
    squares, c = masks[0], pick[0]
    while c:
        squares |= masks[c]
        c = pick[c]
    return value[0] + below[0] + CELL * (parity_fill(squares, head) - squares.bit_count())


_TREES: dict[tuple[Mask, Index], tuple[list[Mask], list[int]]] = {}
"""Chamber trees by (territory, head): a search meets the same territory again and again (about 40% of its
leaves on random positions), and the tree does not depend on the squares outside it."""
TREE_CACHE = 8192


def _chamber_tree(graph: Mask, stride: int, head: Index, cuts: Mask) -> tuple[list[Mask], list[int]]:
    """The chambers of `graph` (a territory and its head) from `head`: each chamber's squares (the first,
    the head's own, without the head) and the chamber it hangs off (-1 for the first).

    Only the squares of `cuts` (`local_cuts`: every articulation square is one) and the head can cut the
    graph, so the rest falls into pieces no single square splits (flooded a whole layer at a time), and
    Tarjan's low-links run over the much smaller graph of those squares and pieces. A square whose
    subtree cannot climb above its parent square starts a new chamber; below a piece nothing does (a
    piece is no single square, it cuts nothing). Three times faster than the same search square by square.
    """
    cuts = cuts & graph | 1 << head
    pieces = _pieces(graph ^ cuts, stride)
    squares = _bits(cuts)
    node_of = {square: n for n, square in enumerate(squares)}
    links = _links(squares, pieces, node_of, cuts, stride)
    order, parent, low_of = _low_links(links, node_of[head])
    count = len(squares)
    # Chambers in discovery order: a node whose subtree cannot climb above its parent square starts a new one.
    chamber = [0] * len(order)
    above = [-1]
    masks = [0]
    for wi in range(1, len(order)):
        pi = parent[wi]
        w = order[wi]
        mask = 1 << squares[w] if w < count else pieces[w - count]
        if low_of[wi] >= pi and order[pi] < count:
            chamber[wi] = len(masks)
            above.append(chamber[pi])
            masks.append(mask)
        else:
            c = chamber[wi] = chamber[pi]
            masks[c] |= mask
    return masks, above


def _pieces(rest: Mask, stride: int) -> list[Mask]:
    """The connected pieces of `rest` (flooded a whole layer at a time)."""
    pieces = []
    while rest:
        front = rest & -rest
        before = rest
        rest ^= front
        while front:
            front = (front << 1 | front >> 1 | front << stride | front >> stride) & rest
            rest ^= front
        pieces.append(before ^ rest)
    return pieces


def _links(
    squares: list[Index], pieces: list[Mask], node_of: dict[Index, int], cuts: Mask, stride: int
) -> list[list[int]]:
    """The graph of cut squares (nodes 0..len(squares)-1) and pieces (the nodes after): each node's neighbours."""
    get = node_of.get
    links: list[list[int]] = []
    for square in squares:
        mine = []
        for m in (get(square - stride), get(square + 1), get(square + stride), get(square - 1)):
            if m is not None:
                mine.append(m)
        links.append(mine)
    for p, piece in enumerate(pieces, len(squares)):
        border = (piece << 1 | piece >> 1 | piece << stride | piece >> stride) & cuts
        mine = []
        while border:
            low = border & -border
            border ^= low
            c = node_of[low.bit_length() - 1]
            mine.append(c)
            links[c].append(p)
        links.append(mine)
    return links


def _low_links(links: list[list[int]], root: int) -> tuple[list[int], list[int], list[int]]:
    """Tarjan's low-links from `root` without recursion (each level holds its node and the iterator of its links):
    the nodes in discovery order, each discovered node's parent (by discovery index) and low-link."""
    disc = [-1] * len(links)
    disc[root] = 0
    low_of = [0]
    parent = [-1]
    order = [root]
    stack = [(0, iter(links[root]))]
    while stack:
        vi, around = stack[-1]
        pi = parent[vi]
        for w in around:
            wi = disc[w]
            if wi < 0:
                wi = disc[w] = len(order)
                low_of.append(wi)
                parent.append(vi)
                order.append(w)
                stack.append((wi, iter(links[w])))
                break
            if wi < low_of[vi] and wi != pi:
                low_of[vi] = wi
        else:
            stack.pop()
            if pi >= 0 and low_of[vi] < low_of[pi]:
                low_of[pi] = low_of[vi]
    return order, parent, low_of


def _bits(mask: Mask) -> list[Index]:
    """The indices of the set bits of `mask`, lowest first (few: cut squares)."""
    found = []
    while mask:
        low = mask & -mask
        found.append(low.bit_length() - 1)
        mask ^= low
    return found


# -- space filling (apart) ---------------------------------------------------------------------------------


def chamber_fill(free: Mask, stride: int, head: Index) -> int:
    """How many squares a lone rider at `head` can still ride through, estimated over the chamber tree.

    Articulation squares cut the region into chambers; a chamber hanging off a cut square is a dead end
    that can be entered only once, so the estimate is a chamber's size plus the best of the chambers
    hanging off it, down the tree (a1k0n's chambers), capped by the checkerboard parity bound.
    """
    if KERNEL is not None:
        found = KERNEL.chamber_fill(free, stride, head)
        if found is not NotImplemented:
            return found
    region = flood(free, stride, head)
    if not region:
        return 0
    graph = region | 1 << head
    masks, above = _chamber_tree(graph, stride, head, local_cuts(graph, stride))
    sizes = [mask.bit_count() for mask in masks]
    best_below = [0] * len(sizes)
    for c in range(len(sizes) - 1, 0, -1):
        best_below[above[c]] = max(best_below[above[c]], sizes[c] + best_below[c])
    return min(sizes[0] + best_below[0], parity_fill(region, head))


def chain_fill(free: Mask, stride: int, head: Index) -> int:
    """`chamber_fill` with the checkerboard bound taken per chain of chambers, not over the whole region: a ride
    goes down one chain from the head and alternates colours within it, so it is at most the best chain's own
    parity bound (at most `chamber_fill`, still never below the longest ride)."""
    if KERNEL is not None:
        found = KERNEL.chain_fill(free, stride, head)
        if found is not NotImplemented:
            return found
    region = flood(free, stride, head)
    if not region:
        return 0
    graph = region | 1 << head
    masks, above = _chamber_tree(graph, stride, head, local_cuts(graph, stride))
    same_mask = colour_mask(region.bit_length() + 2)
    if head & 1:
        same_mask <<= 1
    same = [(mask & same_mask).bit_count() for mask in masks]
    other = [mask.bit_count() - s for mask, s in zip(masks, same, strict=True)]
    best = 2 * min(other[0], same[0]) + (other[0] > same[0])
    for c in range(1, len(masks)):  # a chamber's parent comes before it: totals down each chain in one pass
        up = above[c]
        same[c] += same[up]
        other[c] += other[up]
        bound = 2 * min(other[c], same[c]) + (other[c] > same[c])
        if bound > best:
            best = bound
    return best


def ride_length(free: Mask, stride: int, head: Index) -> int:
    """The squares of `greedy_ride` from `head`: a ride that exists, so a lower bound of the longest (exact on
    most rooms just after a separation, where the chamber estimate is a square or two over), cached by region;
    -1 for a region of more than `RIDE_ROOM` squares (too slow to ride at a leaf)."""
    region = flood(free, stride, head)
    if region.bit_count() > RIDE_ROOM:
        return -1
    key = (region, head)
    length = _RIDES.get(key)
    if length is None:
        if len(_RIDES) >= RIDE_CACHE:
            _RIDES.clear()
        length = _RIDES[key] = len(greedy_ride(region, stride, head))
    return length


_RIDES: dict[tuple[Mask, Index], int] = {}
"""`ride_length` by (region, head): sibling leaves of a search share one side's region."""
RIDE_CACHE = 8192
RIDE_ROOM = 400


def exact_ride(free: Mask, stride: int, head: Index, deadline: float, fresh: bool = True) -> int | None:
    """The longest ride a lone rider at `head` can make, when a short search proves it: the chamber estimate
    (`chamber_fill`, an upper bound) if the greedy ride (`ride_length`) reaches it, else the longest ride
    `fill_search` proves within `EXACT_MS`; None when it proves none, for a room over `EXACT_ROOM` squares,
    and for a room not yet searched when not `fresh`. Cached by region. Raises _Timeout past `deadline`."""
    region = flood(free, stride, head)
    key = (region, head)
    length = _EXACT.get(key)
    if length is not None:
        return length if length >= 0 else None
    if region.bit_count() > EXACT_ROOM or not fresh:
        return None
    length = chamber_fill(free, stride, head)
    if ride_length(free, stride, head) < length:
        fill = fill_search(region, stride, head, min(deadline, time.perf_counter() + EXACT_MS / 1000))
        if time.perf_counter() > deadline:
            raise _Timeout
        length = len(fill.best) if fill.proven else -1
    if len(_EXACT) >= EXACT_CACHE:
        _EXACT.clear()
    _EXACT[key] = length
    return length if length >= 0 else None


_EXACT: dict[tuple[Mask, Index], int] = {}
"""`exact_ride` by (region, head), -1 for a room it proved nothing of: a room met near the root is met again
on the next ticks' searches."""
EXACT_CACHE = 8192


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


# -- the endgame: exhaustive space filling (level 5, apart) --------------------------------------------------


def _ring_table() -> tuple[int, ...]:
    """For each 8-bit ring of open squares around a square (N, NE, E, SE, S, SW, W, NW = bits 0-7): how many
    separate groups its open N/E/S/W neighbours form within the ring (a corner joins the two sides it
    touches). Two or more groups: taking the square may cut the region in two (a local articulation point)."""
    table = []
    for ring in range(256):
        groups = 0
        for start in (0, 2, 4, 6):
            # Count a group at each open side whose ring-predecessor chain (through open corners) is closed.
            if not ring >> start & 1:
                continue
            corner, side = (start - 1) % 8, (start - 2) % 8
            if ring >> corner & 1 and ring >> side & 1:
                continue  # joined with the previous side through the open corner
            groups += 1
        if groups == 0 and ring & 0b01010101 == 0b01010101:
            groups = 1  # every side and corner open: one ring all round
        table.append(groups)
    return tuple(table)


RING_GROUPS = _ring_table()


def ring_of(free: Mask, stride: int, at: Index) -> int:
    """The 8-bit ring of `at`'s open neighbours, N first, clockwise (see `RING_GROUPS`)."""
    top = free >> (at - stride - 1)
    mid = free >> (at - 1)
    low = free >> (at + stride - 1)
    return (
        (top >> 1 & 1)
        | (top >> 2 & 1) << 1
        | (mid >> 2 & 1) << 2
        | (low >> 2 & 1) << 3
        | (low >> 1 & 1) << 4
        | (low & 1) << 5
        | (mid & 1) << 6
        | (top & 1) << 7
    )


def room_after(free: Mask, stride: int, head: Index) -> tuple[int, Mask]:
    """The most squares a lone rider at `head` could still ride by the parity bound, entering just one of the
    regions its open neighbours lead into (a square joining two of them is a cut: only one can be had),
    and that region."""
    best, best_region, seen = 0, 0, 0
    for step in (-stride, 1, stride, -1):
        at = head + step
        if not free >> at & 1 or seen >> at & 1:
            continue
        region = flood(free, stride, at) | 1 << at
        seen |= region
        room = parity_fill(region, head)
        if room > best:
            best, best_region = room, region
    return best, best_region


def _room(free: Mask, stride: int, head: Index) -> tuple[int, Mask]:
    """`room_after` for the endgame search: with the per-chain bound on (`FILL_CHAINS`) only the room is used, and
    the kernel computes it when there is one (the region is then left out: 0)."""
    if FILL_CHAINS and KERNEL is not None:
        room = KERNEL.room_after(free, stride, head)
        if room is not NotImplemented:
            return room, 0
    return room_after(free, stride, head)


@dataclass(slots=True)
class FillSearch:
    """One endgame search: the best ride found so far (squares in order), its proof target and its effort."""

    free: Mask
    stride: int
    head: Index
    deadline: float
    bound: int
    best: list[Index]
    nodes: int = 0
    depth: int = 0
    complete: bool = False
    """True once a whole iteration ran without cutting a ride short: `best` is then the longest there is."""
    cut: bool = False
    seen: set[tuple[Mask, Index]] = field(default_factory=set)
    """The (open squares, head) nodes of the current iteration: reaching one again adds nothing."""

    @property
    def proven(self) -> bool:
        """True when `best` is known to be the longest ride."""
        return self.complete or len(self.best) >= self.bound


def greedy_ride(
    free: Mask, stride: int, head: Index, deadline: float | None = None, partial: bool = False
) -> list[Index]:
    """A fast full ride from `head`: hug the walls (fewest onward exits), and where a step could cut the room
    in two (a local articulation point) take the step keeping the most room by the parity bound.

    Past `deadline` (if given) it raises _Timeout, or with `partial` returns the ride so far.
    """
    if KERNEL is not None:
        found = KERNEL.greedy_ride(free, stride, head, -1.0 if deadline is None else deadline)
        if found is not NotImplemented:
            ride, late = found
            if late and not partial:
                raise _Timeout
            return ride
    steps = (-stride, 1, stride, -1)
    path: list[Index] = []
    while True:
        if deadline is not None and len(path) & 3 == 0 and time.perf_counter() > deadline:
            if partial:
                return path
            raise _Timeout
        options = [head + s for s in steps if free >> (head + s) & 1]
        if not options:
            return path
        head = options[0] if len(options) == 1 else _greedy_step(free, stride, head, options)
        free ^= 1 << head
        path.append(head)


def _greedy_step(free: Mask, stride: int, head: Index, options: list[Index]) -> Index:
    """`greedy_ride`'s choice among several steps: the most room kept where a step cuts, else the fewest exits."""
    steps = (-stride, 1, stride, -1)
    best_key: tuple[int, int] | None = None
    pick = options[0]
    # The head itself may join separate regions: then each step commits to one of them.
    split = RING_GROUPS[ring_of(free, stride, head)] >= 2
    for at in options:
        after = free ^ 1 << at
        exits = sum(after >> (at + s) & 1 for s in steps)
        cuts = split or RING_GROUPS[ring_of(after, stride, at)] >= 2
        # No cut: the whole room stays open, as good as any other step that cuts nothing.
        room = room_after(after, stride, at)[0] if cuts else 1 << 20
        key = (room, -exits)
        if best_key is None or key > best_key:
            best_key, pick = key, at
    return pick


def fill_search(free: Mask, stride: int, head: Index, deadline: float, seed: list[Index] | None = None) -> FillSearch:
    """The longest ride from `head` that the time allows, by iterative deepening over depth-first searches.

    Each iteration branches over every step up to its horizon and finishes each ride greedily from there;
    a branch is cut when the squares ridden plus the parity bound of the room left (one region only, see
    `room_after`) cannot beat the best ride found. It stops when a ride reaches the root's bound (the chamber
    tree capped by the parity bound: no ride is longer), when an iteration cut no ride short (the search
    was exhaustive), or at the deadline; `seed` is a ride found before, tried first.
    """
    bound, region = room_after(free, stride, head)
    if region.bit_count() <= CHAMBER_ROOT_ROOM:
        bound = min(bound, (chain_fill if FILL_CHAINS else chamber_fill)(free, stride, head))
    first = greedy_ride(free, stride, head, deadline, partial=True)
    if seed is not None and len(seed) > len(first):
        first = seed
    fill = FillSearch(free, stride, head, deadline, bound, first)
    horizon = 1
    while not fill.proven and horizon <= bound:
        fill.cut = False
        fill.seen.clear()
        try:
            _fill_branch(fill, free, head, [], horizon)
        except _Timeout:
            break
        fill.depth = horizon
        if not fill.cut:
            fill.complete = True
        horizon += 1
    return fill


def _fill_branch(fill: FillSearch, free: Mask, head: Index, path: list[Index], horizon: int) -> None:
    """Search the rides continuing `path` (ending at `head`, `free` left open), branching `horizon` more steps."""
    fill.nodes += 1
    if time.perf_counter() > fill.deadline:  # a node floods the room: reading the clock is cheap beside it
        raise _Timeout
    # The same squares ridden in another order to the same head: the same rides from here, already searched.
    if horizon > 0:
        key = (free, head)
        if key in fill.seen:
            return
        fill.seen.add(key)
    stride = fill.stride
    room, region = _room(free, stride, head)
    if len(path) + room <= len(fill.best):
        return
    if room <= CHAMBER_BOUND_ROOM:
        # The chamber tree is the tighter bound (dead ends can be had only one at a time), at a price. With
        # `FILL_CHAINS` it is taken over every region the head leads into (the parity bound above keeps only the
        # best one) and capped by the parity bound of each chain (`chain_fill`).
        if FILL_CHAINS:
            room = min(room, chain_fill(free, stride, head))
        else:
            room = min(room, chamber_fill(region, stride, head))
        if len(path) + room <= len(fill.best):
            return
    if horizon == 0:
        rest = greedy_ride(free, stride, head, fill.deadline)
        if len(path) + len(rest) > len(fill.best):
            fill.best = path + rest
        if len(rest) < room:
            fill.cut = True
        if len(fill.best) >= fill.bound:
            raise _Timeout  # proven: stop at once (the caller sees `proven`)
        return
    steps = (-stride, 1, stride, -1)
    options = []
    for step in steps:
        at = head + step
        if free >> at & 1:
            after = free ^ 1 << at
            options.append((sum(after >> (at + s) & 1 for s in steps), at, after))
    options.sort()
    # The seed / best ride's next step first: the previous principal variation.
    depth = len(path)
    if depth < len(fill.best) and fill.best[:depth] == path:
        preferred = fill.best[depth]
        options.sort(key=lambda option: option[1] != preferred)
    for _, at, after in options:
        path.append(at)
        _fill_branch(fill, after, at, path, horizon - 1)
        path.pop()
        if len(fill.best) >= fill.bound:
            return


CHAMBER_BOUND_ROOM = 64
"""Nodes with at most this much room left are bounded by the chamber tree too, not only by the parity bound."""
CHAMBER_ROOT_ROOM = 700
FILL_CHAINS = True
"""The endgame search bounds its rides by the checkerboard bound per chain of chambers (`chain_fill`) where it
uses the chamber tree (at the root, and at nodes with at most `CHAMBER_BOUND_ROOM` squares left), rather than
by the chamber tree capped by the parity bound of the whole region (`chamber_fill`): never looser, so it proves
rides sooner and cuts more branches (session 7)."""
"""The endgame search's proof target is the chamber tree capped by the parity bound up to this much room,
the parity bound alone beyond (the chamber tree of a huge region takes too long to build for a tick)."""


_PLANS: dict[tuple[Mask, Index], tuple[list[Index], bool]] = {}
"""Rides found on earlier ticks, by (our region, head) after their first step: (the rest of the ride, proven).
A lone rider's region only shrinks along the ride, so the next tick finds its plan here and, if it was
proven, plays on at once; otherwise the plan seeds the new search. Bounded by `PLAN_CACHE`."""
PLAN_CACHE = 64


def endgame_move(free: Mask, stride: int, head: Index, deadline: float) -> tuple[Direction, dict[str, Any]]:
    """Level 5's move when apart: the first step of the longest ride `fill_search` finds by the deadline."""
    steps = steps_of(stride)
    choices = open_moves(free, head, steps)
    if not choices:
        return NORTH, {"depth": 0, "nodes": 0, "score": 0}
    region = flood(free, stride, head)
    planned = _PLANS.get((region, head))
    if planned is not None and planned[1] and planned[0]:
        rest, proven = planned
        fill_nodes, fill_depth, ride = 0, 0, rest
    else:
        fill = fill_search(region, stride, head, deadline, planned[0] if planned else None)
        ride, proven, fill_nodes, fill_depth = fill.best, fill.proven, fill.nodes, fill.depth
    if not ride:
        return choices[0], {"depth": 0, "nodes": fill_nodes, "score": 0}
    if len(_PLANS) >= PLAN_CACHE:
        _PLANS.clear()
    _PLANS[(region ^ 1 << ride[0], ride[0])] = (ride[1:], proven)
    move = next(d for d in choices if head + steps[d] == ride[0])
    return move, {"depth": fill_depth, "nodes": fill_nodes, "score": len(ride), "proven": proven}


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


def choose_level(
    state: TronState, seat: int, level: int, budget_ms: int, rng: random.Random
) -> tuple[Direction, dict[str, Any]]:
    """A direction for `seat` at `level` (1-5) within about `budget_ms`, and what the search found."""
    start = time.perf_counter()
    grid = grid_of(state)
    move, found = _level_move(grid, seat, level, limits_for(level, budget_ms).time_ms or 1, rng, start)
    return move, {**_info(move, found, start), "level": level}


def choose_bot(
    state: TronState, seat: int, bot: str, budget_ms: int, rng: random.Random
) -> tuple[Direction, dict[str, Any]]:
    """A direction for `seat` played by the named `bot` within about `budget_ms`; ValueError for an unknown bot."""
    start = time.perf_counter()
    if bot not in BOTS:
        raise ValueError(f"tron has no bot {bot!r}; it has {', '.join(BOTS)}")
    move, found = _bot_move(grid_of(state), seat, bot, budget_ms, start)
    return move, {**_info(move, found, start), "bot": bot}


def _info(move: Direction, found: dict[str, Any], start: float) -> dict[str, Any]:
    """A complete info map: depth, nodes, score, pv (wire letters) and milliseconds."""
    return {
        "depth": found.get("depth", 0),
        "nodes": found.get("nodes", 0),
        "score": found.get("score", 0),
        "pv": found.get("pv", [DIRECTION_NAMES[move]]),
        "ms": int((time.perf_counter() - start) * 1000),
        "phase": found.get("phase", "quick"),
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
        move, found = crowd_move(grid, seat)
        return move, {**found, "phase": "crowd"}
    deadline = start + DEADLINE_SHARE * time_ms / 1000
    ours, theirs = grid.heads[seat], grid.heads[rival]
    max_depth, noise = LEVEL_PLAN[level]
    if not voronoi(grid.open, grid.stride, ours, theirs).touching:
        if level == 5:
            move, found = endgame_move(grid.open, grid.stride, ours, deadline)
        else:
            move, found = fill_move(grid.open, grid.stride, ours, deadline, max_depth)
        return move, {**found, "phase": "apart"}
    if level in LEVEL_PESSIMISTIC:
        return _pessimistic_move(grid, seat, ours, theirs, rng, start, deadline)
    engine = TickEngine(grid.stride)
    engine.far_draw_penalty = LEVEL_FAR_DRAW.get(level, DRAW_PENALTY)
    engine.root_open = grid.open.bit_count()
    root = (grid.open, ours, theirs, 0, True, 0)
    move, found = deepen(engine, root, max_depth or MAX_TICK_DEPTH, noise * UNIT // 100, rng, deadline, (level, seat))
    return move, {**found, "phase": "contact"}


def _pessimistic_move(
    grid: Grid, seat: int, ours: Index, theirs: Index, rng: random.Random, start: float, deadline: float
) -> tuple[Direction, dict[str, Any]]:
    """Level 5 in contact: two plies per tick, the opponent answering our move at every tick, leaves scored by
    chamber-counted territory (`Level5Engine`), deepening a whole tick at a time until the deadline."""
    engine = Level5Engine(grid.stride, deadline)
    engine.root_open = grid.open.bit_count()
    engine.contempt(grid.open, ours, theirs)
    engine.exact_until = start + EXACT_SHARE * (deadline - start)
    if KERNEL is not None and engine.compiled():
        draw, edge, chains = engine.draw_penalty, engine.edge, engine.chains
        job = (grid.open, grid.stride, ours, theirs, draw, edge, chains, deadline, MAX_TICK_DEPTH, LEVEL5_REDUCTION)
        if LEVEL5_TIE_SHARE and draw != LEVEL5_TIE_DRAW:  # a root pinned at the draw value breaks the tie
            kernel = KERNEL.contact_search(*job, start + LEVEL5_TIE_SHARE * (deadline - start), LEVEL5_TIE_DRAW)
        else:
            kernel = KERNEL.contact_search(*job)
        if kernel is not NotImplemented:
            move, score, depth, nodes, line = kernel
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
        if info is not None and left < MIN_SEARCH_MS:
            break
        found, more = search(engine, root, Limits(time_ms=max(1, left), depth=depth), rng=rng, noise=noise, tt=table)
        nodes += more.nodes
        if info is not None and more.depth < info.depth:
            break  # cut off before it even redid the depth already done: the earlier answer stands
        move, info = (move if found is None else found), more  # None only when nothing can be played
        spent = time.perf_counter() - start
        solved = abs(info.score) >= PROVEN or (info.depth < depth and spent < NEXT_DEPTH_SHARE * (deadline - start))
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
    next_share: float = NEXT_DEPTH_SHARE,
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


def _bot_move(grid: Grid, seat: int, bot: str, budget_ms: int, start: float) -> tuple[Direction, dict[str, Any]]:
    """A named bot's move."""
    if bot == "chaser":
        return chaser_move(grid, seat), {"depth": 1, "nodes": 4}
    if bot == "voronoi":
        return _voronoi_bot_move(grid, seat, budget_ms, start)
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


def _voronoi_bot_move(grid: Grid, seat: int, budget_ms: int, start: float) -> tuple[Direction, dict[str, Any]]:
    """The voronoi bot: a1k0n's 2010 design as published, none of level 5's own changes (see `VoronoiEngine`)."""
    if budget_ms < MIN_SEARCH_MS:
        return _quick(grid, seat), {}
    rival = _rival(grid, seat)
    if rival is None:
        return crowd_move(grid, seat)
    deadline = start + DEADLINE_SHARE * budget_ms / 1000
    ours, theirs = grid.heads[seat], grid.heads[rival]
    if not voronoi(grid.open, grid.stride, ours, theirs).touching:
        return fill_move(grid.open, grid.stride, ours, deadline, None)
    engine = VoronoiEngine(grid.stride, deadline)
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
