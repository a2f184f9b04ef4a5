"""How long a game review takes: a 60-move Othello game, every position assessed at the review budget.

    python bench/review_bench.py [--budget-ms 800] [--seed 36]

Plays a 60-move 8x8 Othello game (level 3 against level 3 with 50 ms a move, from the seed; a shorter game is
replayed with the next seed), then assesses its 61 positions one after the other with `assess` at the budget,
as one AI worker does for the server (server/review_runner.py), and prints the total time, the slowest position,
how many positions were exact, and the labels the report gives. The target is at most 60 s on the 2-core machine.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gamenight.server.ai.analysis import assess_plain  # noqa: E402
from gamenight.server.ai.play import choose_move  # noqa: E402
from gamenight.server.games import REGISTRY  # noqa: E402
from gamenight.server.review_report import DEFAULT_BUDGET_MS, analyse  # noqa: E402

MOVES = 60


def sixty_move_game(seed: int) -> list[str]:
    """A 60-move Othello game between two level-3 AIs (50 ms a move), the first seed from `seed` that gives one."""
    rules = REGISTRY["othello"].rules
    while True:
        rng = random.Random(seed)
        state, moves = rules.initial_state(rules.validate_options({})), []
        while rules.outcome(state) is None:
            (seat,) = rules.to_move(state)
            text, _ = choose_move("othello", state, seat, level=3, budget_ms=50, seed=rng.randrange(2**32))
            moves.append(text)
            state = rules.apply(state, {seat: rules.parse_move(state, text)})
        if len(moves) == MOVES:
            return moves
        seed += 1


def main() -> None:
    """Review one game and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget-ms", type=int, default=DEFAULT_BUDGET_MS)
    parser.add_argument("--seed", type=int, default=36)
    args = parser.parse_args()
    moves = sixty_move_game(args.seed)
    times, values = [], []
    for ply in range(len(moves) + 1):
        start = time.perf_counter()
        values.append(assess_plain("othello", {}, moves, ply, args.budget_ms))
        times.append(time.perf_counter() - start)
    analysis = analyse("othello", {}, moves, values, args.budget_ms)
    labels = [move["label"] for move in analysis["moves"] if move["label"]]
    exact = sum(value["exact"] for value in values)
    print(f"othello, {len(moves)} moves, {len(values)} positions at {args.budget_ms} ms")
    print(f"total {sum(times):.1f} s, slowest position {max(times) * 1000:.0f} ms, exact {exact} of {len(values)}")
    print(f"labels: {', '.join(f'{labels.count(name)} {name}' for name in ('blunder', 'mistake', 'inaccuracy'))}")
    print("summary:", analysis["summary"])


if __name__ == "__main__":
    main()
