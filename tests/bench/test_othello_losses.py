"""How `bench.othello_losses` reads an Othello match log: the games replayed as played, each loss placed."""

from __future__ import annotations

import re

from bench.match import play_game
from bench.othello_losses import Lost, final_margin, read_log, replay, where_lost


def logged(index: int, a: str, b: str, seed: int) -> tuple[Lost, list[str]]:
    """Play game `index` of a match as `bench.match` does; the game and the two lines its log gets."""
    _, score, plies, label, transcript = play_game("othello", a, b, index, 20, seed)
    lines = [f"game {index:3d} ({label}, {a} seat {index % 2}): {a} scores {score} in {plies} plies; per move"]
    lines.append(f"  game {index} moves after the opening: {transcript}")
    return Lost(index, label, index % 2, score, transcript), lines


def test_a_logged_game_replays_to_the_end_it_was_played_to() -> None:
    """A match log's moves, after the opening rebuilt from the seed, replay the game to its end with the result
    the match scored."""
    for index in (0, 1):
        game, _ = logged(index, "1", "5", seed=3)
        states = replay(game, seed=3)
        assert states[-1].over and len(states) - 1 == len(game.moves) // 2
        margin = final_margin(states[-1], game.a_seat)
        assert game.score == (1.0 if margin > 0 else 0.5 if margin == 0 else 0.0)


def test_only_games_a_did_not_win_are_read_and_each_loss_is_placed() -> None:
    """`read_log` keeps the games A did not win (not its wins); each gets one line with its final margin and
    either the move that lost it within the solver's horizon or the value it was already lost by there."""
    lines, not_won = [], 0
    for index in range(4):
        game, printed = logged(index, "1", "5", seed=5)
        lines += printed
        not_won += game.score < 1
    assert not_won, "level 1 should not win every game against level 5"
    lost = read_log("\n".join(lines))
    assert len(lost) == not_won
    for game in lost:
        line = where_lost(game, seed=5, exact=12, depth=4)
        final = int(re.search(r"final ([+-]\d+) discs", line).group(1))  # type: ignore[union-attr]
        assert final == final_margin(replay(game, seed=5)[-1], game.a_seat) < 1
        assert "already lost at" in line or re.search(r"\d+ empties: A played [a-h][1-8]", line)
