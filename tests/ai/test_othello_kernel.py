"""Tests of the Othello AI's optional compiled kernel (server/ai/_othellokernel.c, issue 38 session 1): it is built
in the test environment and level 5 uses it on 8x8; its moves and perft equal Bik's table and the rules module, its
evaluation equals `evaluate_sides`, its search visits the same tree as the Python core, its solver finds the Python
solver's values and the FFO problems' scores, and `GAMENIGHT_PURE_AI=1` turns it off."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gamenight.server.ai import _othellokernel, othello_ai
from gamenight.server.ai.othello_ai import LIMIT, EndgameSolver, KernelSolver, choose_level, endgame_threshold
from gamenight.server.ai.search import Limits, search
from gamenight.server.games.othello import (
    FULL_MASK,
    Othello,
    OthelloState,
    _perft,
    flip_mask,
    legal_mask,
    square_name,
)

DATA = Path(__file__).resolve().parent.parent / "data"
GAME = Othello()


def passed_deadline() -> float:
    """A deadline already behind us on the kernel's clock (perf_counter): whatever the machine's speed, a search
    given it stops at its first check. Nothing here measures how long anything took."""
    return time.perf_counter() - 1.0


def data_lines(name: str) -> list[list[str]]:
    """The whitespace-split data lines of a file in tests/data, comments left out."""
    text = (DATA / name).read_text()
    return [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def random_state(seed: int, plies: int, size: int = 8) -> OthelloState:
    """The state after up to `plies` random moves from the start (fewer if the game ends)."""
    rng = random.Random(seed)
    state = GAME.initial_state({"size": size})
    for _ in range(plies):
        if state.over:
            break
        state = GAME.apply(state, {state.turn: rng.choice(GAME.legal_moves(state, state.turn))})
    return state


def positions(count: int, seed: int) -> list[OthelloState]:
    """`count` states of random games, from the start to the end (finished games and passes included)."""
    rng = random.Random(seed)
    return [random_state(rng.randrange(1 << 30), rng.randint(0, 64)) for _ in range(count)]


def with_empties(count: int, low: int, high: int, seed: int) -> list[tuple[int, int]]:
    """(own, opp) of `count` random games' positions with `low`..`high` empty squares and a side to move."""
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        target = rng.randint(low, high)
        state = GAME.initial_state({})
        while not state.over and (FULL_MASK[8] ^ (state.black | state.white)).bit_count() > target:
            state = GAME.apply(state, {state.turn: rng.choice(GAME.legal_moves(state, state.turn))})
        if not state.over:
            found.append(state.sides())
    return found


@pytest.fixture
def kernel_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """othello_ai uses the compiled kernel for the test's duration, even under GAMENIGHT_PURE_AI=1."""
    monkeypatch.setattr(othello_ai, "KERNEL", _othellokernel)


@pytest.fixture
def hand_weights() -> Iterator[None]:
    """The kernel's search scores leaves with level 5's hand weights (not the fitted patterns) for the test."""
    was = _othellokernel.use_patterns(False)
    yield
    _othellokernel.use_patterns(was)


def test_the_kernel_is_built_and_used_unless_switched_off() -> None:
    """An install with a C compiler (CI's, this one) builds the kernel and level 5 on 8x8 uses it, unless
    GAMENIGHT_PURE_AI=1 was set when othello_ai was imported (a failure here means the build step did not run)."""
    assert _othellokernel.weights() == othello_ai.weight_rows(8)
    if os.environ.get("GAMENIGHT_PURE_AI") == "1":
        assert othello_ai.KERNEL is None
    else:
        assert othello_ai.KERNEL is _othellokernel
        assert othello_ai.uses_kernel(8, 5)


@pytest.mark.parametrize(("value", "expected"), [("1", "None"), (None, "kernel")])
def test_gamenight_pure_ai_turns_the_kernel_off(value: str | None, expected: str) -> None:
    """GAMENIGHT_PURE_AI=1 in the environment makes othello_ai run its pure-Python code; without it the kernel runs."""
    env = {k: v for k, v in os.environ.items() if k != "GAMENIGHT_PURE_AI"}
    if value is not None:
        env["GAMENIGHT_PURE_AI"] = value
    code = "from gamenight.server.ai import othello_ai; print('None' if othello_ai.KERNEL is None else 'kernel')"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == expected


def test_perft_equals_biks_table() -> None:
    """The kernel's move generation counts Bik's published leaves from the start to depth 9 (passes from depth 9)."""
    table = {int(depth): int(count) for depth, count, *_ in data_lines("othello_perft.txt")}
    own, opp = GAME.initial_state({}).sides()
    for depth in range(1, 10):
        assert _othellokernel.perft(own, opp, depth) == table[depth], depth


