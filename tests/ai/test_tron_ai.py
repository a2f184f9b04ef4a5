"""Tests of the Tron AI: its search plays by tron.py's collision rules, it avoids crashes and traps, fills
space once apart, its classic bots behave as described, and it always answers with a direction."""

from __future__ import annotations

import random
import sys
from itertools import product
from typing import Any

import pytest

from bench.tron_bench import small_room
from gamenight.server.ai import tron_ai
from gamenight.server.ai.tron import contact
from gamenight.server.ai.tron import kernel as tron_kernel
from gamenight.server.ai.tron import params as tron_params
from gamenight.server.ai.tron_ai import (
    DRAWN,
    LOST,
    WON,
    TickEngine,
    TronEngine,
    choose_bot,
    choose_level,
    grid_of,
    parity_fill,
    quick_move,
)
from gamenight.server.games.tron import (
    DIRECTIONS,
    EAST,
    NORTH,
    SOUTH,
    STEPS,
    WEST,
    Tron,
    TronState,
    generate_arena,
    load_map,
    most_open_direction,
    new_state,
    official_maps,
)

GAME = Tron()
LEVELS = (1, 2, 3, 4, 5)
SANE_LEVELS = (2, 3, 4, 5)
AGENTS = [*((level, None) for level in LEVELS), (None, "chaser"), (None, "floodfill"), (None, "voronoi")]


def state_from(picture: str) -> TronState:
    """A game state from a map in the contest's format (walls stand for old trails too)."""
    return new_state(load_map(picture.strip("\n") + "\n", "test"))


def target(state: TronState, seat: int, direction: int) -> tuple[int, int]:
    """The square `seat` moves onto going `direction`."""
    x, y = state.heads[seat]
    dx, dy = STEPS[direction]
    return x + dx, y + dy


def is_open(state: TronState, square: tuple[int, int]) -> bool:
    """True if `square` is on the map and empty."""
    return state.cell(*square) == 0


def safe_directions(state: TronState, seat: int) -> list[int]:
    """The directions onto an empty square."""
    return [d for d in DIRECTIONS if is_open(state, target(state, seat, d))]


def choose(
    state: TronState, seat: int, *, level: int | None, bot: str | None, budget_ms: int, rng: random.Random
) -> tuple[int, dict[str, Any]]:
    """The AI's move and info for `seat`: `level` through choose_level, else `bot` through choose_bot."""
    if level is not None:
        return choose_level(state, seat, level, budget_ms, rng)
    assert bot is not None
    return choose_bot(state, seat, bot, budget_ms, rng)


def move_of(state: TronState, seat: int, level: int | None = None, bot: str | None = None, ms: int = 60) -> int:
    """The direction the AI picks for `seat`."""
    move, _ = choose(state, seat, level=level, bot=bot, budget_ms=ms, rng=random.Random(0))
    return move


def random_positions(count: int, seed: int) -> list[TronState]:
    """Positions from random but not suicidal play on the official two-player maps, both riders alive."""
    rng = random.Random(seed)
    maps = [m for name, m in sorted(official_maps().items()) if m.players == 2 and not name.startswith("test")]
    found = []
    while len(found) < count:
        state = new_state(rng.choice(maps))
        for _ in range(rng.randint(0, 40)):
            moves = {s: rng.choice(safe_directions(state, s) or [NORTH]) for s in (0, 1)}
            after = GAME.apply(state, moves)
            if after.result is not None:
                break
            state = after
        found.append(state)
    return found


# -- the search plays by the rules ---------------------------------------------------------------------------


def test_search_resolves_ticks_like_the_rules() -> None:
    """The search's two plies per tick end exactly as Tron.apply does: same squares, same crashes, same result
    (walls, trails, the same square and swapped heads)."""
    checked = 0
    for state in random_positions(40, seed=21):
        grid = grid_of(state)
        engine = TronEngine(grid.stride)
        pos = (grid.open, grid.heads[0], grid.heads[1], 0, 0)
        for ours, theirs in product(DIRECTIONS, DIRECTIONS):
            resolved = engine.play(engine.play(pos, ours), theirs)
            after = GAME.apply(state, {0: ours, 1: theirs})
            if after.result is None:
                expected = grid_of(after)
                assert resolved == (expected.open, expected.heads[0], expected.heads[1], 0, 0)
            else:
                assert resolved[4] == _over_code(after)
            checked += 1
    assert checked == 40 * 16


def _over_code(after: TronState) -> int:
    """The search's game-over code (for seat 0) of a finished state."""
    return {(0,): WON, (1,): LOST, (0, 1): DRAWN}[after.result.winners]


