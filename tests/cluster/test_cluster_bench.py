"""The cluster benchmarks work end to end on tiny runs: bench/load.py --cluster and bench/cluster.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster.redisproc import RedisProcess

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_load_against_two_nodes_plays_consistent_games(redis_server: RedisProcess) -> None:
    """bench/load.py --cluster 2: players split over two nodes play Pentago; every game checks out, none lost."""
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "load.py"),
            "--json",
            "--cluster",
            "2",
            "--connections",
            "4",
            "--game",
            "pentago",
            "--seconds",
            "2",
            "--warmup",
            "0.5",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    game = json.loads(done.stdout.strip().splitlines()[-1])["runs"][0]["game"]
    assert game["lost"] == 0 and game["moves_per_s"] > 0
    assert game["consistency"]["games"] >= 2 and game["consistency"]["problems"] == 0 and game["errors"] == {}


@pytest.mark.slow
def test_failover_bench_measures_a_kill(redis_server: RedisProcess) -> None:
    """bench/cluster.py --failover --kills 1: a node is killed and the next move is timed on its successor."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cluster.py"), "--failover", "--kills", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "failover over 1 kills: p50" in done.stdout


TINY_RUN = ("--nodes", "2", "--pairs", "2", "--seconds", "1")


@pytest.mark.slow
def test_profile_bench_reports_each_nodes_time(redis_server: RedisProcess, tmp_path: Path) -> None:
    """bench/cluster.py --profile: a two-node run under cProfile prints, for each node, where its time went."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cluster.py"), "--profile", str(tmp_path), *TINY_RUN],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "cluster 2 under cProfile" in done.stdout
    for node in ("n1", "n2"):
        assert (tmp_path / f"{node}.prof").stat().st_size > 0
        assert f"  {node} (" in done.stdout
    assert done.stdout.count("of which the store's write") == 2