def test_moves_flips_and_perft_equal_the_rules_module_on_random_positions() -> None:
    """On 300 random positions the kernel's legal squares, the discs each square flips and perft to depth 3 (passes
    and finished games included) equal server.games.othello's."""
    passes = 0
    for state in positions(300, seed=38):
        own, opp = state.sides()
        assert _othellokernel.legal_moves(own, opp) == legal_mask(own, opp, 8)
        assert _othellokernel.legal_moves(opp, own) == legal_mask(opp, own, 8)
        for sq in range(64):
            expected = 0 if (own | opp) >> sq & 1 else flip_mask(own, opp, sq, 8)
            assert _othellokernel.flips(own, opp, sq) == expected
        assert _othellokernel.perft(own, opp, 3) == _perft(own, opp, 8, 3, False)
        passes += not legal_mask(own, opp, 8)
    assert passes >= 5


def test_evaluation_equals_evaluate_sides_on_random_positions() -> None:
    """On 400 random positions of every stage, for both sides to move, the kernel's static score equals level 5's
    `evaluate_sides` (phase weights, stable edges, parity), so the kernel plays the same player."""
    geo, table = othello_ai.geometry(8), othello_ai.phase_weights(8)
    for state in positions(400, seed=5):
        for own, opp in (state.sides(), state.sides()[::-1]):
            expected = othello_ai.evaluate_sides(own, opp, legal_mask(own, opp, 8), geo, table)
            assert _othellokernel.evaluate(own, opp) == expected


def _python_search(own: int, opp: int, depth: int) -> tuple[Any, ...]:
    """The pure core's (move, score, depth, nodes, main line) for level 5 to a fixed depth (no noise)."""
    engine = othello_ai.OthelloEngine(8)
    move, info = search(engine, engine.position(own, opp), Limits(depth=depth), rng=random.Random(0))
    return move, info.score, info.depth, info.nodes, info.pv


def test_search_visits_the_same_tree_as_the_python_core(hand_weights: None) -> None:
    """To fixed depths 1, 2, 3 and 5 on random positions from the opening to the last moves the kernel's
    search with the hand weights returns the move, score, depth, node count and main line of search.search over
    OthelloEngine(8)."""
    states = [s for s in positions(40, seed=11) if not s.over][:10]
    states.append(random_state(3, 57))
    for state in states:
        own, opp = state.sides()
        for depth in (1, 2, 3, 5):
            assert _othellokernel.search(own, opp, depth, -1.0) == _python_search(own, opp, depth)


def test_kernel_search_respects_its_deadline(kernel_on: None) -> None:
    """With its deadline already passed the kernel stops after depth 1: exactly the search to depth 1 (same move,
    score, nodes, line), a legal move; and a 1 ms budget through `kernel_search` stops as early."""
    own, opp = random_state(1, 20).sides()
    passed = _othellokernel.search(own, opp, 60, passed_deadline())
    assert passed == _othellokernel.search(own, opp, 1, -1.0)
    move, _score, done, _nodes, _line = passed
    assert done == 1 and move is not None and legal_mask(own, opp, 8) >> move & 1
    assert othello_ai.kernel_search(own, opp, Limits(time_ms=0))[1].depth == 1


def test_solver_values_equal_the_python_solver(kernel_on: None) -> None:
    """On 30 random positions with 10-12 empties the kernel's exact value and its win / draw / loss answer equal
    EndgameSolver's, and its move achieves the value."""
    for own, opp in with_empties(30, 10, 12, seed=4):
        _move, value = EndgameSolver(8).best_move(own, opp)
        k_move, k_value = KernelSolver().best_move(own, opp)
        assert k_value == value
        assert (KernelSolver().best_move(own, opp, -1, 1)[1] > 0) == (value > 0)
        assert k_move is not None
        flips = flip_mask(own, opp, k_move, 8)
        assert -EndgameSolver(8).solve(opp ^ flips, own | flips | 1 << k_move) == value


@pytest.mark.parametrize("line", data_lines("othello_endgames_13_14.txt"), ids=lambda line: line[0])
def test_solver_finds_the_published_13_14_empties_scores(line: list[str], kernel_on: None) -> None:
    """On the reference endgames (13-14 empties, one ending with empty squares) the kernel finds the published
    score, with the game's scoring (empty squares to nobody)."""
    _source, board, side, _move, raw, _ffo, _empties = line
    black = sum(1 << i for i, c in enumerate(board) if c == "X")
    white = sum(1 << i for i, c in enumerate(board) if c == "O")
    own, opp = (black, white) if side == "X" else (white, black)
    assert KernelSolver().best_move(own, opp)[1] == int(raw)


