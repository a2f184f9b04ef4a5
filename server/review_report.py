"""Game review's report (issue 36): a game's positions, and the analysis put together from their values.

The values come from the engine side (server/ai/analysis.py `assess`, run in the AI workers); this module needs
only the games' rules, so the server's own process builds the report without loading any search code. The format
is docs/review.md's: per move the value before and after, the best move and its value, a label; per seat the
accuracy and the count of each label.

Labels are lichess's: a move that loses at least 0.3 of win chance (on the [-1, 1] scale: a sure win is 1, a
sure loss -1) is a blunder, 0.2 a mistake, 0.1 an inaccuracy. Accuracy is lichess's per-move formula on the win
percentage lost, averaged over a seat's moves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from gamenight.server.games import REGISTRY
from gamenight.server.games.base import Game

LABELS: tuple[tuple[float, str], ...] = (
    (0.3, "blunder"),
    (0.2, "mistake"),
    (0.1, "inaccuracy"),
)
"""A move's label by the win chance it lost (on the [-1, 1] scale), lichess's thresholds, worst first."""
SIGNS = {"blunder": "??", "mistake": "?", "inaccuracy": "?!"}
"""Each label's sign, as annotated games write it."""
GAMES = ("othello", "connect4", "pentago")
"""The games a review analyses (turn-based, with an AI); Tron is not reviewed."""
DEFAULT_BUDGET_MS = 800
"""Thinking time per position: a 60-move Othello game took 29 s on one worker (bench/review_bench.py)."""


def reviewed(game: str) -> Game[Any, Any]:
    """The rules of a reviewed game; ValueError for another."""
    if game not in GAMES:
        raise ValueError(f"{game} games are not reviewed; {', '.join(GAMES)} are")
    return REGISTRY[game].rules


def seat_to_move(rules: Game[Any, Any], state: Any) -> int:
    """The seat to move in `state`; a finished game's value is given for the first seat (0)."""
    return next(iter(rules.to_move(state)), 0)


def positions(game: str, options: dict[str, Any], moves: Sequence[str]) -> list[Any]:
    """The states of a game: the start, then after each move (wire notation); ValueError for an illegal one."""
    rules = reviewed(game)
    state = rules.initial_state(rules.validate_options(options))
    states = [state]
    for text in moves:
        (seat,) = rules.to_move(state)
        state = rules.apply(state, {seat: rules.parse_move(state, text)})
        states.append(state)
    return states


def movers(game: str, states: Sequence[Any]) -> list[int]:
    """The seat to move in each state (`seat_to_move`; Othello's automatic passes make it irregular)."""
    rules = reviewed(game)
    return [seat_to_move(rules, state) for state in states]


def label(loss: float) -> str | None:
    """The label of a move that lost `loss` win chance: blunder, mistake, inaccuracy, or None."""
    for threshold, name in LABELS:
        if loss >= threshold - 1e-9:
            return name
    return None


def move_accuracy(loss: float) -> float:
    """Lichess's accuracy of one move from the win percentage it lost (loss on the [-1, 1] scale × 50)."""
    return max(0.0, min(100.0, 103.1668 * math.exp(-0.04354 * loss * 50) - 3.1669))


def analyse(
    game: str, options: dict[str, Any], moves: Sequence[str], values: Sequence[dict[str, Any]], budget_ms: int
) -> dict[str, Any]:
    """The analysis (docs/review.md) of a game whose positions, start to end, were assessed as `values`
    (`assess_plain`'s maps, one more than `moves`)."""
    rules = reviewed(game)
    if len(values) != len(moves) + 1:
        raise ValueError("one assessment per position is needed")
    states = positions(game, options, moves)
    to_move = movers(game, states)
    seats = to_move[:-1]
    names = rules.seat_names(rules.validate_options(options))
    evals = [_eval(game, value, seat, names) for value, seat in zip(values, to_move, strict=True)]
    analysed: list[dict[str, Any]] = []
    losses: dict[int, list[float]] = {seat: [] for seat in range(len(names))}
    for index, (text, seat) in enumerate(zip(moves, seats, strict=True)):
        before, after = values[index], values[index + 1]
        sign = 1.0 if to_move[index + 1] == seat else -1.0  # the next value is the next mover's
        best_chance, played_chance = before["chance"], sign * after["chance"]
        same = _same_as_best(rules, states[index], states[index + 1], before["best"])
        loss = 0.0 if same else max(0.0, best_chance - played_chance)
        losses[seat].append(loss)
        analysed.append(
            {
                "ply": index + 1,
                "seat": seat,
                "played": text,
                "eval_before": evals[index],
                "eval_after": evals[index + 1],
                "best": before["best"],
                "best_eval": evals[index],
                "label": label(loss),
            }
        )
    summary = [_summary(seat, losses[seat]) for seat in range(len(names))]
    return {"moves": analysed, "summary": summary, "budget_ms": budget_ms}


def _same_as_best(rules: Game[Any, Any], before: Any, after: Any, best: str | None) -> bool:
    """True if the move played reached the position the best move reaches (the best move itself, or in Pentago a
    turn of an empty quadrant the other way): such a move loses nothing, whatever two searches say."""
    if best is None:
        return False
    try:
        (seat,) = rules.to_move(before)
        return bool(rules.apply(before, {seat: rules.parse_move(before, best)}) == after)
    except ValueError:  # a best move that does not parse or is not legal here: judge by the values
        return False


def _summary(seat: int, losses: list[float]) -> dict[str, Any]:
    """One seat's accuracy (the mean of its moves', 100 with no move) and its count of each label."""
    named = [label(loss) for loss in losses]
    accuracy = sum(map(move_accuracy, losses)) / len(losses) if losses else 100.0
    return {
        "seat": seat,
        "accuracy": round(accuracy, 1),
        "inaccuracies": named.count("inaccuracy"),
        "mistakes": named.count("mistake"),
        "blunders": named.count("blunder"),
    }


def _eval(game: str, value: dict[str, Any], mover: int, names: list[str]) -> dict[str, Any]:
    """A position's value on the wire: the first seat's win chance (the graph's line), exact or not, and a text
    for people from the first seat's view."""
    chance = value["chance"] if mover == 0 else -value["chance"]
    return {"chance": round(chance, 4), "exact": value["exact"], "text": _text(game, value, mover, names)}


def _text(game: str, value: dict[str, Any], mover: int, names: list[str]) -> str:
    """The value as people say it: "black +6" (Othello's exact disc margin), "red wins in 3", "white 62%"."""
    chance, margin, first = value["chance"], value["margin"], names[0]
    if not value["exact"]:
        return f"{first} {round(50 + 50 * (chance if mover == 0 else -chance))}%"
    if chance == 0:
        return "draw"
    winner = names[mover] if chance > 0 else names[1 - mover]
    if game == "othello":
        if margin is None:
            return f"{winner} wins"
        discs = abs(margin)
        return f"{winner} +{discs}"
    if margin is None or margin <= 0:
        return f"{winner} wins"
    # Plies to the end from the mover's turn: the winner's own moves in them (the last one included).
    own_moves = (margin + 1) // 2 if chance > 0 else margin // 2
    return f"{winner} wins in {max(1, own_moves)}"
