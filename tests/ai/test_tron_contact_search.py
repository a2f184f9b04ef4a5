"""Tests of level 5's contact search in the compiled kernel (`_tronkernel.contact_search`, issue 18 session 10):
every completed depth gives the value the Python search core finds on the same tree, the move it returns reaches
that value, it stops at its deadline with the last completed depth, proven results end the deepening, its table
carried from call to call never changes a value, a root pinned at the draw value plays the best of its drawn moves
(session 15), late move reductions never change a solved result and reach a depth with fewer nodes (session 16),
level 5 uses it, and its Python port (server/ai/tron/contact.py, issue 38), which level 5 runs without the kernel,
searches exactly as it does: the same nodes, move, score, depth and main line."""

from __future__ import annotations

import random
import time

import pytest

from gamenight.server.ai import _tronkernel, tron_ai
from gamenight.server.ai.search import INFINITY, PROVEN, WIN, Limits, _Tree, search
from gamenight.server.ai.tron import contact
from gamenight.server.ai.tron import kernel as tron_kernel
from gamenight.server.ai.tron import params as tron_params
from gamenight.server.ai.tron_ai import Level5Engine, grid_of
from gamenight.server.games.tron import EAST, NORTH, load_map, new_state, official_maps
from tests.ai.test_tron_kernel import MAPS, _positions

FAR = 3600.0
"""A deadline offset no test reaches: the search runs to its depth limit."""


def _contact_positions(per_map: int, seed: int) -> list[tuple[int, int, int, int]]:
    """Random positions of every official two-player map whose riders are still in contact."""
    found = []
    for n, name in enumerate(MAPS):
        for free, stride, a, b in _positions(name, per_map, seed + n):
            if tron_ai.voronoi(free, stride, a, b).touching:
                found.append((free, stride, a, b))
    return found


def _compiled(
    free: int,
    stride: int,
    a: int,
    b: int,
    engine: Level5Engine,
    depth: int,
    deadline: float,
    tie_draw: int | None = None,
    reduction: int = 0,
) -> tuple:
    """The kernel's search of (free, a, b) with `engine`'s weights to `depth` plies, late moves reduced by `reduction`
    plies; with `tie_draw`, a root pinned at the draw value breaks the tie with draws worth `-tie_draw` (no share of
    the time kept for it)."""
    job = (free, stride, a, b, engine.draw_penalty, engine.edge, engine.chains, deadline, depth, reduction)
    found = (
        _tronkernel.contact_search(*job) if tie_draw is None else _tronkernel.contact_search(*job, deadline, tie_draw)
    )
    assert found is not NotImplemented
    return found


def _value(engine: Level5Engine, pos: tuple, depth: int, ply: int) -> int:
    """The core's negamax value of `pos` at `depth` plies (a fresh table, the full window)."""
    return _Tree(engine, {}, None, None).negamax(pos, depth, -INFINITY, INFINITY, ply)


def test_the_compiled_search_finds_the_cores_value_at_every_depth() -> None:
    """On random contact positions of every official map, the kernel's search to 1, 2, 4 and 6 plies scores the
    root exactly as the Python core does (stopping early only where the tree is solved), and its move reaches that
    score (level 5 plays the same value)."""
    positions = _contact_positions(6, 11)
    assert len(positions) >= 40
    compared = differing = 0
    for free, stride, a, b in positions:
        engine = Level5Engine(stride)
        root = (free, a, b, 0, 0)
        for depth in (1, 2, 4, 6):
            move, score, done, nodes, line = _compiled(free, stride, a, b, engine, depth, time.perf_counter() + FAR)
            assert 1 <= done <= depth and nodes > 0 and line[0] == move
            # a depth cut short is a solved tree (a proven result, or every line ended): deeper, the same value
            assert score == _value(engine, root, done, 0) == _value(engine, root, depth, 0)
            assert -_value(engine, engine.play(root, move), done - 1, 1) == score
            if len(engine.moves(root)) > 1:
                core_move, info = search(engine, root, Limits(depth=depth), tt={})
                assert (info.score, info.depth) == (score, done)
                compared += 1
                differing += core_move != move
    assert compared >= 100
    assert differing <= compared // 10  # equal scores may tie-break apart, rarely


def _room(rows: list[list[str]]) -> tuple[int, int, int, int]:
    """The board (free squares, stride) and the two heads of a room drawn as rows of "#", " ", "1" and "2"."""
    grid = grid_of(new_state(load_map("\n".join([f"{len(rows[0])} {len(rows)}", *map("".join, rows)]) + "\n", "room")))
    return (grid.open, grid.stride, *grid.heads)


