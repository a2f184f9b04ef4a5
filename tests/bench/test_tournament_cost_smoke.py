"""The tournament cost bench (bench/tournament_cost.py) runs end to end and shows what issue 37 asked: a game end's
stored and pushed bytes stay flat as the tournament grows, where the whole state's grow with it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LINE = re.compile(
    r"(\d+) games: per game end stored (\d+) B, pushed (\d+) B \(old: stored (\d+) B, pushed (\d+) B\),"
    r" CPU (\d+) us; medians of 5"
)


def test_the_bench_prints_flat_costs_per_game_end_beside_the_old_growing_ones():
    """At 20 and 200 games a game end stores and pushes about the same bytes (the change), while the whole state
    the old code stored and pushed grows with the games played; the script prints one line per size."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "tournament_cost.py"), "--sizes", "20,200", "--window", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    small, large = [[int(n) for n in LINE.fullmatch(line).groups()] for line in done.stdout.splitlines()]
    assert (small[0], large[0]) == (20, 200)
    assert large[1] < 1.2 * small[1] and large[2] < 1.2 * small[2]  # stored and pushed: flat
    assert large[3] > 5 * small[3] and large[4] > 5 * small[4]  # the whole state: grows with the games
    assert large[3] > 20 * large[1] and large[4] > 20 * large[2]
