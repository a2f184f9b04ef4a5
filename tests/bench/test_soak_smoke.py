"""The soak bench (bench/soak.py) runs end to end against a real server: pairs finish games in new rooms, and the
server's memory is read at the early mark, at the end and after everyone left."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOAK = ROOT / "bench" / "soak.py"

pytestmark = pytest.mark.slow


def test_pairs_finish_games_and_the_memory_per_game_is_reported():
    """Two pairs playing fast for 30 s finish games after the early mark (each in a new room), and the report
    gives the RSS at each mark and per finished game, with the server alive to the end."""
    flags = ["--pairs", "2", "--minutes", "0.5", "--early", "0.1", "--move-ms", "20", "--after", "1", "--json"]
    done = subprocess.run(
        [sys.executable, str(SOAK), *flags],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout[done.stdout.index("{") :])
    assert report["server_alive"] and report["pairs_stopped"] == [], report
    assert report["games_measured"] > 0 and report["games_total"] >= report["games_measured"], report
    assert report["rss_early_mib"] > 0 and report["rss_after_leaving_mib"] > 0
    growth_mib = report["rss_end_mib"] - report["rss_early_mib"]  # each rounded to 0.01 MiB in the report
    assert abs(report["kib_per_game"] * report["games_measured"] / 1024 - growth_mib) < 0.011
