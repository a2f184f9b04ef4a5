"""`bench.tron_bench search`: the figures of level 5's compiled contact search come from searches that agree."""

from __future__ import annotations

import re

import pytest

from bench.tron_bench import search_speed
from gamenight.server.ai import tron_ai


def test_the_search_bench_times_three_searches_that_agree_and_reports_depths(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The bench searches every position with the kernel, the core and the pure code (it would stop on a differing
    score), prints each one's CPU time and nodes per second, then the depth reached within the budget."""
    search_speed(depth=2, repeat=1, ms=20)
    out = capsys.readouterr().out
    assert "the same score at every position" in out
    for name in ("kernel", "core", "pure"):
        assert re.search(rf"^  {name}: median \d+ ms of CPU a round .* \d+ nodes per CPU second$", out, re.M)
    for name in ("kernel", "core"):
        assert re.search(rf"^  {name} within 20 ms: depth median \d+ plies", out, re.M)
    assert tron_ai.KERNEL is not None and tron_ai.Level5Engine.compiled(tron_ai.Level5Engine(17))
