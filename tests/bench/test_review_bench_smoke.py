"""The review benchmark under load (bench/review_bench.py --quick) runs end to end: a real server holding a 60-move
Othello game, paced games over real websockets, a live AI game, and the game's review asked for in the middle."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_quick_run_times_moves_and_ai_turns_with_and_without_a_review():
    """The smoke run's review arrives within its window; the paced games' round trips and the live AI's turns are
    measured both before and while it runs, every game consistent and no connection lost."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "review_bench.py"), "--quick", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (run,) = json.loads(done.stdout.strip().splitlines()[-1])["runs"]
    assert run["review_s"] is not None and run["review_s"] > 0
    assert run["quiet"]["n"] > 0 and run["reviewing"]["n"] > 0 and run["p99_ratio"] > 0
    assert run["ai_quiet"]["n"] > 0 and run["ai_reviewing"]["n"] > 0
    assert run["problems"] == 0 and run["lost"] == 0
