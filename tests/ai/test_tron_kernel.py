"""Tests of the Tron AI's optional compiled kernel (server/ai/_tronkernel.c, issue 18 session 8): it is built in
the test environment, it computes exactly what the pure-Python functions compute on random positions of every
official map, the pure path still runs and searches identically, and `GAMENIGHT_PURE_AI=1` turns it off."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from bench.tron_bench import small_room
from gamenight.server.ai import _tronkernel, tron_ai
from gamenight.server.ai.search import Limits, search
from gamenight.server.ai.tron import kernel as tron_kernel
from gamenight.server.ai.tron_ai import LEVEL5_EDGE, grid_of
from gamenight.server.games.tron import DIRECTIONS, NORTH, STEPS, Tron, TronState, load_map, new_state, official_maps

GAME = Tron()

MAPS = sorted(name for name, m in official_maps().items() if m.players == 2)


@pytest.fixture
def pure(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """tron_ai's functions run their pure-Python code for the test's duration (the kernel switched off)."""
    monkeypatch.setattr(tron_kernel, "KERNEL", None)
    tron_ai._TREES.clear()
    yield
    tron_ai._TREES.clear()


def _safe(state: TronState, seat: int) -> list[int]:
    """The directions onto an empty square for `seat`."""
    x, y = state.heads[seat]
    return [d for d in DIRECTIONS if state.cell(x + STEPS[d][0], y + STEPS[d][1]) == 0]


def _positions(name: str, count: int, seed: int) -> list[tuple[int, int, int, int]]:
    """(open squares, stride, head 0, head 1) of `count` positions of random, not suicidal play on map `name`,
    from the start to deep into the game, a third of them with random extra walls (blocked squares) that cut
    the board into chambers."""
    rng = random.Random(seed)
    tron_map = official_maps()[name]
    room = tron_map.width * tron_map.height
    found = []
    while len(found) < count:
        state = new_state(tron_map)
        ticks = rng.randint(0, 24) if rng.random() < 0.5 else rng.randint(0, room // 3)
        for _ in range(ticks):
            after = GAME.apply(state, {s: rng.choice(_safe(state, s) or [NORTH]) for s in (0, 1)})
            if after.result is not None:
                break
            state = after
        grid = grid_of(state)
        free = grid.open
        if rng.random() < 1 / 3:
            share = rng.uniform(0.05, 0.3)
            bits = free
            while bits:
                low = bits & -bits
                bits ^= low
                if rng.random() < share:
                    free ^= low
        found.append((free, grid.stride, *grid.heads))
    return found


def _cases(free: int, stride: int, a: int, b: int) -> Iterator[tuple[int, int, int, bool]]:
    """The evaluation's inputs at a position: each head first, and the first ahead after each of the second's
    possible moves (the second has made this tick's move onto its target, which is then no longer open)."""
    yield free, a, b, False
    yield free, b, a, False
    for step in (-stride, 1, stride, -1):
        if free >> (b + step) & 1:
            yield free ^ 1 << (b + step), a, b + step, True


def _pure_results(free: int, stride: int, first: int, second: int, ahead: bool) -> list[Any]:
    """Every kernel-backed function's pure-Python result for one case (the caller has switched the kernel off)."""
    mine, theirs, touching = tron_ai._split(free, stride, first, second, ahead)
    return [
        (mine, theirs, touching),
        [
            tron_ai.chamber_value(t, free, stride, h, e)
            for t, h in ((mine, first), (theirs, second))
            for e in (97, 0, 194)
        ],
        [f(free, stride, h) for h in (first, second) for f in (tron_ai.chamber_fill, tron_ai.chain_fill)],
        [
            tron_ai.territory_score(stride, free, first, second, ahead, draw, True, LEVEL5_EDGE, False, -1, chains)
            for draw in (-2000, 2000)
            for chains in (False, True)
        ],
        [tron_ai.room_after(free, stride, h)[0] for h in (first, second)],
        [tron_ai.greedy_ride(free, stride, h) for h in (first, second)],
    ]


def _kernel_results(free: int, stride: int, first: int, second: int, ahead: bool) -> list[Any]:
    """The same results from the compiled kernel, called directly."""
    k = _tronkernel
    split = k.split(free, stride, first, second, ahead)
    assert split is not NotImplemented
    mine, theirs, _ = split
    return [
        split,
        [k.chamber_value(t, free, stride, h, e) for t, h in ((mine, first), (theirs, second)) for e in (97, 0, 194)],
        [f(free, stride, h) for h in (first, second) for f in (k.chamber_fill, k.chain_fill)],
        [
            k.territory_score(stride, free, first, second, ahead, draw, LEVEL5_EDGE, chains)
            for draw in (-2000, 2000)
            for chains in (False, True)
        ],
        [k.room_after(free, stride, h) for h in (first, second)],
        [_ride(free, stride, h) for h in (first, second)],
    ]


def _ride(free: int, stride: int, head: int) -> list[int]:
    """The kernel's greedy ride without a deadline (never late)."""
    found = _tronkernel.greedy_ride(free, stride, head, -1.0)
    assert found is not NotImplemented
    ride, late = found
    assert not late
    return ride


def test_the_kernel_is_built_and_used_unless_switched_off() -> None:
    """An install with a C compiler (CI's, this one) builds the kernel and tron_ai uses it, unless
    GAMENIGHT_PURE_AI=1 was set when it was imported (a failure here means the build step did not run)."""
    assert _tronkernel.CELL == tron_ai.CELL
    if os.environ.get("GAMENIGHT_PURE_AI") == "1":
        assert tron_kernel.KERNEL is None
    else:
        assert tron_kernel.KERNEL is _tronkernel


@pytest.mark.parametrize(("value", "expected"), [("1", "None"), ("0", "kernel"), (None, "kernel")])
def test_gamenight_pure_ai_turns_the_kernel_off(value: str | None, expected: str) -> None:
    """GAMENIGHT_PURE_AI=1 in the environment makes tron_ai run its pure-Python code; anything else keeps the kernel."""
    env = {k: v for k, v in os.environ.items() if k != "GAMENIGHT_PURE_AI"}
    if value is not None:
        env["GAMENIGHT_PURE_AI"] = value
    code = "from gamenight.server.ai.tron import kernel; print('None' if kernel.KERNEL is None else 'kernel')"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == expected


@pytest.mark.parametrize("name", MAPS)
def test_kernel_and_pure_code_agree_on_random_positions(name: str, pure: None) -> None:
    """On every official map, the kernel's Voronoi split, chamber values, chamber and chain fills, level 5's
    territory score and the endgame's room bound and greedy ride equal the pure-Python functions' on random
    positions (contact and apart, either head first, the first ahead, extra walls), so level 5 plays the same
    with or without it."""
    seen: Counter[str] = Counter()
    for position in _positions(name, 40, seed=MAPS.index(name) + 800):
        stride = position[1]
        for free, first, second, ahead in _cases(*position):
            expected = _pure_results(free, stride, first, second, ahead)
            assert _kernel_results(free, stride, first, second, ahead) == expected
            seen["touching" if expected[0][2] else "apart"] += 1
            seen["ahead"] += ahead
    assert seen["touching"] + seen["apart"] >= 80
    assert seen["ahead"] >= (1 if name.startswith("test-board") else 10)
    assert seen["apart"] >= 5
    start = grid_of(new_state(official_maps()[name]))
    if tron_ai.voronoi(start.open, start.stride, *start.heads).touching:  # divider, playground: apart from the start
        assert seen["touching"] >= 10


def test_kernel_and_pure_code_agree_on_many_small_random_rooms(pure: None) -> None:
    """On 2,000 random small walled rooms with two riders (many cut squares and dead ends, the heads next to each
    other or far apart) the kernel's results equal the pure functions'."""
    rng = random.Random(88)
    apart = 0
    for _ in range(2000):
        width, height = rng.randint(3, 12), rng.randint(3, 10)
        share = rng.uniform(0.0, 0.4)
        rows = [["#" if rng.random() < share else " " for _ in range(width)] for _ in range(height)]
        cells = [(x, y) for y in range(height) for x in range(width)]
        (x0, y0), (x1, y1) = rng.sample(cells, 2)
        rows[y0][x0], rows[y1][x1] = "1", "2"
        text = "\n".join([f"{width} {height}", *("".join(row) for row in rows)]) + "\n"
        grid = grid_of(new_state(load_map(text, "room")))
        for free, first, second, ahead in _cases(grid.open, grid.stride, *grid.heads):
            expected = _pure_results(free, grid.stride, first, second, ahead)
            assert _kernel_results(free, grid.stride, first, second, ahead) == expected
            apart += not expected[0][2]
    assert apart >= 200


def _searches(positions: list[TronState], depth: int) -> list[tuple[int, int, tuple[int, ...]]]:
    """Level 5's contact search of each position to `depth` plies: (nodes, score, main line)."""
    found = []
    for state in positions:
        grid = grid_of(state)
        tron_ai._TREES.clear()
        engine = tron_ai.Level5Engine(grid.stride)
        _, info = search(engine, (grid.open, *grid.heads, 0, 0), Limits(depth=depth), rng=random.Random(0), tt={})
        found.append((info.nodes, info.score, tuple(info.pv)))
    return found


def test_level5_searches_the_same_tree_with_and_without_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Level 5's search to a fixed depth visits the same nodes, reaches the same score and main line with the
    kernel as with the pure-Python evaluation (so the kernel changes only its speed)."""
    rng = random.Random(7)
    positions = []
    for name in ("joust", "keyhole", "u", "huge-room", "apocalyptic", "15x16"):
        state = new_state(official_maps()[name])
        for _ in range(rng.randint(2, 12)):
            after = GAME.apply(state, {s: rng.choice(_safe(state, s) or [NORTH]) for s in (0, 1)})
            if after.result is not None:
                break
            state = after
        positions.append(state)
    with_kernel = _searches(positions, 5)
    monkeypatch.setattr(tron_kernel, "KERNEL", None)
    assert _searches(positions, 5) == with_kernel
    assert sum(nodes for nodes, _, _ in with_kernel) > 100


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "pure"])
def test_a_ride_past_its_deadline_stops_as_the_caller_asked(kernel: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both ways, a greedy ride whose deadline has passed raises the search's timeout, or with `partial`
    returns the ride so far (none: the clock is read before the first step); a future deadline rides it all."""
    if not kernel:
        monkeypatch.setattr(tron_kernel, "KERNEL", None)
    grid = grid_of(new_state(official_maps()["playground"]))
    head = grid.heads[0]
    past = time.perf_counter() - 1
    with pytest.raises(tron_ai._Timeout):
        tron_ai.greedy_ride(grid.open, grid.stride, head, past)
    assert tron_ai.greedy_ride(grid.open, grid.stride, head, past, partial=True) == []
    whole = tron_ai.greedy_ride(grid.open, grid.stride, head)
    assert tron_ai.greedy_ride(grid.open, grid.stride, head, time.perf_counter() + 60) == whole
    assert len(whole) > 150


def test_the_endgame_search_finds_the_same_rides_with_and_without_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Given time to finish, the endgame search visits the same nodes and picks the same ride in small rooms
    with the kernel's room bound and greedy rides as with the pure code (the kernel changes only its speed)."""
    rng = random.Random(9)
    rooms = []
    while len(rooms) < 150:
        state = small_room(rng)
        grid = grid_of(state)
        region = tron_ai.flood(grid.open, grid.stride, grid.heads[0])
        if 8 <= region.bit_count() <= 40:
            rooms.append((region, grid.stride, grid.heads[0]))

    def searched() -> list[tuple[list[int], int, bool]]:
        found = []
        for region, stride, head in rooms:
            fill = tron_ai.fill_search(region, stride, head, time.perf_counter() + 60)
            found.append((fill.best, fill.nodes, fill.proven))
        return found

    with_kernel = searched()
    monkeypatch.setattr(tron_kernel, "KERNEL", None)
    assert searched() == with_kernel
    assert all(proven for _, _, proven in with_kernel)


def test_boards_too_wide_for_the_kernel_fall_back_to_the_pure_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """A custom map wider than the kernel's 61 squares still gets level 5's evaluation: the kernel declines it
    (NotImplemented) and tron_ai computes it in Python, with the same result as the pure path."""
    width, height = 70, 9
    rows = ["#" * width, *("#" + " " * (width - 2) + "#" for _ in range(height - 2)), "#" * width]
    rows[4] = "#1" + " " * 30 + "#" * 5 + " " * (width - 39) + "2#"
    grid = grid_of(new_state(load_map("\n".join([f"{width} {height}", *rows]) + "\n", "wide")))
    a, b = grid.heads
    assert _tronkernel.split(grid.open, grid.stride, a, b, False) is NotImplemented
    assert _tronkernel.territory_score(grid.stride, grid.open, a, b, False, 0, 97, False) is NotImplemented
    assert _tronkernel.chamber_fill(grid.open, grid.stride, a) is NotImplemented
    assert _tronkernel.greedy_ride(grid.open, grid.stride, a, -1.0) is NotImplemented
    assert _tronkernel.room_after(grid.open, grid.stride, a) is NotImplemented
    ride = tron_ai.greedy_ride(grid.open, grid.stride, a)
    score = tron_ai.territory_score(grid.stride, grid.open, a, b, False, 0, True, 97)
    fill = tron_ai.chain_fill(grid.open, grid.stride, a)
    monkeypatch.setattr(tron_kernel, "KERNEL", None)
    assert tron_ai.territory_score(grid.stride, grid.open, a, b, False, 0, True, 97) == score
    assert tron_ai.chain_fill(grid.open, grid.stride, a) == fill
    assert tron_ai.greedy_ride(grid.open, grid.stride, a) == ride
    assert len(ride) > 100


def test_the_kernel_refuses_bad_arguments_with_a_clear_error() -> None:
    """Wrong arguments to the kernel raise TypeError or ValueError (never a crash of the process)."""
    grid = grid_of(new_state(official_maps()["u"]))
    a, b = grid.heads
    with pytest.raises(ValueError):
        _tronkernel.split(-1, grid.stride, a, b, False)
    with pytest.raises(ValueError):
        _tronkernel.chamber_fill(grid.open, grid.stride, -5)
    with pytest.raises(TypeError):
        _tronkernel.chain_fill("board", grid.stride, a)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _tronkernel.split(grid.open, grid.stride, a)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _tronkernel.greedy_ride(grid.open, grid.stride, a, "soon")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _tronkernel.room_after(grid.open, grid.stride)  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        _tronkernel.greedy_ride(grid.open, grid.stride, -1, -1.0)


def test_pure_functions_give_known_values_with_the_kernel_off(pure: None) -> None:
    """The pure-Python path itself (what runs without a compiler or with GAMENIGHT_PURE_AI=1) counts a room by
    hand-checked figures: a rider in a corner of an empty 3x3 room can ride all 8 other squares, an empty room's split
    between two heads in opposite corners is even."""
    text = "5 5\n#####\n#1  #\n#   #\n#  2#\n#####\n"
    grid = grid_of(new_state(load_map(text, "room")))
    a, b = grid.heads
    assert tron_kernel.KERNEL is None
    assert tron_ai.chamber_fill(grid.open | 1 << b, grid.stride, a) == 8
    assert tron_ai.chain_fill(grid.open | 1 << b, grid.stride, a) == 8
    mine, theirs, touching = tron_ai._split(grid.open, grid.stride, a, b, False)
    assert mine.bit_count() == theirs.bit_count() == 2 and touching
    assert tron_ai.territory_score(grid.stride, grid.open, a, b, False, -2000, True, 97) == 0
