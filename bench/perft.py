"""Move-generation speed: perft from a game's start, printing leaves, seconds and leaves per second.

    python bench/perft.py [--game othello] [--depth 7] [--size 8] [--repeat 3]

Times are the median of the repeats. Each game adds one function and one line to `PERFT`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Run from a checkout without installing: the repository root holds the `server` package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def othello_perft(depth: int, options: dict[str, Any]) -> int:
    """Othello leaves from the start position, a forced pass counting as a ply (Aart Bik's convention)."""
    from gamenight.server.games.othello import Othello, perft

    return perft(Othello().initial_state(options), depth)


def pentago_perft(depth: int, options: dict[str, Any]) -> int:
    """Pentago leaves from the empty board, every rotation of every placement counting as its own move."""
    from gamenight.server.games.pentago import Pentago, perft

    return perft(Pentago().initial_state(options), depth)


def tron_perft(depth: int, options: dict[str, Any]) -> int:
    """Tron joint-move sequences from `joust`, or from the seed-0 random arena of --size (try --depth 6)."""
    from gamenight.server.games.tron import Tron, perft

    size = options.get("size")
    room = {"map": "joust"} if size is None else {"width": size, "height": size, "seed": 0}
    return perft(Tron().initial_state(room), depth)


def connect4_perft(depth: int, options: dict[str, Any]) -> int:
    """Connect Four distinct positions after `depth` plies (OEIS A212693: transpositions once, no play past a four)."""
    from gamenight.server.games.connect4 import positions_per_ply

    return positions_per_ply(depth)[-1]


# name -> function(depth, room options) -> number of leaves.
PERFT: dict[str, Callable[[int, dict[str, Any]], int]] = {
    "connect4": connect4_perft,
    "othello": othello_perft,
    "pentago": pentago_perft,
    "tron": tron_perft,
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(PERFT), default="othello")
    parser.add_argument("--depth", type=int, default=7, help="plies to search (default 7)")
    parser.add_argument("--size", type=int, help="board size option, for games that have one")
    parser.add_argument("--repeat", type=int, default=3, help="runs to take the median of (default 3)")
    return parser.parse_args(argv)


def timed(function: Callable[[], int]) -> tuple[int, float]:
    """The result of `function()` and the seconds it took."""
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    """Run the chosen perft `--repeat` times and print the median figures."""
    args = parse_args(argv)
    options = {} if args.size is None else {"size": args.size}
    perft = PERFT[args.game]
    try:
        runs = [timed(lambda: perft(args.depth, options)) for _ in range(max(1, args.repeat))]
    except ValueError as error:  # a game's BadOptions, e.g. a size it does not offer
        sys.exit(f"perft: {error}")
    leaves = runs[0][0]
    seconds = statistics.median(elapsed for _, elapsed in runs)
    board = "" if args.size is None else f" size {args.size}"
    print(f"{args.game}{board} depth {args.depth}: {leaves} leaves")
    print(f"{seconds:.3f} s (median of {len(runs)}), {leaves / seconds:,.0f} leaves/s")


if __name__ == "__main__":
    main()
