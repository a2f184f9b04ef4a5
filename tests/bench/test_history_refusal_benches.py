"""The session-7 benches (bench/history_cost.py, bench/refusals.py) run end to end against a real server."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _run(script: str, *args: str) -> str:
    """Run one bench script to its end (a generous cap guards a hang only); its output."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_history_cost_answers_every_request_and_prints_both_processes_cpu():
    """bench/history_cost.py gets every history answer and reports the server's and its helpers' CPU per request."""
    out = _run("history_cost.py", "--requests", "32", "--games", "300")
    shape = r"32 requests in [\d.]+ s: server process \d+ us/request, helper processes \d+ us/request\n"
    assert re.fullmatch(shape, out)


def test_refusals_are_all_http_429_answers():
    """Every connection attempt from an address at its cap gets an HTTP 429 (refused on accepting, not reset)."""
    out = _run("refusals.py", "--attempts", "30", "--rounds", "1")
    assert re.fullmatch(r"round 1: 30 refused \(429\), 0 other, in [\d.]+ s; server CPU \d+ us per attempt\n", out)
