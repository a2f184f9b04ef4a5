"""Options every room has whatever its game: AI pacing and budgets, what a dropped seat means, and (for
turn-based games only) the time controls.

They travel in the same `options` map as a game's own options and are listed with each game in
`welcome.games`, so a client builds one form without knowing which option belongs to whom.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from gamenight.protocol.vocab import END_REASONS, GameDescription, OptionKind, OptionSpec
from gamenight.server.games.base import BadOptions, Game, validate_options
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
    OptionSpec(
        "rated",
        OptionKind.BOOL,
        False,
        "rated game: changes the players' ratings (claimed players only; no takebacks; a game that ends before "
        "each side made two moves is aborted, not rated)",
        label="Rated",
    ),
)
CLOCK_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "clock_s",
        OptionKind.INT,
        0,
        "each seat's time for the whole game in seconds (0: no clock; 300 is 5 minutes)",
        minimum=0,
        maximum=10800,
        label="Clock",
    ),
    OptionSpec(
        "increment_s",
        OptionKind.INT,
        0,
        "seconds added to your clock after each of your moves",
        minimum=0,
        maximum=180,
        label="Increment",
    ),
    OptionSpec(
        "days_per_move",
        OptionKind.INT,
        0,
        "correspondence: every move resets your time to this many days (instead of a clock)",
        minimum=0,
        maximum=14,
        label="Days per move",
    ),
)
"""The time controls, offered by turn-based games only (a live game runs on its tick)."""
_ROOM_NAMES = frozenset(spec.name for spec in ROOM_OPTIONS)
_CLOCK_NAMES = frozenset(spec.name for spec in CLOCK_OPTIONS)


def room_options_of(game: Game[Any, Any]) -> tuple[OptionSpec, ...]:
    """The room options `game` offers: all of them, less the clock for live games."""
    return ROOM_OPTIONS if game.simultaneous else ROOM_OPTIONS + CLOCK_OPTIONS


def split_and_validate(game: Game[Any, Any], raw: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validate a create_room `options` map into (game options, room options). Raises BadOptions."""
    raw = dict(raw or {})
    if game.simultaneous and _CLOCK_NAMES & raw.keys():
        given = ", ".join(sorted(_CLOCK_NAMES & raw.keys()))
        raise BadOptions(f"{game.name} is played on its tick and has no clock: leave out {given}")
    ours = _ROOM_NAMES | _CLOCK_NAMES
    room_raw = {k: v for k, v in raw.items() if k in ours}
    game_raw = {k: v for k, v in raw.items() if k not in ours}
    game_options, room_options = game.validate_options(game_raw), validate_options(room_options_of(game), room_raw)
    if room_options.get("clock_s") and room_options.get("days_per_move"):
        raise BadOptions("give either clock_s (a clock) or days_per_move (correspondence), not both")
    if room_options.get("increment_s") and not room_options.get("clock_s"):
        raise BadOptions("increment_s needs a clock: set clock_s too")
    return game_options, room_options


def describe(game: Game[Any, Any], bots: tuple[str, ...] = ()) -> GameDescription:
    """A game's `welcome.games` entry: its own options and then the room options, its own result reasons and
    then those every game shares, and the named bots that play it."""
    entry = game.describe()
    options = entry.options + room_options_of(game)
    return replace(entry, options=options, reasons=entry.reasons + END_REASONS, bots=bots)