def _close_riders(count: int, seed: int) -> list[tuple[int, int, int, int]]:
    """Small random walled rooms with the two heads one or two squares apart, where a head-on crash is near."""
    rng = random.Random(seed)
    found: list[tuple[int, int, int, int]] = []
    while len(found) < count:
        width, height = rng.randint(4, 9), rng.randint(4, 8)
        rows = [["#" if rng.random() < 0.2 else " " for _ in range(width)] for _ in range(height)]
        x0, y0 = rng.randrange(width), rng.randrange(height)
        dx, dy = rng.choice([(1, 1), (1, -1), (-1, 1), (-1, -1), (2, 0), (0, 2), (1, 0), (0, 1)])
        if not (0 <= x0 + dx < width and 0 <= y0 + dy < height):
            continue
        rows[y0][x0], rows[y0 + dy][x0 + dx] = "1", "2"
        found.append(_room(rows))
    return found


def test_a_root_pinned_at_the_draw_value_plays_the_best_of_its_drawn_moves() -> None:
    """When the opponent can hold every move to a draw (the root's value is the draw's), level 5 plays, of the moves
    that keep that value, the best by a search where draws cost nothing, not just the first searched; the score it
    reports is still the draw's, and on every root its move keeps the root's value."""
    pinned = ranked = changed = 0
    for free, stride, a, b in _close_riders(1500, 41):
        engine, neutral = Level5Engine(stride), Level5Engine(stride)
        neutral.draw_penalty = 0
        root = (free, a, b, 0, 0)
        for depth in (2, 4):
            plain = _compiled(free, stride, a, b, engine, depth, time.perf_counter() + FAR)
            move, score, done, _, line = _compiled(free, stride, a, b, engine, depth, time.perf_counter() + FAR, 0)
            assert (score, done) == plain[1:3] and line[0] == move
            values = {m: -_value(engine, engine.play(root, m), done - 1, 1) for m in engine.moves(root)}
            assert values[move] == score, "the move played keeps the root's value"
            drawn = [m for m, value in values.items() if value == score]
            if score != -engine.draw_penalty or len(drawn) < 2 or done < depth:
                continue
            pinned += 1
            tie = {m: -_value(neutral, neutral.play(root, m), depth - 1, 1) for m in drawn}
            assert tie[move] == max(tie.values()), "of the drawn moves, the best with draws at 0"
            ranked += len(set(tie.values())) > 1
            changed += move != plain[0]
    assert pinned >= 80 and ranked >= 30 and changed >= 20


def _tiny_rooms(count: int, seed: int) -> list[tuple[int, int, int, int]]:
    """Random walled rooms of at most 20 squares with both riders in them and in contact: searched to the end."""
    rng = random.Random(seed)
    found: list[tuple[int, int, int, int]] = []
    while len(found) < count:
        width, height = rng.randint(3, 5), rng.randint(3, 4)
        rows = [["#" if rng.random() < 0.15 else " " for _ in range(width)] for _ in range(height)]
        squares = [(x, y) for y in range(height) for x in range(width) if rows[y][x] == " "]
        if len(squares) < 4:
            continue
        (x1, y1), (x2, y2) = rng.sample(squares, 2)
        rows[y1][x1], rows[y2][x2] = "1", "2"
        free, stride, a, b = room = _room(rows)
        if tron_ai.voronoi(free, stride, a, b).touching:
            found.append(room)
    return found


def test_late_move_reductions_never_change_a_solved_result() -> None:
    """Searched to the end (every line to a crash), a search that reduces late moves finds the same value as one
    that does not, and its move reaches that value: level 5 never misjudges a position it has solved."""
    solved = 0
    for free, stride, a, b in _tiny_rooms(300, 5):
        engine = Level5Engine(stride)
        root = (free, a, b, 0, 0)
        # no depth limit: the deepening stops once no line, reduced or not, met the horizon
        plain = _compiled(free, stride, a, b, engine, 124, time.perf_counter() + FAR)
        move, score, _, _, line = _compiled(free, stride, a, b, engine, 124, time.perf_counter() + FAR, reduction=2)
        assert score == plain[1] and line[0] == move
        # a game here lasts at most 20 plies: 60 plies of the core is the exact value
        assert score == _value(engine, root, 60, 0) == -_value(engine, engine.play(root, move), 59, 1)
        solved += abs(score) >= PROVEN
    assert solved >= 150


def test_late_move_reductions_reach_a_depth_with_fewer_nodes() -> None:
    """Reducing late moves by a tick searches the official maps' contact positions to 8 plies in well under the
    nodes the full-width search needs: the time it saves goes to a deeper search in play."""
    full = reduced = 0
    for free, stride, a, b in _contact_positions(2, 13):
        engine = Level5Engine(stride)
        # reduced first: the full search then has the table's move order, the reduced one had none
        reduced += _compiled(free, stride, a, b, engine, 8, time.perf_counter() + FAR, reduction=2)[3]
        full += _compiled(free, stride, a, b, engine, 8, time.perf_counter() + FAR)[3]
    assert reduced < 0.8 * full


