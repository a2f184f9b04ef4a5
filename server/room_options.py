"""Options every room has whatever its game: AI pacing and budgets, and what a dropped seat means.

They travel in the same `options` map as a game's own options and are listed with each game in
`welcome.games`, so a client builds one form without knowing which option belongs to whom.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gamenight.server.games.base import Game, OptionSpec, validate_options

ROOM_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("ai_ms", "int", 1000, "thinking time per move of the strongest AI level, in ms",
               minimum=50, maximum=10000),
    OptionSpec("ai_pace_ms", "int", 500, "least time between two AI moves, so people can follow them",
               minimum=0, maximum=5000),
    OptionSpec("countdown_ms", "int", 3000, "pause before a live game's first tick (and after a pause)",
               minimum=0, maximum=10000),
    OptionSpec("ai_level", "int", 3, "level of the AI that stands in for a dropped player (policy 'ai')",
               minimum=1, maximum=5),
    OptionSpec("on_disconnect", "choice", "wait", "what happens to a dropped player's seat",
               choices=("wait", "ai", "forfeit")),
    OptionSpec("grace_s", "int", 60, "seconds a dropped player has to come back before forfeiting",
               minimum=1, maximum=3600),
)
_ROOM_NAMES = frozenset(spec.name for spec in ROOM_OPTIONS)


def split_and_validate(game: Game, raw: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validate a create_room `options` map into (game options, room options). Raises BadOptions."""
    raw = dict(raw or {})
    room_raw = {k: v for k, v in raw.items() if k in _ROOM_NAMES}
    game_raw = {k: v for k, v in raw.items() if k not in _ROOM_NAMES}
    return game.validate_options(game_raw), validate_options(ROOM_OPTIONS, room_raw)


def describe(game: Game) -> dict[str, Any]:
    """A game's `welcome.games` entry: its own options followed by the room options."""
    entry = game.describe()
    entry["options"] = entry["options"] + [spec.to_wire() for spec in ROOM_OPTIONS]
    entry["seats"] = game.seat_names(game.validate_options({}))  # with default options
    return entry