def test_tick_engine_resolves_ticks_like_the_rules() -> None:
    """The levels' search, which answers a committed move and commits the next in one ply, ends each tick
    exactly as Tron.apply does, whether the opponent answers our move or we answer theirs."""
    checked = 0
    for state in random_positions(12, seed=27):
        grid = grid_of(state)
        engine = TickEngine(grid.stride)
        root = (grid.open, grid.heads[0], grid.heads[1], 0, True, 0)
        for ours, theirs, next_theirs in product(DIRECTIONS, DIRECTIONS, DIRECTIONS):
            first = engine.play(engine.play(root, ours), theirs * 5 + next_theirs)
            after = GAME.apply(state, {0: ours, 1: theirs})
            if after.result is not None:
                assert first[5] == _over_code(after)
                continue
            expected = grid_of(after)
            assert first[:3] == (expected.open, expected.heads[0], expected.heads[1])
            assert first[4] is True  # our ply: we answer their committed move
            for reply in DIRECTIONS:
                second = engine.play(first, reply * 5 + NORTH)
                later = GAME.apply(after, {0: reply, 1: next_theirs})
                if later.result is not None:
                    assert second[5] == _over_code(later)
                else:
                    assert second[:3] == (grid_of(later).open, grid_of(later).heads[1], grid_of(later).heads[0])
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("row", ["#1 2#", "#12 #"], ids=["same-square", "swap"])
def test_head_on_meetings_crash_both(row: str) -> None:
    """Riders stepping onto one square, or into each other's squares, both crash in the search as in the rules."""
    state = state_from(f"5 3\n#####\n{row}\n#####")
    grid = grid_of(state)
    engine = TronEngine(grid.stride)
    pos = (grid.open, grid.heads[0], grid.heads[1], 0, 0)
    assert engine.play(engine.play(pos, EAST), WEST)[4] == DRAWN
    assert GAME.apply(state, {0: EAST, 1: WEST}).result.winners == (0, 1)


def _head_on(row: str, far_penalty: int) -> tuple[int, int]:
    """The tick at which two riders driving at each other along a one-square corridor crash into each other,
    and what that crash is worth to the side to move, with `far_penalty` for crashes far from the root."""
    state = state_from(f"{len(row)} 3\n{'#' * len(row)}\n{row}\n{'#' * len(row)}")
    grid = grid_of(state)
    engine = TickEngine(grid.stride)
    engine.far_draw_penalty = far_penalty
    engine.root_open = grid.open.bit_count()
    pos = engine.play((grid.open, grid.heads[0], grid.heads[1], 0, True, 0), EAST)
    ticks = 0
    while pos[5] == 0:
        forward = WEST if pos[4] is False else EAST
        pos = engine.play(pos, forward * 5 + forward)
        ticks += 1
    assert pos[5] == DRAWN
    return ticks, engine.terminal(pos)


def test_near_draws_cost_the_full_penalty_far_ones_the_far_penalty() -> None:
    """Level 5's search dreads a head-on crash this tick or the next (a chaser could force it) but values a
    crash further ahead at the far penalty, so it still contests a gap the opponent is racing it to."""
    near_tick, near_value = _head_on("#1 2#", 7)
    assert near_tick <= tron_ai.NEAR_DRAW_TICKS
    assert abs(near_value) == tron_ai.DRAW_PENALTY
    far_tick, far_value = _head_on("#1" + " " * 8 + "2#", 7)
    assert far_tick > tron_ai.NEAR_DRAW_TICKS
    assert abs(far_value) == 7


def test_engines_without_a_root_date_pay_the_full_penalty() -> None:
    """A tick engine nobody dated (bench positions) values every draw at the full penalty, and only level 5
    is given the cheap far draws: levels 1-4 never court a collision."""
    engine = TickEngine(9)
    assert engine.draw_cost(0) == engine.draw_cost(1 << 40) == tron_ai.DRAW_PENALTY
    assert all(level == 5 for level in tron_ai.LEVEL_FAR_DRAW)


def test_parity_bound_is_never_below_the_longest_ride() -> None:
    """The checkerboard bound the filling search trusts never promises less than a rider can really ride."""
    rng = random.Random(22)
    for _ in range(40):
        width, height = rng.randint(3, 5), rng.randint(3, 4)
        rows = ["".join(" " if rng.random() < 0.75 else "#" for _ in range(width)) for _ in range(height)]
        cells = [(x, y) for y in range(height) for x in range(width) if rows[y][x] == " "]
        if not cells:
            continue
        head = rng.choice(cells)
        free = set(cells) - {head}
        grid_rows = ["#" * (width + 2)] + [f"#{row}#" for row in rows] + ["#" * (width + 2)]
        other = next((x, y) for y, row in enumerate(grid_rows) for x, ch in enumerate(row) if ch == "#")
        text = [list(row) for row in grid_rows]
        text[head[1] + 1][head[0] + 1] = "1"
        text[other[1]][other[0]] = "2"
        state = state_from("\n".join([f"{width + 2} {height + 2}", *("".join(r) for r in text)]))
        grid = grid_of(state)
        region = tron_ai.flood(grid.open, grid.stride, grid.heads[0])
        assert parity_fill(region, grid.heads[0]) >= _longest_ride(free, head)


def _longest_ride(free: set[tuple[int, int]], at: tuple[int, int]) -> int:
    """The most squares a lone rider at `at` can ride through `free`, by trying every path."""
    best = 0
    for dx, dy in STEPS.values():
        nxt = (at[0] + dx, at[1] + dy)
        if nxt in free:
            best = max(best, 1 + _longest_ride(free - {nxt}, nxt))
    return best


# -- safety and traps -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("level", "bot"), AGENTS)
def test_never_rides_into_a_wall_when_a_square_is_free(level: int | None, bot: str | None) -> None:
    """No level or bot steers into a wall or trail while an empty square is next to its head."""
    for state in random_positions(8, seed=23):
        for seat in (0, 1):
            if safe_directions(state, seat):
                move = move_of(state, seat, level, bot, ms=30)
                assert is_open(state, target(state, seat, move))


