"""Move-generation speed: perft from a game's start, printing leaves, seconds and leaves per second.

    python bench/perft.py [--game othello] [--depth 7] [--size 8] [--repeat 3]

Times are the median of the repeats. Each game's count comes from its registration (`perft`, `perft_options` in
`gamenight.server.games.REGISTRY`); --size sets a board size option, or for Tron a seed-0 random arena's size.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from gamenight.server.games import REGISTRY


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(n for n, e in REGISTRY.items() if e.perft), default="othello")
    parser.add_argument("--depth", type=int, default=7, help="plies to search (default 7)")
    parser.add_argument("--size", type=int, help="board size option, for games that have one")
    parser.add_argument("--repeat", type=int, default=3, help="runs to take the median of (default 3)")
    return parser.parse_args(argv)


def start_options(game: str, size: int | None) -> dict[str, Any]:
    """The room options perft starts from: the registered ones, or a board (arena) of `size`."""
    if size is None:
        return dict(REGISTRY[game].perft_options)
    if game == "tron":
        return {"width": size, "height": size, "seed": 0}
    return {"size": size}


def timed(function: Callable[[], int]) -> tuple[int, float]:
    """The result of `function()` and the seconds it took."""
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    """Run the chosen perft `--repeat` times and print the median figures."""
    args = parse_args(argv)
    entry = REGISTRY[args.game]
    assert entry.perft is not None
    count = entry.perft
    options = start_options(args.game, args.size)
    try:
        state = entry.rules.initial_state(options)
        runs = [timed(lambda: count(state, args.depth)) for _ in range(max(1, args.repeat))]
    except ValueError as error:  # a game's BadOptions, e.g. a size it does not offer
        sys.exit(f"perft: {error}")
    leaves = runs[0][0]
    seconds = statistics.median(elapsed for _, elapsed in runs)
    board = "" if args.size is None else f" size {args.size}"
    print(f"{args.game}{board} depth {args.depth}: {leaves} leaves")
    print(f"{seconds:.3f} s (median of {len(runs)}), {leaves / seconds:,.0f} leaves/s")


if __name__ == "__main__":
    main()
