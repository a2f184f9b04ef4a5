"""The bot tick benchmark (bench/bot_ticks.py) runs end to end: a real server, two bot runners, one game."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bot_ticks_prints_its_figures() -> None:
    """`python -m bench.bot_ticks` plays a game between two seated contest bots and prints how many questions were
    asked, answered in time and late, which add up."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.bot_ticks", "--games", "1", "--tick-ms", "100", "--size", "10"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    figures = re.search(r"1 games, (\d+) ticks, (\d+) questions, (\d+) answered in time, (\d+) late", done.stdout)
    assert figures is not None, done.stdout
    ticks, asked, answered, late = map(int, figures.groups())
    assert ticks >= 1 and asked == answered + late and asked >= ticks