SPLIT_APART = """
14 12
##############
##   #########
##   #########
### ##########
###1####     #
### #### 2   #
#       #    #
#       ######
#       ######
#       ######
#       ######
##############
"""
SPLIT_TOGETHER = """
14 12
##############
##   #########
##   #########
### ##########
###1##########
### ##########
#       ######
#       ######
#       ######
#       ######
#      2######
##############
"""


@pytest.mark.parametrize("picture", [SPLIT_APART, SPLIT_TOGETHER], ids=["apart", "together"])
@pytest.mark.parametrize(
    ("level", "bot"), [*((level, None) for level in SANE_LEVELS), (None, "floodfill"), (None, "voronoi")]
)
def test_takes_the_bigger_side_of_a_split(picture: str, level: int | None, bot: str | None) -> None:
    """Where a wall splits the board, the AI rides into the big room, not the small pocket, whether the
    opponent is shut away elsewhere or waiting in the big room."""
    state = state_from(picture)
    assert move_of(state, 0, level, bot, ms=200) == SOUTH


CORRIDOR_AND_ROOM = """
20 19
####################
#######       ######
#######       ######
#######       ######
#######       ######
#######       ######
#######   #   ######
###   #   #   ######
#####     ##########
#########1##########
####################
#2                 #
################## #
#                  #
# ##################
#                  #
################## #
#                  #
####################
"""


def _ride(state: TronState, pick) -> int:
    """Squares seat 0 rides through before it crashes, steering with `pick`; seat 1 rides its own corridor."""
    ridden = 0
    while state.result is None:
        state = GAME.apply(state, {0: pick(state), 1: most_open_direction(state, 1)})
        ridden += 1
    assert state.result.winners == (1,)  # the winding corridor below outlasts any filling of the rooms above
    return ridden - 1


def test_space_filling_beats_the_most_open_move() -> None:
    """Shut away from the opponent, the AI rides more of its corridor, dead end and room than a rider that
    always heads for the most open space."""
    state = state_from(CORRIDOR_AND_ROOM)
    naive = _ride(state, lambda s: most_open_direction(s, 0))
    ours = _ride(state, lambda s: move_of(s, 0, 5, ms=100))
    assert ours > naive


def longest_ride(free: int, stride: int, head: int, memo: dict[tuple[int, int], int]) -> int:
    """The most squares a lone rider can ride from `head` through the open squares `free`, by trying every path."""
    key = (free, head)
    if key not in memo:
        memo[key] = max(
            (
                1 + longest_ride(free ^ 1 << at, stride, at, memo)
                for at in (head - stride, head + 1, head + stride, head - 1)
                if free >> at & 1
            ),
            default=0,
        )
    return memo[key]


def test_endgame_filler_rides_the_longest_ride_of_small_rooms() -> None:
    """Shut away with at most 40 squares, level 5's endgame search finds a ride as long as the longest possible
    one (checked against an exhaustive search) and its first step is the move level 5 plays."""
    rng = random.Random(31)
    checked = 0
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    while checked < 30:
        state = small_room(rng)
        grid = grid_of(state)
        region = tron_ai.flood(grid.open, grid.stride, grid.heads[0])
        if not 8 <= region.bit_count() <= 40:
            continue
        best = longest_ride(region, grid.stride, grid.heads[0], {})
        fill = tron_ai.fill_search(region, grid.stride, grid.heads[0], deadline=float("inf"))
        assert len(fill.best) == best and fill.proven
        assert fill.best[0] - grid.heads[0] == grid.steps[move_of(state, 0, 5, ms=10_000)]
        checked += 1


SPLIT_AT_HEAD = """
6 6
2#####
#    #
##1 ##
#  # #
#   ##
######
"""


def test_endgame_filler_rides_the_longest_ride_where_the_head_splits_the_room() -> None:
    """Where the rider's square joins several regions, the endgame search still finds the longest ride (5 squares
    here: the chamber bound of only the region with the best parity bound once cut it off at 4), and on random
    small rooms whose head splits them it always rides the longest ride (checked exhaustively)."""
    grid = grid_of(state_from(SPLIT_AT_HEAD))
    head = grid.heads[0]
    region = tron_ai.flood(grid.open, grid.stride, head)
    fill = tron_ai.fill_search(region, grid.stride, head, deadline=float("inf"))
    assert longest_ride(region, grid.stride, head, {}) == 5
    assert len(fill.best) == 5 and fill.proven
    rng = random.Random(35)
    checked = 0
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    while checked < 60:
        grid = grid_of(small_room(rng))
        head = grid.heads[0]
        region = tron_ai.flood(grid.open, grid.stride, head)
        if not 4 <= region.bit_count() <= 22 or tron_ai.room_after(region, grid.stride, head)[1] == region:
            continue
        fill = tron_ai.fill_search(region, grid.stride, head, deadline=float("inf"))
        assert len(fill.best) == longest_ride(region, grid.stride, head, {}) and fill.proven
        checked += 1


POCKET_PAST_PARITY = """
8 7
2#######
## # 1 #
##   # #
#   # ##
#  #   #
#  # ###
########
"""


