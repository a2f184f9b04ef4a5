"""Othello's compiled kernel (issue 38): perft, the FFO endgame problems, search speed against the pure Python code,
and the empties count level 5's solver can take within its budget.

Usage (from the repository root):
    python -m bench.othello_bench perft [--depth 10]
    python -m bench.othello_bench ffo [--set 1-19|20-39]
    python -m bench.othello_bench speed [--depth 7] [--endgame-positions 10]
    python -m bench.othello_bench threshold [--ms 1000] [--games 40] [--counts 16,17,18,19,20]

`perft` counts the leaves from the start with the kernel (`_othellokernel.perft`) at every depth up to --depth and
checks them against Bik's table (tests/data/othello_perft.txt). `ffo` solves FFO problems #1-#19
(tests/data/othello_ffo_1_19.txt) or #20-#39 (tests/data/othello_ffo_20_39.txt) exactly with the kernel, scoring
empty squares for the winner as FFO does, checks the value and that the move is one of the best, and prints each
time with the median and the maximum. `speed` searches fixed positions (random games from the start, plies 0-40)
to --depth with the kernel and with the pure-Python core (the same tree, hand weights: it checks nodes and score
agree) and prints nodes per CPU second of each, and the kernel's with its fitted patterns when they are loaded,
then the exact solver's on the 14-empties reference positions. `threshold` plays --games level-5-like kernel games
(random first 6 plies, then depth-4 searches) and times level 5's solve at each
count of --counts as `_solve_in_time` runs it (win / draw / loss, then exact); the largest count whose slowest
solve fits 70% of --ms is what `ENDGAME_EMPTIES_KERNEL` holds. Figures are printed, never asserted (but a wrong
count or value is reported); they depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from bench.search import read_endgames
from gamenight.server.ai import _othellokernel as kernel
from gamenight.server.ai import othello_ai
from gamenight.server.ai.othello_ai import ENDGAME_TIME_SHARE, LIMIT, EndgameSolver, KernelSolver, engine_for
from gamenight.server.ai.search import Limits, search
from gamenight.server.games.othello import FULL_MASK, Othello, OthelloState, square_name

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
GAME = Othello()
T = TypeVar("T")


def data_lines(name: str) -> list[str]:
    """The data lines of a file in tests/data (comments and blank lines left out)."""
    return [line for line in (DATA / name).read_text().splitlines() if line.strip() and not line.startswith("#")]


def sides(board: str, side: str) -> tuple[int, int]:
    """(mover's discs, other side's) of a 64-character board ('X' black, 'O' white) with `side` ('X'/'O') to move."""
    black = sum(1 << i for i, c in enumerate(board) if c == "X")
    white = sum(1 << i for i, c in enumerate(board) if c == "O")
    return (black, white) if side == "X" else (white, black)


# -- perft ------------------------------------------------------------------------------------------------------


def bench_perft(depth: int) -> int:
    """Kernel perft from the start at depths 1..`depth` against Bik's table; 1 if a count is wrong."""
    table = {int(line.split()[0]): int(line.split()[1]) for line in data_lines("othello_perft.txt")}
    own, opp = GAME.initial_state({}).sides()
    wrong = 0
    print(f"{'depth':>5} {'leaves':>16} {'Bik':>16} {'s':>8} {'leaves/s':>12}")
    for d in range(1, depth + 1):
        started = time.perf_counter()
        leaves = kernel.perft(own, opp, d)
        seconds = time.perf_counter() - started
        expected = table.get(d)
        wrong += expected is not None and leaves != expected
        print(f"{d:>5} {leaves:>16} {expected or '-':>16} {seconds:>8.3f} {leaves / max(seconds, 1e-9):>12.0f}")
    return 1 if wrong else 0


# -- FFO --------------------------------------------------------------------------------------------------------


def ffo_problems(which: str) -> list[tuple[int, int, int, int, set[str]]]:
    """(number, own, opp, exact score, best moves) of FFO problems `which` ("1-19" or "20-39")."""
    problems = []
    if which == "1-19":
        for line in data_lines("othello_ffo_1_19.txt"):
            number, board, side, best, score, *_ = line.split()
            problems.append((int(number), *sides(board, side), int(score), set(best.lower().split(","))))
        return problems
    for number, line in enumerate(data_lines("othello_ffo_20_39.txt"), start=20):
        position, *moves = (part.strip() for part in line.split(";") if part.strip())
        board, side = position.split()
        scored = [(move.split(":")[0].lower(), int(move.split(":")[1])) for move in moves]
        top = max(score for _, score in scored)
        problems.append((number, *sides(board, side), top, {move for move, score in scored if score == top}))
    return problems


