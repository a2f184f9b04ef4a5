"""The AI's entry point for the server: pick a move for a seat, by level or by named bot, as a wire string.

Every game's AI module is a `GameAI` (named in the game registry) and is imported only when first needed,
so a worker process pays for the games it plays and the event loop's process never loads search code.
`choose_move` takes and returns only plain picklable values, so the server can run it in a worker process;
`fallback_move` is the instant answer when a worker dies or is late.
"""

from __future__ import annotations

import importlib
import random
from typing import Any, Protocol, cast

from gamenight.server.ai.levels import LEVELS
from gamenight.server.games import REGISTRY
from gamenight.server.games.base import Game


class GameAI(Protocol):
    """What a game's AI module provides (module-level names): its named bots, a level's move, a bot's move and
    an instant move. States and moves are the game's own types; the dispatch here formats the move."""

    BOTS: dict[str, str]
    """Named bots -> a one-line description."""

    def choose_level(
        self, state: Any, seat: int, level: int, budget_ms: int, rng: random.Random
    ) -> tuple[Any, dict[str, Any]]:
        """The move of `level` (1-5) for `seat`, and the search's info map."""

    def choose_bot(
        self, state: Any, seat: int, bot: str, budget_ms: int, rng: random.Random
    ) -> tuple[Any, dict[str, Any]]:
        """The move of the named `bot` for `seat`, and its info map."""

    def quick_move(self, state: Any, seat: int) -> Any:
        """An instant, safe legal move without search."""


def _rules(game: str) -> Game[Any, Any]:
    """The rule book registered as `game`; ValueError if there is none."""
    entry = REGISTRY.get(game)
    if entry is None:
        raise ValueError(f"unknown game {game!r}")
    return entry.rules


def game_ai(game: str) -> GameAI:
    """The AI module of `game`, imported on first use; ValueError if no AI plays it."""
    entry = REGISTRY.get(game)
    if entry is None or entry.ai is None:
        raise ValueError(f"no AI plays {game!r}")
    return cast(GameAI, importlib.import_module(entry.ai))


def choose_move(
    game: str,
    state: Any,
    seat: int,
    *,
    level: int | None = None,
    bot: str | None = None,
    budget_ms: int = 1000,
    seed: int | None = None,
) -> tuple[str, dict[str, Any]]:
    """The wire move `seat` plays in `state` at `level` (or as `bot`), and the search's info map.

    Exactly one of `level` and `bot` is given. `seed` makes the choice reproducible; None varies it.
    """
    if (level is None) == (bot is None):
        raise ValueError("give exactly one of level and bot")
    rules, ai, rng = _rules(game), game_ai(game), random.Random(seed)
    if bot is not None:
        if bot not in ai.BOTS:
            raise ValueError(f"{game} has no bot {bot!r}; it has {', '.join(ai.BOTS) or 'none'}")
        move, info = ai.choose_bot(state, seat, bot, budget_ms, rng)
    else:
        if level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(map(str, LEVELS))}, not {level!r}")
        move, info = ai.choose_level(state, seat, level, budget_ms, rng)
    return rules.format_move(state, move), info


def fallback_move(game: str, state: Any, seat: int) -> str:
    """An instant legal move without search: the AI module's quick move, or the first legal move if no AI."""
    rules = _rules(game)
    try:
        ai = game_ai(game)
    except ValueError:
        if rules.simultaneous:
            return rules.format_move(state, rules.default_move(state, seat))
        legal = rules.legal_moves(state, seat)
        if not legal:
            raise ValueError(f"seat {seat} has no move to make") from None
        return rules.format_move(state, legal[0])
    return rules.format_move(state, ai.quick_move(state, seat))