def test_endgame_filler_proves_rides_by_the_parity_bound_per_chain() -> None:
    """A ride that fills its best chain of chambers as far as the checkerboard allows is proven the longest at
    once (the search stops there and plays on from its plan), though the chamber bound over the whole room
    promises one square more."""
    grid = grid_of(state_from(POCKET_PAST_PARITY))
    head = grid.heads[0]
    region = tron_ai.flood(grid.open, grid.stride, head)
    assert tron_ai.chain_fill(region, grid.stride, head) < tron_ai.chamber_fill(region, grid.stride, head)
    fill = tron_ai.fill_search(region, grid.stride, head, deadline=float("inf"))
    assert fill.bound == tron_ai.chain_fill(region, grid.stride, head) == len(fill.best)
    assert fill.proven and not fill.complete


def test_chamber_estimate_is_never_below_the_longest_ride() -> None:
    """The chamber-tree room estimate, which ends the endgame search once a ride reaches it, never promises
    less than a lone rider can really ride (a cycle through the head once made it do so)."""
    rng = random.Random(32)
    checked = 0
    while checked < 40:
        grid = grid_of(small_room(rng))
        region = tron_ai.flood(grid.open, grid.stride, grid.heads[0])
        if not 4 <= region.bit_count() <= 24:
            continue
        assert tron_ai.chamber_fill(region, grid.stride, grid.heads[0]) >= longest_ride(
            region, grid.stride, grid.heads[0], {}
        )
        checked += 1


TWO_WAYS = """
9 5
#########
#  #####2
#   1   #
#  ######
#########
"""


def test_chambers_count_one_way_of_two() -> None:
    """Level 5's territory count takes only the better of two dead ends on either side of the head (a rider
    can use one), where plain Voronoi counts both; territory without a cut square counts the same either way."""
    grid = grid_of(state_from(TWO_WAYS))
    head, stride = grid.heads[0], grid.stride

    def worth(squares: int) -> int:
        return tron_ai.CELL * squares.bit_count() + tron_ai.EDGE * tron_ai.degree_sum(squares, grid.open, stride)

    territory = tron_ai.flood(grid.open, stride, head)
    left = sum(1 << index for index in range(territory.bit_length()) if territory >> index & 1 and index % stride <= 4)
    assert left.bit_count() == 7 and (territory & ~left).bit_count() == 3
    assert tron_ai.chamber_value(territory, grid.open, stride, head) == worth(left) < worth(territory)
    room = grid_of(_room_with((1, 3), (7, 3)))
    open_room = tron_ai.flood(room.open, room.stride, room.heads[0])
    assert tron_ai.chamber_value(open_room, room.open, room.stride, room.heads[0]) == tron_ai.CELL * (
        open_room.bit_count()
    ) + tron_ai.EDGE * tron_ai.degree_sum(open_room, room.open, room.stride)


def test_a_chamber_tree_is_never_taken_from_a_board_of_another_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pure path caches chamber trees, and one process plays games on maps of several widths: the same bits
    (territory and head) are other squares on a board of another stride, so each board is valued by its own tree."""
    monkeypatch.setattr(tron_kernel, "KERNEL", None)
    territory, head = 0x8FFF996B39000, 14  # random bits whose chamber trees differ at the two strides
    fresh = {}
    for stride in (9, 11):
        tron_ai._TREES.clear()
        fresh[stride] = tron_ai.chamber_value(territory, territory, stride, head)
    assert fresh[9] != fresh[11]
    tron_ai._TREES.clear()
    assert [tron_ai.chamber_value(territory, territory, stride, head) for stride in (9, 11)] == [fresh[9], fresh[11]]


SPLIT_ROOMS = """
7 5
#######
#  #  #
#1 # 2#
#  #  #
#######
"""


def test_level5_values_draws_below_an_even_position() -> None:
    """Level 5 counts a mutual crash and an equal split of the room as a small loss (`LEVEL5_DRAW`), so it
    does not ride into a draw where it stands even or better; a1k0n's voronoi bot values both at 0."""
    grid = grid_of(state_from(SPLIT_ROOMS))
    ours, theirs = grid.heads
    level5 = tron_ai.Level5Engine(grid.stride)
    voronoi_bot = tron_ai.VoronoiEngine(grid.stride)
    crashed = (grid.open, ours, theirs, 0, DRAWN)
    assert level5.terminal(crashed) == -tron_ai.LEVEL5_DRAW < 0 == voronoi_bot.terminal(crashed)
    assert level5.score(grid.open, ours, theirs, False, True) == -tron_ai.LEVEL5_DRAW
    assert level5.score(grid.open, theirs, ours, False, False) == tron_ai.LEVEL5_DRAW
    assert voronoi_bot.score(grid.open, ours, theirs, False, True) == 0