def _both(free: int, stride: int, a: int, b: int, depth: int, reduction: int, tie: bool = False) -> tuple[tuple, tuple]:
    """The kernel's and the Python port's search of one position with level 5's weights to `depth` plies (with `tie`,
    a root pinned at the draw value ranks its tied moves with draws worth `LEVEL5_TIE_DRAW`)."""
    engine = Level5Engine(stride)
    deadline = time.perf_counter() + FAR
    job = (free, stride, a, b, engine.draw_penalty, engine.edge, engine.chains, deadline, depth, reduction)
    ranking = (deadline, tron_params.LEVEL5_TIE_DRAW) if tie else ()
    found = _tronkernel.contact_search(*job, *ranking)
    assert found is not NotImplemented
    return found, contact.contact_search(*job, *ranking)


@pytest.mark.parametrize("leaves", ["kernel", "pure"])
def test_the_python_search_is_the_kernels_line_for_line(leaves: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the kernel level 5 searches contact with a Python port of its search: on positions neither has seen,
    with late move reductions as level 5 plays them and without, both search the same nodes and answer the same
    move, score, depth and main line, whether the port's leaves are the kernel's or the pure-Python ones."""
    if leaves == "pure":
        monkeypatch.setattr(tron_kernel, "KERNEL", None)
    positions = _contact_positions(2, 202 if leaves == "kernel" else 303)
    assert len(positions) >= 12 and tron_params.LEVEL5_REDUCTION == 2
    nodes = 0
    for free, stride, a, b in positions:
        for depth in (4, 8, 12):
            for reduction in (tron_params.LEVEL5_REDUCTION, 0):
                compiled, ported = _both(free, stride, a, b, depth, reduction)
                assert ported == compiled
                nodes += compiled[3]
    assert nodes > 10_000


def test_the_python_search_ranks_the_moves_tied_at_the_draw_value_as_the_kernel() -> None:
    """A root pinned at the draw value: the Python port ranks the tied moves as the kernel does (same nodes, move,
    score, depth and main line), so level 5 without the kernel plays the same move there too."""
    pinned = 0
    for free, stride, a, b in _close_riders(400, 77):
        for depth in (2, 4, 6):
            compiled, ported = _both(free, stride, a, b, depth, tron_params.LEVEL5_REDUCTION, tie=True)
            assert ported == compiled
            pinned += compiled[1] == -tron_params.LEVEL5_DRAW
    assert pinned >= 100


def test_level5_without_the_kernel_plays_the_kernels_move(monkeypatch: pytest.MonkeyPatch) -> None:
    """Level 5 in contact answers the same move, depth, score, nodes and main line with the kernel as without it
    (`GAMENIGHT_PURE_AI=1`, no compiler), given the same depth: only its speed differs."""
    monkeypatch.setattr(tron_params, "MAX_TICK_DEPTH", 8)  # both reach it long before the deadline
    # a room of this test's own: neither search's table has entries of it from other tests to order moves by
    rows = ["###########", "#   #     #", "# 1   ##  #", "#   #     #", "##  #  2  #", "#      #  #", "###########"]
    state = new_state(load_map("\n".join(["11 7", *rows]) + "\n", "room"))
    monkeypatch.setattr(tron_kernel, "KERNEL", _tronkernel)  # the kernel even under GAMENIGHT_PURE_AI=1
    found = tron_ai.choose_level(state, 0, 5, 5000, random.Random(0))
    monkeypatch.setattr(tron_kernel, "KERNEL", None)
    pure = tron_ai.choose_level(state, 0, 5, 5000, random.Random(0))
    assert found[1]["phase"] == "contact" and found[1]["depth"] == 8
    assert found[0] == pure[0]
    assert {k: v for k, v in found[1].items() if k != "ms"} == {k: v for k, v in pure[1].items() if k != "ms"}


def test_a_past_deadline_still_completes_the_first_depth() -> None:
    """With its deadline already gone the search still answers a legal move of the first depth (the clock is only
    looked at from depth 2), and with time it completes the depth asked for."""
    grid = grid_of(new_state(official_maps()["joust"]))
    a, b = grid.heads
    engine = Level5Engine(grid.stride)
    move, _, done, _, _ = _compiled(grid.open, grid.stride, a, b, engine, 60, time.perf_counter() - 1)
    assert done == 1
    assert move in grid.open_moves(0)
    _, _, done, _, line = _compiled(grid.open, grid.stride, a, b, engine, 8, time.perf_counter() + FAR)
    assert done == 8 and len(line) == 8


@pytest.mark.parametrize(
    ("text", "expected"),
    [("5 5\n#####\n#1  #\n#####\n##2##\n#####\n", WIN - 2), ("5 5\n#####\n#2  #\n#####\n##1##\n#####\n", -(WIN - 2))],
)
def test_a_proven_result_ends_the_deepening(text: str, expected: int) -> None:
    """A rider walled in on every side crashes on the first tick: the search proves the win (or the loss) two plies
    down, as the core scores it, and deepens no further."""
    grid = grid_of(new_state(load_map(text, "trap")))
    a, b = grid.heads
    engine = Level5Engine(grid.stride)
    move, score, done, _, _ = _compiled(grid.open, grid.stride, a, b, engine, 60, time.perf_counter() + FAR)
    assert (score, done) == (expected, 2)
    assert abs(score) >= PROVEN
    assert score == _value(engine, (grid.open, a, b, 0, 0), 2, 0)
    assert move == (EAST if expected > 0 else NORTH)


def test_the_carried_table_never_changes_a_value() -> None:
    """The table kept from one call to the next only orders moves: searching other positions in between, or the
    same one again, gives every position the same score at the same depth."""
    positions = _contact_positions(1, 23)[:12]
    first = []
    for free, stride, a, b in positions:
        first.append(_compiled(free, stride, a, b, Level5Engine(stride), 6, time.perf_counter() + FAR)[1])
    again = []
    for free, stride, a, b in reversed(positions):
        again.append(_compiled(free, stride, a, b, Level5Engine(stride), 6, time.perf_counter() + FAR)[1])
    assert first == again[::-1]


def test_level5_searches_contact_in_the_kernel_and_in_python_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Level 5 in contact answers with the kernel's search (its depth and main line in the move's info), and with
    the kernel switched off the Python search answers the same kind of move."""
    state = new_state(official_maps()["joust"])
    move, info = tron_ai.choose_level(state, 0, 5, 100, random.Random(0))
    assert info["phase"] == "contact" and info["depth"] >= 2 and len(info["pv"]) >= 2
    monkeypatch.setattr(tron_kernel, "KERNEL", None)
    pure_move, pure_info = tron_ai.choose_level(state, 0, 5, 100, random.Random(0))
    assert pure_info["phase"] == "contact" and pure_info["depth"] >= 2
    assert {move, pure_move} <= set(grid_of(state).open_moves(0))


def test_the_compiled_search_refuses_bad_arguments_and_wide_boards() -> None:
    """Wrong arguments raise TypeError / ValueError, and a board wider than the kernel's 61 squares is declined
    (NotImplemented: level 5 then searches it in Python)."""
    grid = grid_of(new_state(official_maps()["u"]))
    a, b = grid.heads
    with pytest.raises(ValueError):
        _tronkernel.contact_search(grid.open, grid.stride, a, b, 2000, 97, False, FAR, 0)
    with pytest.raises(ValueError):
        _tronkernel.contact_search(grid.open, grid.stride, -3, b, 2000, 97, False, FAR, 4)
    with pytest.raises(TypeError):
        _tronkernel.contact_search(grid.open, grid.stride, a, b, 2000, 97, False, "soon", 4)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _tronkernel.contact_search(grid.open, grid.stride, a, b)  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        _tronkernel.contact_search(grid.open, grid.stride, a, b, 2000, 97, False, FAR, 4, -1)
    width, height = 70, 9
    rows = ["#" * width, *("#" + " " * (width - 2) + "#" for _ in range(height - 2)), "#" * width]
    rows[4] = "#1" + " " * (width - 4) + "2#"
    wide = grid_of(new_state(load_map("\n".join([f"{width} {height}", *rows]) + "\n", "wide")))
    assert _tronkernel.contact_search(wide.open, wide.stride, *wide.heads, 2000, 97, False, FAR, 4) is NotImplemented


def test_search_keys_tell_apart_boards_that_python_hashes_alike() -> None:
    """Two boards differing by a trail square moved 61 squares along (equal under Python's int hash, which is
    modulo 2**61 - 1) get different table keys, so the search never takes one's value for the other's."""
    grid = grid_of(new_state(official_maps()["huge-room"]))
    a, b = grid.heads
    squares = [i for i in range(grid.open.bit_length()) if grid.open >> i & 1 and grid.open >> (i + 61) & 1]
    p = squares[len(squares) // 2]
    one, other = grid.open ^ 1 << p, grid.open ^ 1 << (p + 61)
    assert hash(one) == hash(other)
    engine = tron_ai.TronEngine(grid.stride)
    assert engine.key((one, a, b, 0, 0)) != engine.key((other, a, b, 0, 0))
    ticks = tron_ai.TickEngine(grid.stride)
    assert ticks.key((one, a, b, 0, True, 0)) != ticks.key((other, a, b, 0, True, 0))
