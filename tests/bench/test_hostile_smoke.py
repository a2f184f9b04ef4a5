"""The attack bench (bench/hostile.py) works end to end against a real server: the honest players' round trips
are measured before and during each attack, and the server survives them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.hostile import ATTACKS

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "bench" / "hostile.py"

pytestmark = pytest.mark.slow


def test_every_attack_runs_and_the_honest_games_are_measured():
    """Each attack of docs/security.md runs for a moment; the honest game and the game against the AI keep
    answering (round trips measured in both windows) and the server is alive after every attack."""
    done = subprocess.run(
        [sys.executable, str(HOSTILE), "--seconds", "2", "--before", "2", "--games", "200", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(done.stdout[done.stdout.index("[") :])
    assert [row["attack"] for row in rows] == list(ATTACKS)
    for row in rows:
        assert row["server_alive"], row["attack"]
        assert row["before"]["n"] > 0 and row["during"]["n"] > 0, row["attack"]
        assert row["ai_before"]["n"] > 0 or row["ai_during"]["n"] > 0, row["attack"]
