"""The five AI levels: how much of a room's thinking budget each uses, how deep it may look, how noisy it is.

Weak levels are weak the way a person is weak, not random: they look less far and choose at random only
among root moves scored within `noise` of the best (Stockfish's skill levels work the same way). `noise` is
in hundredths of a game's unit (see `noise_for`), so one table serves every game.
"""

from __future__ import annotations

from dataclasses import dataclass

from gamenight.server.ai.search import Limits


@dataclass(frozen=True, slots=True)
class Level:
    """One level: its number and name, its share of the time budget, its depth cap and its root-move noise."""

    number: int
    name: str
    time_fraction: float
    max_depth: int | None
    noise: int


LEVELS: dict[int, Level] = {
    level.number: level
    for level in (
        Level(1, "easy", 0.10, 1, 150),
        Level(2, "casual", 0.20, 2, 80),
        Level(3, "medium", 0.35, 3, 30),
        Level(4, "hard", 0.60, 4, 0),
        Level(5, "max", 1.00, None, 0),
    )
}
"""Levels by number, 1 (easy) to 5 (max)."""

LEVEL_NAMES: dict[str, int] = {level.name: number for number, level in LEVELS.items()}
"""Level numbers by name ("easy" -> 1)."""

MIN_TIME_MS = 1
"""The smallest time limit a level gets, however small the budget."""


def level(number: int) -> Level:
    """The level numbered `number`; ValueError naming the valid numbers otherwise."""
    try:
        return LEVELS[number]
    except KeyError:
        raise ValueError(f"level must be one of {', '.join(map(str, LEVELS))}, not {number!r}") from None


def time_limit_ms(number: int, budget_ms: int) -> int:
    """The time limit of level `number` when the room allows `budget_ms` per move (never None, unlike `Limits`)."""
    return max(MIN_TIME_MS, int(budget_ms * level(number).time_fraction))


def limits_for(number: int, budget_ms: int) -> Limits:
    """The search limits of level `number` when the room allows `budget_ms` per move."""
    return Limits(time_ms=time_limit_ms(number, budget_ms), depth=level(number).max_depth)


def noise_for(number: int, unit: int) -> int:
    """Level `number`'s noise in a game's engine units, given the score `unit` of a small clear advantage."""
    return level(number).noise * unit // 100