def test_level5_contempt_makes_draws_dearer_only_when_not_behind() -> None:
    """With contempt on (`LEVEL5_DRAW_AHEAD`), a move whose root level 5 does not trail values a draw at that
    dearer cost, so it steers away from equal splits and head-on crashes while even or ahead; behind, a draw
    keeps the usual cost, a better result than the loss it is losing; off (the default), draws always cost
    `LEVEL5_DRAW`."""
    ahead = grid_of(_room_with((4, 3), (1, 3)))
    even = grid_of(_room_with((2, 3), (6, 3)))
    for grid, ours, theirs, expected in (
        (ahead, ahead.heads[0], ahead.heads[1], 6000),
        (even, even.heads[0], even.heads[1], 6000),
        (ahead, ahead.heads[1], ahead.heads[0], tron_ai.LEVEL5_DRAW),
    ):
        engine = tron_ai.Level5Engine(grid.stride)
        engine.draw_ahead = 6000
        engine.contempt(grid.open, ours, theirs)
        assert engine.terminal((grid.open, ours, theirs, 0, DRAWN)) == -expected
        default = tron_ai.Level5Engine(grid.stride)
        default.contempt(grid.open, ours, theirs)
        assert default.terminal((grid.open, ours, theirs, 0, DRAWN)) == -tron_ai.LEVEL5_DRAW


CLOSE_SPLIT = """
13 6
#############
##1  #2     #
#  ##########
#  ##########
# ###########
#############
"""


def test_close_split_option_scores_a_close_split_by_the_rides_that_exist() -> None:
    """With the close-split experiment on (`Level5Engine.close` 2), level 5 counts greedy rides: 4 squares of a
    pocket the chamber bound puts at 5, against a 5-square corridor, is a loss; off (the default) a draw."""
    grid = grid_of(state_from(CLOSE_SPLIT))
    ours, theirs = grid.heads
    assert (
        tron_ai.chamber_fill(grid.open, grid.stride, ours) == 5 == tron_ai.chamber_fill(grid.open, grid.stride, theirs)
    )
    assert tron_ai.ride_length(grid.open, grid.stride, ours) == 4
    engine = tron_ai.Level5Engine(grid.stride)
    assert engine.score(grid.open, ours, theirs, False, True) == -tron_ai.LEVEL5_DRAW
    engine.close = 2
    assert engine.score(grid.open, ours, theirs, False, True) == -tron_ai.APART - tron_ai.APART_CELL
    assert tron_ai.VoronoiEngine(grid.stride).score(grid.open, ours, theirs, False, True) == 0


def test_chain_parity_option_sees_a_pocket_by_its_own_chain() -> None:
    """With the chain-parity experiment on (`Level5Engine.chains`), level 5's apart leaves count the pocket by
    the colours of its own chain of chambers: 4 squares, not the 5 the region's bound allows, so the close split
    is a loss by one square."""
    grid = grid_of(state_from(CLOSE_SPLIT))
    ours, theirs = grid.heads
    assert tron_ai.chain_fill(grid.open, grid.stride, ours) == 4
    assert tron_ai.chain_fill(grid.open, grid.stride, theirs) == 5
    engine = tron_ai.Level5Engine(grid.stride)
    engine.chains = True
    assert engine.score(grid.open, ours, theirs, False, True) == -tron_ai.APART - tron_ai.APART_CELL


def test_chain_parity_bound_is_between_the_longest_ride_and_the_chamber_bound() -> None:
    """The per-chain parity bound stays an upper bound of the longest ride (so a won split is never scored lost)
    and is never looser than the chamber bound; on some rooms it is tighter."""
    rng = random.Random(33)
    checked = tighter = 0
    while checked < 150:
        grid = grid_of(small_room(rng))
        head = grid.heads[0]
        region = tron_ai.flood(grid.open, grid.stride, head)
        if not 4 <= region.bit_count() <= 24:
            continue
        chain = tron_ai.chain_fill(region, grid.stride, head)
        chamber = tron_ai.chamber_fill(region, grid.stride, head)
        assert longest_ride(region, grid.stride, head, {}) <= chain <= chamber
        tighter += chain < chamber
        checked += 1
    assert tighter >= 5


def test_exact_ride_is_the_longest_ride_of_small_rooms(monkeypatch: pytest.MonkeyPatch) -> None:
    """The room level 5 counts for a rider at a separation near the root is the longest ride there is
    (checked exhaustively on rooms of 8-28 squares) once its search has the time to prove it, and nothing
    (the line is searched on) without that time."""
    monkeypatch.setattr(tron_params, "EXACT_MS", 60_000)  # no clock in the assertion: the search always finishes
    rng = random.Random(34)
    checked = 0
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    while checked < 30:
        grid = grid_of(small_room(rng))
        head = grid.heads[0]
        region = tron_ai.flood(grid.open, grid.stride, head)
        if not 8 <= region.bit_count() <= 28:
            continue
        best = longest_ride(region, grid.stride, head, {})
        tron_ai._EXACT.clear()
        assert tron_ai.exact_ride(grid.open, grid.stride, head, float("inf"), fresh=False) is None
        assert tron_ai.exact_ride(grid.open, grid.stride, head, float("inf")) == best
        checked += 1


