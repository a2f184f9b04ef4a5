"""Search speed: nodes per second and depth reached on fixed positions, plus each game's own extra figures.

Usage (from the repository root):
    python -m bench.search                      # every game in GAMES, 1000 ms per position
    python -m bench.search --game othello --ms 1000 --endgame-positions 20

Each game is one `Bench` entry in `GAMES`: a function giving (label, engine, position) triples that the core
`search` runs on for --ms each, and optional extra benchmarks (Othello: the exact endgame solver's time on the
reference positions of tests/data/othello_endgames_bench.txt, which fixes the level-5 solver threshold).
Figures are printed, never asserted; they depend on the machine.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gamenight.server.ai import connect4_ai, pentago_ai, tron_ai
from gamenight.server.ai.search import Limits, search

ROOT = Path(__file__).resolve().parent.parent
ENDGAME_DATA = ROOT / "tests" / "data" / "othello_endgames_bench.txt"


@dataclass(frozen=True)
class Bench:
    """One game's benchmark: positions for the core search, and extra benchmarks taking the parsed options."""

    positions: Callable[[], list[tuple[str, Any, Any]]]
    extras: tuple[Callable[[argparse.Namespace], None], ...] = field(default=())


# -- Othello ----------------------------------------------------------------------------------------------------


def _othello_state_after(plies: int, seed: int) -> Any:
    """The Othello state after `plies` random moves from the start (a fixed game per seed)."""
    from gamenight.server.games.othello import Othello

    game = Othello()
    rng = random.Random(seed)
    state = game.initial_state({})
    for _ in range(plies):
        state = game.apply(state, {state.turn: rng.choice(game.legal_moves(state, state.turn))})
    return state


def othello_positions() -> list[tuple[str, Any, Any]]:
    """The opening, a midgame and a late midgame (fixed random games), as engine positions."""
    from gamenight.server.ai.othello_ai import engine_for

    engine = engine_for(8)
    found = []
    for label, plies in (("opening (ply 0)", 0), ("midgame (ply 20)", 20), ("late midgame (ply 40)", 40)):
        state = _othello_state_after(plies, seed=2024)
        found.append((label, engine, engine.position(*state.sides())))
    return found


def read_endgames(path: Path) -> dict[int, list[tuple[int, int, int]]]:
    """(own, opp, exact score) per empties count from a reference endgame file."""
    by_empties: dict[int, list[tuple[int, int, int]]] = {}
    for line in path.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        _source, board, side, _move, raw, _ffo, empties = line.split()
        black = sum(1 << i for i, c in enumerate(board) if c == "X")
        white = sum(1 << i for i, c in enumerate(board) if c == "O")
        own, opp = (black, white) if side == "X" else (white, black)
        by_empties.setdefault(int(empties), []).append((own, opp, int(raw)))
    return by_empties


def _time_solver(own: int, opp: int, window: tuple[int, int]) -> tuple[float, int, int]:
    """(seconds, nodes, value) of a fresh solver's best move within `window`."""
    from gamenight.server.ai.othello_ai import EndgameSolver

    solver = EndgameSolver(8)
    started = time.perf_counter()
    _, value = solver.best_move(own, opp, *window)
    return time.perf_counter() - started, solver.nodes, value


def othello_endgame(args: argparse.Namespace) -> None:
    """Time the solver's move choice per empties count (exact, and win/draw/loss only); suggest thresholds."""
    from gamenight.server.ai.othello_ai import ENDGAME_TIME_SHARE, LIMIT

    count = args.endgame_positions
    print(f"\nOthello endgame solver, best move from {count} reference positions per empties count:")
    print(f"{'empties':>8} {'exact median s':>15} {'max s':>7} {'nodes/s':>8} {'WLD median s':>13} {'max s':>7}")
    budget_s = args.ms * ENDGAME_TIME_SHARE / 1000
    fits = {"exact": 0, "WLD": 0}
    stopped: set[str] = set()
    for empties, rows in sorted(read_endgames(ENDGAME_DATA).items()):
        exact, wld = [], []
        for own, opp, score in rows[:count]:
            exact.append(_time_solver(own, opp, (-LIMIT, LIMIT)))
            wld.append(_time_solver(own, opp, (-1, 1)))
            if exact[-1][2] != score or (wld[-1][2] > 0) != (score > 0):
                print(f"  WRONG: solver says {exact[-1][2]} (WLD {wld[-1][2]}), reference {score}")
        exact_times = [t for t, _, _ in exact]
        wld_times = [t for t, _, _ in wld]
        rate = sum(n for _, n, _ in exact) / sum(exact_times)
        print(
            f"{empties:>8} {statistics.median(exact_times):>15.3f} {max(exact_times):>7.3f} {rate:>8.0f}"
            f" {statistics.median(wld_times):>13.3f} {max(wld_times):>7.3f}"
        )
        for name, times in (("exact", exact_times), ("WLD", wld_times)):
            # Counts come in increasing order; the first that does not fit ends the run of those that do.
            if name not in stopped:
                if max(times) <= budget_s:
                    fits[name] = empties
                else:
                    stopped.add(name)
    share = f"{ENDGAME_TIME_SHARE:.0%} of {args.ms} ms"
    for name, empties in fits.items():
        print(f"largest empties count whose slowest {name} solve fits {share}: {empties or 'none'}")


# -- the table --------------------------------------------------------------------------------------------------

GAMES: dict[str, Bench] = {
    "connect4": Bench(connect4_ai.bench_positions),
    "othello": Bench(othello_positions, (othello_endgame,)),
    "pentago": Bench(pentago_ai.bench_positions),
    "tron": Bench(tron_ai.bench_positions),
}
"""Every benchmarked game; another game adds one entry (its positions and any extra benchmarks)."""


def bench_search(game: str, bench: Bench, ms: int) -> None:
    """Run the core search for `ms` on each of the game's positions and print depth and speed."""
    print(f"\n{game}: core search, {ms} ms per position")
    print(f"{'position':<28} {'depth':>5} {'nodes':>8} {'nodes/s':>8} {'ms':>6}")
    for label, engine, pos in bench.positions():
        started = time.perf_counter()
        _, info = search(engine, pos, Limits(time_ms=ms))
        seconds = time.perf_counter() - started
        print(f"{label:<28} {info.depth:>5} {info.nodes:>8} {info.nodes / seconds:>8.0f} {seconds * 1000:>6.0f}")


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the chosen games' benchmarks."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(GAMES), help="one game (default: all)")
    parser.add_argument("--ms", type=int, default=1000, help="search time per position, and the move budget")
    parser.add_argument("--endgame-positions", type=int, default=20, help="Othello solver positions per count")
    parser.add_argument("--no-extras", action="store_true", help="only the core search figures")
    args = parser.parse_args(argv)
    for game in [args.game] if args.game else sorted(GAMES):
        bench = GAMES[game]
        bench_search(game, bench, args.ms)
        if not args.no_extras:
            for extra in bench.extras:
                extra(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
