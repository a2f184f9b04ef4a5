"""Options every room has whatever its game: AI pacing and budgets, and what a dropped seat means.

They travel in the same `options` map as a game's own options and are listed with each game in
`welcome.games`, so a client builds one form without knowing which option belongs to whom.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from gamenight.protocol.vocab import END_REASONS, GameDescription, OptionKind, OptionSpec
from gamenight.server.games.base import Game, validate_options
from gamenight.server.policies import POLICIES

ROOM_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "ai_ms",
        OptionKind.INT,
        1000,
        "thinking time per move of the strongest AI level, in ms",
        minimum=50,
        maximum=10000,
        label="AI thinking time",
    ),
    OptionSpec(
        "ai_pace_ms",
        OptionKind.INT,
        500,
        "least time between two AI moves in ms, so people can follow them",
        minimum=0,
        maximum=5000,
        label="AI move pace",
    ),
    OptionSpec(
        "countdown_ms",
        OptionKind.INT,
        3000,
        "pause in ms before a live game's first tick (and after a pause)",
        minimum=0,
        maximum=10000,
        label="Countdown",
    ),
    OptionSpec(
        "ai_level",
        OptionKind.INT,
        3,
        "level of the AI that stands in for a dropped player (policy 'ai')",
        minimum=1,
        maximum=5,
        label="Stand-in AI level",
    ),
    OptionSpec(
        "on_disconnect",
        OptionKind.CHOICE,
        "wait",
        "what happens to a dropped player's seat: " + "; ".join(f"{p.name}: {p.help}" for p in POLICIES.values()),
        choices=tuple(POLICIES),
        label="If a player drops",
    ),
    OptionSpec(
        "grace_s",
        OptionKind.INT,
        60,
        "seconds a dropped player has to come back before forfeiting",
        minimum=1,
        maximum=3600,
        label="Grace period",
    ),
)
_ROOM_NAMES = frozenset(spec.name for spec in ROOM_OPTIONS)


def split_and_validate(game: Game[Any, Any], raw: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validate a create_room `options` map into (game options, room options). Raises BadOptions."""
    raw = dict(raw or {})
    room_raw = {k: v for k, v in raw.items() if k in _ROOM_NAMES}
    game_raw = {k: v for k, v in raw.items() if k not in _ROOM_NAMES}
    return game.validate_options(game_raw), validate_options(ROOM_OPTIONS, room_raw)


def describe(game: Game[Any, Any], bots: tuple[str, ...] = ()) -> GameDescription:
    """A game's `welcome.games` entry: its own options and then the room options, its own result reasons and
    then those every game shares, and the named bots that play it."""
    entry = game.describe()
    return replace(entry, options=entry.options + ROOM_OPTIONS, reasons=entry.reasons + END_REASONS, bots=bots)