def test_level5_ends_lines_at_separations_near_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the option on, level 5 scores a line whose riders came apart within `exact_ticks` of the root by
    the rides each can really make (here 4 squares of a pocket the chamber estimate puts at 5, against 5: a
    loss), and searches on past it when a ride is not proven, further down, in contact, or with the option off."""
    monkeypatch.setattr(tron_params, "EXACT_MS", 60_000)
    tron_ai._EXACT.clear()
    grid = grid_of(state_from(CLOSE_SPLIT))
    ours, theirs = grid.heads
    squares = grid.open.bit_count()
    engine = tron_ai.Level5Engine(grid.stride)
    engine.exact_ticks = 2
    apart = (grid.open, ours, theirs, 0, 0)
    assert engine.terminal(apart) is None  # no root given: nothing is dated
    engine.root_open = squares + 2  # one tick after the root
    assert engine.terminal(apart) == -tron_ai.APART - tron_ai.APART_CELL
    assert engine.terminal((grid.open, theirs, ours, 0, 0)) == tron_ai.APART + tron_ai.APART_CELL
    assert engine.terminal((grid.open, ours, theirs, ours - grid.stride, 0)) is None  # their ply: mid-tick
    monkeypatch.setattr(tron_params, "EXACT_MS", -1)  # no time to prove the pocket's ride: search on
    tron_ai._EXACT.clear()
    assert engine.terminal(apart) is None
    monkeypatch.setattr(tron_params, "EXACT_MS", 60_000)
    engine.root_open = squares + 2 * (engine.exact_ticks + 1)
    assert engine.terminal(apart) is None
    engine.root_open, engine.exact_ticks = squares + 2, 0
    assert engine.terminal(apart) is None
    room = grid_of(_room_with((1, 3), (7, 3)))
    contact = tron_ai.Level5Engine(room.stride)
    contact.exact_ticks = 2
    contact.root_open = room.open.bit_count() + 2
    assert contact.terminal((room.open, room.heads[0], room.heads[1], 0, 0)) is None


def test_ride_length_is_never_above_the_longest_ride() -> None:
    """The greedy ride level 5 counts on close splits is a real ride: never longer than the longest (checked
    exhaustively on small rooms), and never above the chamber estimate."""
    rng = random.Random(33)
    checked = 0
    while checked < 40:
        grid = grid_of(small_room(rng))
        region = tron_ai.flood(grid.open, grid.stride, grid.heads[0])
        if not 4 <= region.bit_count() <= 24:
            continue
        ride = tron_ai.ride_length(grid.open, grid.stride, grid.heads[0])
        assert ride <= longest_ride(region, grid.stride, grid.heads[0], {})
        assert ride <= tron_ai.chamber_fill(grid.open, grid.stride, grid.heads[0])
        checked += 1


CHEQUERED_ROOM = """
7 5
#######
#   #2#
#1  ###
#   ###
#######
"""


def test_parity_count_keeps_only_the_squares_a_ride_can_alternate_through() -> None:
    """With the parity experiment on, a territory counts the squares the checkerboard bound lets a ride
    through (7 of the 8 squares around a head on a 3x3 room's side), plain counting all 8."""
    grid = grid_of(state_from(CHEQUERED_ROOM))
    head, stride = grid.heads[0], grid.stride
    territory = tron_ai.flood(grid.open, stride, head)
    links = tron_ai.EDGE * tron_ai.degree_sum(territory, grid.open, stride)
    assert territory.bit_count() == 8 and parity_fill(territory, head) == 7
    assert tron_ai.chamber_value(territory, grid.open, stride, head) == tron_ai.CELL * 8 + links
    assert tron_ai.chamber_value(territory, grid.open, stride, head, parity=True) == tron_ai.CELL * 7 + links


def test_bit_parallel_cut_squares_match_the_ring_table() -> None:
    """The whole-board test for squares that may cut a region agrees square by square with the 3x3 ring test,
    so no articulation square is missed when level 5 decides a territory is one chamber."""
    for state in random_positions(10, seed=33):
        grid = grid_of(state)
        cuts = tron_ai.local_cuts(grid.open, grid.stride)
        for index in range(grid.open.bit_length()):
            if grid.open >> index & 1:
                ring = tron_ai.ring_of(grid.open, grid.stride, index)
                assert bool(cuts >> index & 1) == (tron_ai.RING_GROUPS[ring] >= 2)


# -- the classic bots -------------------------------------------------------------------------------------------

OPEN_ROOM = """
9 7
#########
#       #
#       #
#       #
#       #
#       #
#########
"""


def _room_with(me: tuple[int, int], them: tuple[int, int], walls: tuple[tuple[int, int], ...] = ()) -> TronState:
    """The open room with the two start squares (and extra walls) placed."""
    rows = [list(row) for row in OPEN_ROOM.strip("\n").splitlines()[1:]]
    for x, y in walls:
        rows[y][x] = "#"
    rows[me[1]][me[0]] = "1"
    rows[them[1]][them[0]] = "2"
    return state_from("\n".join(["9 7", *("".join(row) for row in rows)]))


def test_chaser_steps_toward_the_opponent_ties_in_order() -> None:
    """The chaser takes the open step nearest the opponent's head (squared distance), ties going N, E, S, W."""
    assert move_of(_room_with((2, 3), (6, 3)), 0, bot="chaser") == EAST
    assert move_of(_room_with((2, 2), (4, 4)), 0, bot="chaser") == EAST  # E and S are as near: E first
    assert move_of(_room_with((2, 3), (6, 3), walls=((3, 3),)), 0, bot="chaser") == NORTH  # N and S tie
    assert move_of(_room_with((6, 3), (2, 3)), 0, bot="chaser") == WEST


def test_floodfill_hugs_walls_when_apart() -> None:
    """Shut away from the opponent, the floodfill bot keeps to the walls (more walls next to its target)."""
    state = state_from("""
10 7
##########
#    #   #
#    #   #
#1   #  2#
#    #   #
#    #   #
##########
""")
    assert move_of(state, 0, bot="floodfill", ms=100) in (NORTH, SOUTH)


def test_floodfill_closes_in_when_together() -> None:
    """In one open room the floodfill bot, with no space to gain yet, heads toward its opponent."""
    state = _room_with((1, 3), (7, 3))
    assert move_of(state, 0, bot="floodfill", ms=100) == EAST


def test_unknown_bot_is_refused() -> None:
    """Asking for a bot Tron does not have is an error naming the bots it has."""
    with pytest.raises(ValueError, match="chaser"):
        choose_bot(_room_with((1, 3), (7, 3)), 0, "nope", 10, random.Random(0))


# -- levels ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", (1, 2, 3, 4))
def test_capped_levels_search_to_their_odd_horizon(level: int) -> None:
    """Levels 1-4 search to their cap with time to spare, never shallower than the level below, and always to
    a horizon ending on the opponent's answer to our move (an even one handed the tempo to the wrong side)."""
    state = new_state(official_maps()["duel-small"])
    _, info = choose(state, 0, level=level, bot=None, budget_ms=3000, rng=random.Random(0))
    cap = tron_ai.LEVEL_PLAN[level][0]
    assert info["depth"] == cap
    assert cap % 2 == 1
    assert level == 1 or cap >= tron_ai.LEVEL_PLAN[level - 1][0]


@pytest.mark.slow  # depends on how much CPU 1.5 s buys: on a loaded CI machine it can stop at level 4's cap
def test_max_level_searches_deeper_than_the_capped_ones() -> None:
    """Level 5 has no depth cap: with the same time it looks more ticks ahead than level 4's cap (level 5
    searches two plies per tick, whole ticks only; level 4's tick engine one ply per tick after our commit)."""
    state = new_state(official_maps()["duel-small"])
    _, info = choose(state, 0, level=5, bot=None, budget_ms=1500, rng=random.Random(0))
    assert info["depth"] // 2 > (tron_ai.LEVEL_PLAN[4][0] + 1) // 2
    assert info["depth"] % 2 == 0


def test_level5_without_the_kernel_keeps_a_bounded_table_between_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    """Level 5's contact search in Python keeps its table from move to move, as the kernel keeps its fixed 16 MB one,
    but starts a move with an empty one once it holds `TABLE_KEEP` entries: what a worker holds stays bounded however
    long the game runs."""
    monkeypatch.setattr(tron_kernel, "KERNEL", None)
    monkeypatch.setattr(contact, "TABLE_KEEP", 40)
    contact._TABLE.clear()
    state = new_state(official_maps()["duel-small"])
    searched = []
    for _ in range(8):
        move, info = choose_level(state, 0, 5, 60, random.Random(0))
        if info["phase"] != "contact":
            break  # the riders parted
        searched.append(info["nodes"])
        assert len(contact._TABLE) <= 40 + info["nodes"]
        state = GAME.apply(state, {0: move, 1: quick_move(state, 1)})
        if state.result is not None:
            break
    assert len(searched) >= 2 and sum(searched) > 40 + max(searched), "the bound was reached"


@pytest.mark.parametrize("level", [3, 4])
def test_searching_levels_carry_only_their_main_line_between_moves(level: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A level searching with the tick engine keeps from one move to the next only the table entries of its main
    line (tried first next time), so what a worker holds between moves stays a handful of entries however long the
    game runs."""
    monkeypatch.setattr(tron_kernel, "KERNEL", None)
    state = new_state(official_maps()["duel-small"])
    checked = 0
    for _ in range(6):
        move, info = choose_level(state, 0, level, 60, random.Random(0))
        if info["phase"] != "contact":
            break  # the riders parted
        carried = tron_ai._CARRY[(level, 0)]
        assert 0 < len(carried) <= max(info["depth"], 1)
        checked += 1
        state = GAME.apply(state, {0: move, 1: quick_move(state, 1)})
        if state.result is not None:
            break
    assert checked >= 1


# -- always an answer ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [1, 5, 40])
def test_every_level_and_bot_answers_with_a_direction(budget: int) -> None:
    """Every level and bot answers with one of the four directions and a full info map, even at 1 ms, and
    never a crash into a wall when a square is free."""
    for state in random_positions(4, seed=24):
        for level, bot in AGENTS:
            for seat in (0, 1):
                move, info = choose(state, seat, level=level, bot=bot, budget_ms=budget, rng=random.Random(1))
                assert move in GAME.legal_moves(state, seat)
                assert {"depth", "nodes", "score", "pv", "ms"} <= set(info)
                if safe_directions(state, seat):
                    assert is_open(state, target(state, seat, move))


@pytest.mark.parametrize("players", [3, 4])
def test_crowded_arenas_get_safe_moves(players: int) -> None:
    """With three or four riders every level and bot still answers with a safe direction."""
    state = new_state(generate_arena(16, 16, seed=5, players=players))
    rng = random.Random(25)
    for _ in range(6):
        for seat in range(players):
            for level, bot in AGENTS:
                move = move_of(state, seat, level, bot, ms=20)
                assert is_open(state, target(state, seat, move)) or not safe_directions(state, seat)
        moves = {s: rng.choice(safe_directions(state, s) or [NORTH]) for s in range(players) if state.alive[s]}
        after = GAME.apply(state, moves)
        if after.result is not None:
            break
        state = after


def test_quick_move_is_safe() -> None:
    """The instant fallback the server uses for a late AI picks an empty square, preferring the open side."""
    for state in random_positions(10, seed=26):
        for seat in (0, 1):
            move = quick_move(state, seat)
            assert move in DIRECTIONS
            if safe_directions(state, seat):
                assert is_open(state, target(state, seat, move))
    assert quick_move(state_from(SPLIT_APART), 0) == SOUTH


# -- the speed work of session 6 changes nothing: reference versions of the evaluation's two hot loops ---------


def _reference_voronoi(free: int, stride: int, first: int, second: int, first_ahead: bool) -> tuple[int, int, bool]:
    """`voronoi` as it was before session 6 (both sides' squares gathered layer by layer)."""
    spread = tron_ai.spread
    front_a, front_b = 1 << first, 1 << second
    mine = theirs = 0
    touching = False
    if first_ahead:
        front_a = mine = spread(front_a, stride) & free
        free ^= front_a
    while front_a or front_b:
        new_a = spread(front_a, stride) & free
        new_b = spread(front_b, stride) & free
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
    return mine, theirs, touching


def _reference_chamber_tree(graph: int, stride: int, head: int, cuts: int) -> tuple[list[int], list[int]]:
    """`_chamber_tree` as it was before session 6 (pieces, then Tarjan's low-links with index stacks)."""
    cuts = cuts & graph | 1 << head
    rest = graph & ~cuts
    pieces = []
    while rest:
        piece = front = rest & -rest
        rest ^= front
        while front:
            front = tron_ai.spread(front, stride) & rest
            rest ^= front
            piece |= front
        pieces.append(piece)
    squares = [i for i in range(cuts.bit_length()) if cuts >> i & 1]
    count = len(squares)
    node_of = {square: n for n, square in enumerate(squares)}
    links: list[list[int]] = [[] for _ in range(count + len(pieces))]
    for n, square in enumerate(squares):
        for step in (-stride, 1, stride, -1):
            if square + step in node_of:
                links[n].append(node_of[square + step])
    for p, piece in enumerate(pieces, count):
        border = tron_ai.spread(piece, stride) & cuts
        for square in [i for i in range(border.bit_length()) if border >> i & 1]:
            links[p].append(node_of[square])
            links[node_of[square]].append(p)
    root = node_of[head]
    disc = [-1] * len(links)
    disc[root] = 0
    low, parent, order = [0], [-1], [root]
    stack_v, stack_k = [root], [0]
    while stack_v:
        v, k = stack_v[-1], stack_k[-1]
        vi = disc[v]
        descended = False
        while k < len(links[v]):
            w = links[v][k]
            k += 1
            if disc[w] < 0:
                disc[w] = len(order)
                low.append(len(order))
                parent.append(vi)
                order.append(w)
                stack_k[-1] = k
                stack_v.append(w)
                stack_k.append(0)
                descended = True
                break
            if disc[w] < low[vi] and disc[w] != parent[vi]:
                low[vi] = disc[w]
        if not descended:
            stack_v.pop()
            stack_k.pop()
            if parent[vi] >= 0 and low[vi] < low[parent[vi]]:
                low[parent[vi]] = low[vi]
    chamber = [0] * len(order)
    above, masks = [-1], [0]
    for wi in range(1, len(order)):
        pi, w = parent[wi], order[wi]
        mask = 1 << squares[w] if w < count else pieces[w - count]
        if low[wi] >= pi and order[pi] < count:
            chamber[wi] = len(masks)
            above.append(chamber[pi])
            masks.append(mask)
        else:
            chamber[wi] = chamber[pi]
            masks[chamber[wi]] |= mask
    return masks, above


def test_faster_voronoi_and_chamber_trees_give_the_same_results_as_before() -> None:
    """Session 6's faster evaluation splits every random position's board and cuts every territory into
    chambers exactly as the earlier code did, so level 5 searches the same nodes and plays the same moves at a
    fixed depth (only sooner)."""
    trees = 0
    for state in random_positions(150, 61):
        grid = grid_of(state)
        stride, (a, b) = grid.stride, grid.heads
        cases = [(grid.open, a, b, False), (grid.open, b, a, False)]
        for d in grid.open_moves(1):  # the first head ahead: the second has moved onto its target
            cases.append((grid.open ^ 1 << (b + grid.steps[d]), a, b + grid.steps[d], True))
        for free, first, second, ahead in cases:
            split = tron_ai.voronoi(free, stride, first, second, ahead)
            assert (split.first, split.second, split.touching) == _reference_voronoi(free, stride, first, second, ahead)
            for territory, head in ((split.first, first), (split.second, second)):
                graph = territory | 1 << head
                cuts = tron_ai.local_cuts(graph, stride)
                if territory & cuts:
                    expected = _reference_chamber_tree(graph, stride, head, cuts)
                    assert tron_ai._chamber_tree(graph, stride, head, cuts) == expected
                    trees += 1
    assert trees > 300
