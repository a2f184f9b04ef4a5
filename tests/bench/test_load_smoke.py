"""The load generator (bench/load.py) works end to end: tiny runs against a real server, and its checker."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from gamenight.protocol.messages import State

ROOT = Path(__file__).resolve().parents[2]
LOAD = ROOT / "bench" / "load.py"


def _load_module() -> ModuleType:
    """bench/load.py as a module (bench/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("bench_load", LOAD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


load = _load_module()


def _run(*args: str) -> dict:
    """Run bench/load.py with --json and return its report; a failing exit status fails the test."""
    done = subprocess.run(
        [sys.executable, str(LOAD), "--json", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _state(moves: list[str], board: str = "x") -> State:
    """A finished Othello state with these moves (the checker reads only moves, view and status)."""
    return State(
        room="ABCDE", seq=len(moves) + 1, game="othello", status="finished", view={"board": [board]}, moves=moves
    )


def _pair(moves: list[tuple[int, str]]) -> list:
    """The two players' logs of one consistent game whose applied moves are `moves` (seat, move)."""
    names = [move for _, move in moves]
    return [
        load.GameLog(
            seat, sent=[m for s, m in moves if s == seat], events=list(moves), moves=list(names), final=_state(names)
        )
        for seat in (0, 1)
    ]


def test_smoke_run_plays_consistent_games_and_rematches():
    """Four players in two rooms play for two seconds: moves are timed, games end and are rematched, all consistent.

    Pentago, because its random games are short enough to finish (and be rematched) within the run.
    """
    report = _run("--connections", "4", "--game", "pentago", "--seconds", "2", "--warmup", "0.5")
    (run,) = report["runs"]
    game = run["game"]
    assert game["connections"] == 4 and game["lost"] == 0
    assert game["moves_per_s"] > 0 and game["rtt_ms"]["n"] > 0
    assert game["consistency"]["finished"] >= 1 and game["consistency"]["games"] > 2
    assert game["consistency"]["problems"] == 0
    assert game["errors"] == {}
    assert game["server"]["rss_kib"] > 0 and game["server"]["loop_lag_ms"]["n"] > 0


@pytest.mark.slow
def test_tron_and_echo_baseline_runs_report_their_figures():
    """A Tron room reports ticks and tick lateness; --baseline and --raw-baseline run the fan-out and the raw echo
    servers too and print the ratios; the game reports frames and bytes per move."""
    tron = _run(
        "--connections", "0", "--tron-rooms", "1", "--countdown-ms", "100", "--seconds", "2", "--warmup", "0.3"
    )["runs"][0]["game"]
    assert tron["tron"]["ticks_per_s"] > 0 and tron["server"]["tick_late_ms"]["n"] > 0
    assert tron["consistency"]["games"] >= 1 and tron["consistency"]["problems"] == 0
    (run,) = _run("--connections", "4", "--seconds", "2", "--warmup", "0.5", "--baseline", "--raw-baseline")["runs"]
    assert run["echo"]["moves_per_s"] > 0 and run["ratio"] > 0
    assert run["raw"]["moves_per_s"] > 0 and run["raw_ratio"] > 0, "the raw echo answers every move"
    assert run["game"]["per_move"]["frames_per_member"] > 0 and run["game"]["per_move"]["moved_bytes_non_mover"] > 0


def test_checker_accepts_a_consistent_game():
    """Two players who sent, saw and ended on the same moves are reported consistent."""
    assert load.check_turn_game(_pair([(0, "d3"), (1, "c5"), (0, "f6")])) == []


def test_checker_reports_a_lost_move():
    """A move a player sent that never came back applied is reported."""
    logs = _pair([(0, "d3"), (1, "c5")])
    logs[0].sent.append("e6")
    assert any("sent 2 moves" in problem for problem in load.check_turn_game(logs))


def test_checker_reports_a_duplicated_move_and_diverging_boards():
    """A move applied twice for one player, or boards that differ at the end, are reported."""
    logs = _pair([(0, "d3"), (1, "c5")])
    logs[1].events.append((1, "c5"))
    logs[1].final = _state(["d3", "c5"], board="y")
    problems = load.check_turn_game(logs)
    assert any("moves seen" in problem for problem in problems)
    assert any("boards differ" in problem for problem in problems)


def test_checker_reports_a_missed_tron_tick():
    """A rider that skipped a tick frame is reported; a rider one tick ahead at the stop is not."""
    a, b = load.GameLog(0, ticks=[2, 3, 4, 5]), load.GameLog(1, ticks=[2, 3, 5])
    assert load.check_live_game([a, b], finished=False)
    assert load.check_live_game([a, load.GameLog(1, ticks=[2, 3, 4])], finished=False) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["--connections", "5000"],
        ["--rate", "25"],
        ["--url", "ws://example.com:8765"],
        ["--seconds", "0"],
    ],
)
def test_bounds_are_enforced(argv, capsys):
    """The generator refuses loads beyond its bounds: too many connections, a rate over the server's, a remote URL."""
    with pytest.raises(SystemExit):
        load.parse_args(argv)
    assert "error" in capsys.readouterr().err
