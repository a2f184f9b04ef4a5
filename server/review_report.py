"""Game review's report (issue 36): a game's positions, and the analysis put together from their values.

The values come from the engine side (server/ai/analysis.py `assess`, run in the AI workers); this module needs
only the games' rules, so the server's own process builds the report without loading any search code. The format
is docs/review.md's: per move the value before and after, the best move and its value, a label; per seat the
accuracy and the count of each label.

Tron is reviewed differently (its ticks are simultaneous moves): each position's Voronoi territory per rider, the
squares it reaches strictly before every other rider (server/ai/analysis.py `tron_territories`); `tron_analysis`
puts them per tick into the same message shape (docs/review.md, "Tron").

Labels are lichess's: a move that loses at least 0.3 of win chance (on the [-1, 1] scale: a sure win is 1, a
sure loss -1) is a blunder, 0.2 a mistake, 0.1 an inaccuracy. Accuracy is lichess's per-move formula on the win
percentage lost, averaged over a seat's moves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from gamenight.server.games import REGISTRY
from gamenight.server.games.base import Game, LiveGame

LABELS: tuple[tuple[float, str], ...] = (
    (0.3, "blunder"),
    (0.2, "mistake"),
    (0.1, "inaccuracy"),
)
"""A move's label by the win chance it lost (on the [-1, 1] scale), lichess's thresholds, worst first."""
SIGNS = {"blunder": "??", "mistake": "?", "inaccuracy": "?!"}
"""Each label's sign, as annotated games write it."""
TURN_BASED = ("othello", "connect4", "pentago")
"""The games reviewed move by move (turn-based, with an AI): each position valued, each move labelled."""
TERRITORY = ("tron",)
"""The games reviewed by territory: each tick's Voronoi split between the riders."""
GAMES = TURN_BASED + TERRITORY
"""Every game a review analyses."""
TICK_SPAN = 200
"""Positions of a Tron game per piece of work in the AI workers (a position's territory took about 2 ms on a 50x50
arena on the loaded 2-core machine: a piece stays under the review budget, as a move's position does)."""
DEFAULT_BUDGET_MS = 800
"""Thinking time per position: a 60-move Othello game took 29 s on one worker (bench/review_bench.py)."""


def reviewed(game: str) -> Game[Any, Any]:
    """The rules of a game reviewed move by move; ValueError for another."""
    if game not in TURN_BASED:
        raise ValueError(f"{game} games are not reviewed move by move; {', '.join(TURN_BASED)} are")
    return REGISTRY[game].rules


def units(game: str, moves: Sequence[str]) -> int:
    """The pieces of work a game's analysis takes in the AI workers: one per position for a game reviewed move by
    move, one per `TICK_SPAN` positions of a Tron game."""
    return len(moves) // TICK_SPAN + 1 if game in TERRITORY else len(moves) + 1


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


def ticks(game: str, options: dict[str, Any], moves: Sequence[str]) -> list[Any]:
    """The states of a game reviewed by territory: the start, then after each tick (joint moves as stored)."""
    rules = REGISTRY[game].rules
    if game not in TERRITORY or not isinstance(rules, LiveGame):
        raise ValueError(f"{game} games are not reviewed by territory")
    state = rules.initial_state(rules.validate_options(options))
    states = [state]
    for text in moves:
        state = rules.apply(state, rules.parse_joint(state, text))
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
    (`assess_plain`'s maps, one more than `moves`; for Tron one per `TICK_SPAN` positions)."""
    if game in TERRITORY:
        return tron_analysis(moves, [counts for value in values for counts in value["territory"]])
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


def tron_analysis(moves: Sequence[str], territory: Sequence[Sequence[int]]) -> dict[str, Any]:
    """A Tron game's analysis from each position's squares per rider (`territory`, one more than `moves`): per tick
    the territories before and after it; per rider its mean territory and the ticks after which it held the most."""
    if len(territory) != len(moves) + 1:
        raise ValueError("one territory per position is needed")
    analysed = [
        {"ply": index + 1, "played": text, "territory_before": list(territory[index]), "territory_after": list(after)}
        for index, (text, after) in enumerate(zip(moves, territory[1:], strict=True))
    ]
    summary = []
    for seat in range(len(territory[0])):
        own = [counts[seat] for counts in territory]
        ahead = sum(_leader(counts) == seat for counts in territory[1:])
        summary.append({"seat": seat, "mean_territory": round(sum(own) / len(own), 1), "ticks_ahead": ahead})
    return {"moves": analysed, "summary": summary, "budget_ms": 0}


def _leader(counts: Sequence[int]) -> int | None:
    """The rider with strictly the most squares, if one has."""
    best = max(counts, default=0)
    return counts.index(best) if list(counts).count(best) == 1 else None


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
