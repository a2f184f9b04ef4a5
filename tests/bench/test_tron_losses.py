"""How `bench.tron_bench losses` reads a Tron match log: the games replayed as played, each non-win classified."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.match import play_game
from bench.tron_bench import losses, replay


def test_a_logged_game_replays_to_the_end_it_was_played_to() -> None:
    """A match log's moves replay the game to the same tick and the same winner as the match played it."""
    _, score, plies, _label, transcript = play_game("tron", "1", "chaser", 1, 20, 3, maps=("keyhole",))
    states = replay("keyhole", transcript)
    assert states[-1].tick == plies == len(states) - 1
    assert states[-1].result is not None
    winners = states[-1].result.winners
    assert score == (0.5 if len(winners) != 1 else float(winners == (1,)))


def test_every_game_a_did_not_win_is_classified_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`losses` prints one line per game A did not win, and the counts of its kinds add up to those games."""
    lines = []
    not_won = 0
    for index in range(4):
        _, score, plies, label, transcript = play_game("tron", "1", "floodfill", index, 20, 1, maps=("u", "oval"))
        seat = index % 2
        lines.append(f"game {index:3d} ({label}, 1 seat {seat}): 1 scores {score} in {plies} plies")
        lines.append(f"  game {index} moves after the opening: {transcript}")
        not_won += score < 1
    assert not_won, "level 1 should not win every game against floodfill"
    log = tmp_path / "match.log"
    log.write_text("\n".join(lines) + "\n")
    losses(str(log), search_ms=50)
    out = capsys.readouterr().out.splitlines()
    assert len([line for line in out if line.startswith("  game ")]) == not_won
    counts = out[-1].split(", ")
    assert sum(int(part.rsplit(": ", 1)[1]) for part in counts) == not_won
