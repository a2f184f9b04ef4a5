"""The AI's entry point for the server: pick a move for a seat, by level or by named bot, as a wire string.

`choose_move` takes and returns only plain picklable values, so the server can run it in a worker process;
`fallback_move` is the instant answer when a worker dies or is late. Each game's AI module is imported only
when first needed, so a worker pays for the games it plays.
"""

from __future__ import annotations

import importlib
import random
from types import ModuleType
from typing import Any

from gamenight.server.games import find_game
from gamenight.server.games.base import Game

ENGINE_MODULES = {
    "othello": "gamenight.server.ai.othello_ai",
    "pentago": "gamenight.server.ai.pentago_ai",
    "tron": "gamenight.server.ai.tron_ai",
    "connect4": "gamenight.server.ai.connect4_ai",
}
"""The AI module of each game, by the game's wire name."""


def _module(game: str) -> ModuleType:
    """The AI module of `game`; ValueError if the game has no AI."""
    try:
        return importlib.import_module(ENGINE_MODULES[game])
    except KeyError:
        raise ValueError(f"no AI plays {game!r}") from None


def _rules(game: str) -> Game:
    """The rule book registered as `game`; ValueError if there is none."""
    rules = find_game(game)
    if rules is None:
        raise ValueError(f"unknown game {game!r}")
    return rules


def bots() -> dict[str, list[str]]:
    """Every named bot and the games it plays (games whose AI module cannot be imported are left out)."""
    found: dict[str, list[str]] = {}
    for game in ENGINE_MODULES:
        try:
            module = _module(game)
        except ImportError:
            continue
        for name in module.BOTS:
            found.setdefault(name, []).append(game)
    return found


def choose_move(
    game: str,
    state: Any,
    seat: int,
    *,
    level: int | None = None,
    bot: str | None = None,
    budget_ms: int = 1000,
    seed: int | None = None,
) -> tuple[str, dict]:
    """The wire move `seat` plays in `state` at `level` (or as `bot`), and the search's info map.

    Exactly one of `level` and `bot` is given. `seed` makes the choice reproducible; None varies it.
    """
    if (level is None) == (bot is None):
        raise ValueError("give exactly one of level and bot")
    rules = _rules(game)
    rng = random.Random(seed)
    module = _module(game)
    if not hasattr(module, "choose"):  # TEMP: a GameAI module (connect4) until the new registry calls it directly
        chosen = module.choose_bot(state, seat, bot, budget_ms, rng) if bot is not None else None
        move, info = chosen or module.choose_level(state, seat, level, budget_ms, rng)
    else:
        move, info = module.choose(state, seat, level=level, bot=bot, budget_ms=budget_ms, rng=rng)
    return rules.format_move(state, move), info


def fallback_move(game: str, state: Any, seat: int) -> str:
    """An instant legal move without search: the AI module's `quick` choice if it has one, else the first."""
    rules = _rules(game)
    module = _module(game)
    quick = getattr(module, "quick_move", None)
    if quick is not None:
        return rules.format_move(state, quick(state, seat))
    if rules.simultaneous:
        return rules.format_move(state, rules.default_move(state, seat))
    legal = rules.legal_moves(state, seat)
    if not legal:
        raise ValueError(f"seat {seat} has no move to make")
    return rules.format_move(state, legal[0])