def bench_ffo(which: str) -> int:
    """Solve the FFO problems exactly with the kernel (FFO scoring); print each time; 1 if a value is wrong."""
    print(f"FFO #{which}, exact solve by the kernel (empty squares to the winner):")
    print(f"{'#':>3} {'empties':>7} {'value':>6} {'FFO':>5} {'move':>5} {'best?':>5}", end="")
    print(f" {'nodes':>11} {'s':>8} {'nodes/s':>10}")
    times, wrong = [], 0
    for number, own, opp, score, best in ffo_problems(which):
        started = time.perf_counter()
        found = kernel.solve(own, opp, -LIMIT, LIMIT, -1.0, True, True)
        seconds = time.perf_counter() - started
        assert found is not None  # no deadline
        move, value, nodes = found
        name = "pass" if move is None else square_name(move, 8)
        ok = value == score and name in best
        wrong += not ok
        times.append(seconds)
        empties = (FULL_MASK[8] ^ (own | opp)).bit_count()
        print(
            f"{number:>3} {empties:>7} {value:>+6} {score:>+5} {name:>5} {'yes' if name in best else 'NO':>5}"
            f" {nodes:>11} {seconds:>8.3f} {nodes / max(seconds, 1e-9):>10.0f}"
        )
    print(f"median {statistics.median(times):.3f} s, max {max(times):.3f} s, total {sum(times):.2f} s")
    if wrong:
        print(f"WRONG: {wrong} problems")
    return 1 if wrong else 0


# -- speed ------------------------------------------------------------------------------------------------------


def random_state(plies: int, seed: int) -> OthelloState:
    """The state after `plies` random moves from the start (fewer if the game ends)."""
    rng = random.Random(seed)
    state = GAME.initial_state({})
    for _ in range(plies):
        if state.over:
            break
        state = GAME.apply(state, {state.turn: rng.choice(GAME.legal_moves(state, state.turn))})
    return state


def cpu_timed(function: Callable[..., T], *args: Any) -> tuple[T, float]:
    """The result of `function(*args)` and the CPU seconds it took."""
    started = time.process_time()
    result = function(*args)
    return result, time.process_time() - started


def bench_speed(depth: int, endgame_positions: int) -> int:
    """Nodes per CPU second of the kernel and the pure core on the same trees, midgame then endgame."""
    engine = engine_for(8)
    print(f"midgame: level 5's search to depth {depth}, kernel vs pure Python (same tree)")
    print(
        f"{'position':<10} {'nodes':>9} {'kernel s':>9} {'kernel n/s':>11} {'python s':>9} {'python n/s':>11} {'x':>6}"
    )
    totals = [0, 0.0, 0.0]
    wrong = 0
    patterns = kernel.use_patterns(False)  # the pure core has the hand weights only
    pattern_nodes, pattern_time = 0, 0.0
    for plies in (0, 10, 20, 30, 40):
        own, opp = random_state(plies, seed=2024 + plies).sides()
        if patterns:
            kernel.use_patterns(True)
            other, seconds = cpu_timed(kernel.search, own, opp, depth, -1.0)
            pattern_nodes, pattern_time = pattern_nodes + other[3], pattern_time + seconds
            kernel.use_patterns(False)
        found, k_s = cpu_timed(kernel.search, own, opp, depth, -1.0)
        (_, info), p_s = cpu_timed(search, engine, engine.position(own, opp), Limits(depth=depth))
        nodes = found[3]
        if (nodes, found[1]) != (info.nodes, info.score):
            wrong += 1
            print(f"  DIFFERENT TREE: kernel {found}, python {info}")
        totals[0] += nodes
        totals[1] += k_s
        totals[2] += p_s
        print(
            f"ply {plies:<6} {nodes:>9} {k_s:>9.3f} {nodes / k_s:>11.0f} {p_s:>9.3f} {nodes / p_s:>11.0f}"
            f" {p_s / k_s:>6.1f}"
        )
    print(f"{'all':<10} {totals[0]:>9.0f} {totals[1]:>9.3f} {totals[0] / totals[1]:>11.0f} {totals[2]:>9.3f}"
          f" {totals[0] / totals[2]:>11.0f} {totals[2] / totals[1]:>6.1f}")  # fmt: skip
    if patterns:
        kernel.use_patterns(True)
        print(
            f"the kernel with its fitted patterns, same positions and depth (another tree): {pattern_nodes} nodes"
            f" in {pattern_time:.3f} s, {pattern_nodes / pattern_time:.0f} nodes/s"
        )
    rows = read_endgames(DATA / "othello_endgames_bench.txt")[14][:endgame_positions]
    print(f"\nendgame: exact solve of {len(rows)} reference positions with 14 empties, kernel vs pure Python")
    k_nodes = p_nodes = 0
    k_time = p_time = 0.0
    for own, opp, score in rows:
        ks = KernelSolver()
        (_, k_value), seconds = cpu_timed(ks.best_move, own, opp)
        k_nodes, k_time = k_nodes + ks.nodes, k_time + seconds
        ps = EndgameSolver(8)
        (_, p_value), seconds = cpu_timed(ps.best_move, own, opp)
        p_nodes, p_time = p_nodes + ps.nodes, p_time + seconds
        if k_value != score or p_value != score:
            wrong += 1
            print(f"  WRONG: kernel {k_value}, python {p_value}, reference {score}")
    print(f"kernel {k_nodes} nodes in {k_time:.3f} s ({k_nodes / k_time:.0f} n/s, {k_time / len(rows):.4f} s each)")
    print(f"python {p_nodes} nodes in {p_time:.3f} s ({p_nodes / p_time:.0f} n/s, {p_time / len(rows):.4f} s each)")
    print(f"kernel {p_time / k_time:.0f} times as fast per position")
    return 1 if wrong else 0


