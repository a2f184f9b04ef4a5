"""`bench.tron_bench search`: the figures of level 5's compiled contact search come from searches that agree."""

from __future__ import annotations

import re

import pytest

from bench.tron_bench import scaling, search_speed
from gamenight.server.ai import tron_ai
from gamenight.server.ai.tron import kernel as tron_kernel


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
    assert tron_kernel.KERNEL is not None and tron_ai.Level5Engine.compiled(tron_ai.Level5Engine(17))


def test_the_scaling_bench_counts_nodes_by_depth_and_times_the_completed_depth(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The scaling bench prints the nodes to each depth (more for the deeper one, with its growth per tick), and for
    a budget the depth completed and the share of the deadline it took, timed again in a fresh process; it says by
    how many plies it reduced late moves."""
    scaling([2, 4], [30], tron_ai.LEVEL5_REDUCTION)
    out = capsys.readouterr().out
    assert f"late moves reduced by {tron_ai.LEVEL5_REDUCTION} plies" in out
    found = {int(d): int(n) for d, n in re.findall(r"^  to depth (\d+): (\d+) nodes", out, re.M)}
    assert set(found) == {2, 4} and 0 < found[2] < found[4]
    assert re.search(r"^  to depth 4: \d+ nodes, \d+\.\d\dx per tick$", out, re.M)
    line = re.search(
        r"^  within 30 ms: depth median (\d+) plies .* on the other (\d+) the completed depth took a median"
        r" (\d+)% of the deadline",
        out,
        re.M,
    )
    assert line is not None and int(line[1]) >= 2 and int(line[2]) > 0
    assert 0 < int(line[3]) < 200  # wall time, timed twice on a machine the other tests load: not a tight bound