def test_solver_solves_ffo_1_to_19() -> None:
    """FFO endgame problems #1-#19 (14-16 empties) solved exactly: the FFO score (empties to the winner) and one of
    the best moves, all in well under a few seconds together."""
    for number, board, side, best, score, *_ in data_lines("othello_ffo_1_19.txt"):
        black = sum(1 << i for i, c in enumerate(board) if c == "X")
        white = sum(1 << i for i, c in enumerate(board) if c == "O")
        own, opp = (black, white) if side == "X" else (white, black)
        found = _othellokernel.solve(own, opp, -LIMIT, LIMIT, -1.0, True, True)
        assert found is not None
        move, value, _nodes = found
        assert value == int(score), number
        assert move is not None and square_name(move, 8).upper() in best.split(","), number


def test_kernel_solver_gives_up_at_its_deadline(kernel_on: None) -> None:
    """A kernel solve whose deadline has passed stops (None; KernelSolver raises) instead of running on."""
    own, opp = with_empties(1, 18, 18, seed=2)[0]
    assert _othellokernel.solve(own, opp, -LIMIT, LIMIT, passed_deadline(), True, False) is None
    with pytest.raises(othello_ai._OutOfTime):
        KernelSolver(passed_deadline()).best_move(own, opp)


class _Recorder:
    """The kernel with a log of the functions called on it."""

    def __init__(self) -> None:
        """Nothing called yet."""
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        """The kernel's attribute; its functions log their name when called."""
        value = getattr(_othellokernel, name)
        if not callable(value):
            return value

        def logged(*args: Any) -> Any:
            self.calls.append(name)
            return value(*args)

        return logged


def test_only_level_five_on_8x8_uses_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Level 5 on 8x8 searches and solves with the kernel; levels 1-4 and the 6x6 and 10x10 boards keep their
    Python code."""
    recorder = _Recorder()
    monkeypatch.setattr(othello_ai, "KERNEL", recorder)
    for level, size in ((1, 8), (4, 8), (5, 6), (5, 10)):
        state = random_state(level, 12, size)
        choose_level(state, state.turn, level, 50, random.Random(0))
    assert recorder.calls == []
    state = random_state(9, 12)
    choose_level(state, state.turn, 5, 50, random.Random(0))
    assert recorder.calls == ["search"]
    own, opp = with_empties(1, 15, 15, seed=3)[0]
    state = OthelloState(8, own, opp, 0, False, None, 0, 45)
    _move, info = choose_level(state, 0, 5, 1000, random.Random(0))
    assert recorder.calls[1:] == ["solve", "solve"]
    assert abs(info["score"]) >= othello_ai.GAME_OVER_BASE or info["score"] == 0


def test_level_five_solves_earlier_with_the_kernel() -> None:
    """With the kernel level 5 solves exactly from more empty squares than the pure code (its threshold grows
    with the budget the same way)."""
    assert endgame_threshold(5, 1000, compiled=True) == othello_ai.ENDGAME_EMPTIES_KERNEL[5]
    assert endgame_threshold(5, 1000, compiled=True) > endgame_threshold(5, 1000)
    assert endgame_threshold(5, 250, compiled=True) < endgame_threshold(5, 1000, compiled=True)
    assert endgame_threshold(4, 1000, compiled=True) == 0


def test_the_kernel_refuses_bad_arguments_with_a_clear_error() -> None:
    """Wrong arguments to the kernel raise TypeError or ValueError (never a crash of the process)."""
    own, opp = GAME.initial_state({}).sides()
    with pytest.raises(ValueError, match="mask of the 64 squares"):
        _othellokernel.legal_moves(-1, opp)
    with pytest.raises(ValueError, match="mask of the 64 squares"):
        _othellokernel.legal_moves(1 << 64, opp)
    with pytest.raises(ValueError, match="overlap"):
        _othellokernel.evaluate(own, own)
    with pytest.raises(ValueError, match=r"sq must be in 0\.\.63"):
        _othellokernel.flips(own, opp, 64)
    with pytest.raises(TypeError):
        _othellokernel.perft("board", opp, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _othellokernel.search(own, opp, 3)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="game is over"):
        _othellokernel.search(0, opp, 3, -1.0)
    with pytest.raises(ValueError, match="alpha must be below beta"):
        _othellokernel.solve(own, opp, 1, 1, -1.0, True, False)