# -- the solver threshold ---------------------------------------------------------------------------------------


def self_play_positions(games: int, counts: list[int]) -> dict[int, list[tuple[int, int]]]:
    """(own, opp) at each empties count of `counts` from `games` kernel games (random first 6 plies, then depth 4)."""
    found: dict[int, list[tuple[int, int]]] = {count: [] for count in counts}
    for seed in range(games):
        rng = random.Random(seed)
        state = GAME.initial_state({})
        while not state.over:
            own, opp = state.sides()
            empties = (FULL_MASK[8] ^ (own | opp)).bit_count()
            if empties in found:
                found[empties].append((own, opp))
            if empties <= min(counts):
                break
            if state.ply < 6:
                move = rng.choice(GAME.legal_moves(state, state.turn))
            else:
                square = kernel.search(own, opp, 4, -1.0)[0]
                assert square is not None  # the side to move has a square
                move = square
            state = GAME.apply(state, {state.turn: move})
    return found


def bench_threshold(ms: int, games: int, counts: list[int]) -> int:
    """Time level 5's solve (win/draw/loss, then exact) per empties count; print the largest count that fits."""
    budget = ms * ENDGAME_TIME_SHARE / 1000
    print(f"level 5's kernel solve from {games} self-play games per empties count, budget {budget:.2f} s:")
    print(f"{'empties':>7} {'positions':>9} {'median s':>9} {'max s':>7} {'over':>5}")
    fits, stopped = 0, False
    for count, positions in sorted(self_play_positions(games, counts).items()):
        times = []
        for own, opp in positions:
            started = time.perf_counter()
            solver = KernelSolver()
            solver.best_move(own, opp, -1, 1)
            solver.best_move(own, opp)
            times.append(time.perf_counter() - started)
        over = sum(t > budget for t in times)
        print(f"{count:>7} {len(times):>9} {statistics.median(times):>9.3f} {max(times):>7.3f} {over:>5}")
        # Counts come in increasing order; the first that does not fit ends the run of those that do.
        if not stopped and max(times) <= budget:
            fits = count
        else:
            stopped = True
    print(f"largest count whose slowest solve fits {ENDGAME_TIME_SHARE:.0%} of {ms} ms: {fits or 'none'}")
    print(f"(othello_ai.ENDGAME_EMPTIES_KERNEL[5] = {othello_ai.ENDGAME_EMPTIES_KERNEL[5]})")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the figure it names."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("perft", "ffo", "speed", "threshold"))
    parser.add_argument("--depth", type=int, help="perft: deepest count (default 10); speed: search depth (7)")
    parser.add_argument("--set", default="1-19", choices=("1-19", "20-39"), help="ffo: which problems")
    parser.add_argument("--endgame-positions", type=int, default=10, help="speed: 14-empties positions to solve")
    parser.add_argument("--ms", type=int, default=1000, help="threshold: level 5's move budget")
    parser.add_argument("--games", type=int, default=40, help="threshold: self-play games")
    parser.add_argument("--counts", default="16,17,18,19,20", help="threshold: empties counts to time")
    args = parser.parse_args(argv)
    if othello_ai.KERNEL is None:
        print("the Othello kernel is not built or is switched off (GAMENIGHT_PURE_AI=1)", file=sys.stderr)
        return 2
    if args.what == "perft":
        return bench_perft(args.depth or 10)
    if args.what == "ffo":
        return bench_ffo(args.set)
    if args.what == "speed":
        return bench_speed(args.depth or 7, args.endgame_positions)
    return bench_threshold(args.ms, args.games, [int(n) for n in args.counts.split(",")])


if __name__ == "__main__":
    sys.exit(main())
