"""The games this server hosts: one registration per game, naming everything the game brings.

A game is its rules module (written against `base.Game`), its AI module (a `GameAI`, imported only when an AI
first plays it, so the event loop never loads search code) and one `GameEntry` line here. The server, the AI
dispatch, the bench tools and the conformance test all read this registry; none keeps a table of its own.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gamenight.server.games import connect4, othello, pentago, tron
from gamenight.server.games.base import Game, Opening


def random_plies(low: int, high: int) -> Callable[[int, random.Random], Opening]:
    """Match openings of `low`-`high` random plies from the default start (each pair plays one both ways)."""

    def opening(pair: int, rng: random.Random) -> Opening:
        plies = rng.randint(low, high)
        return Opening({}, plies, f"{plies} random plies")

    return opening


FROM_THE_START = random_plies(0, 0)
"""Match games that start from the initial position."""


@dataclass(frozen=True, slots=True)
class GameEntry:
    """Everything one game brings to the server and its tools.

    `ai` is the dotted name of the game's AI module (see `server.ai.play.GameAI`), or None if no AI plays it;
    `bots` the names of its named bots (the module's `BOTS`, a test keeps them equal), listed here so the
    server offers them without loading the AI, which only its worker processes import.
    `opening(pair, rng)` sets up pair `pair` of an AI-vs-AI match (bench/match.py). `perft(state, depth)`
    counts the game tree (bench/perft.py), from the start that `perft_options` give.
    """

    rules: Game[Any, Any]
    ai: str | None = None
    bots: tuple[str, ...] = ()
    opening: Callable[[int, random.Random], Opening] = FROM_THE_START
    perft: Callable[[Any, int], int] | None = None
    perft_options: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The game's wire name."""
        return self.rules.name


REGISTRY: dict[str, GameEntry] = {
    entry.name: entry
    for entry in (
        GameEntry(
            othello.Othello(),
            ai="gamenight.server.ai.othello_ai",
            bots=("classic", "quantum"),
            opening=random_plies(4, 8),
            perft=othello.perft,
        ),
        GameEntry(
            pentago.Pentago(),
            ai="gamenight.server.ai.pentago_ai",
            bots=("playout",),
            opening=random_plies(2, 4),
            perft=pentago.perft,
        ),
        GameEntry(
            tron.Tron(),
            ai="gamenight.server.ai.tron_ai",
            bots=("chaser", "floodfill", "voronoi"),
            opening=tron.match_opening,
            perft=tron.perft,
            perft_options={"map": "joust"},
        ),
        GameEntry(
            connect4.ConnectFour(),
            ai="gamenight.server.ai.connect4_ai",
            bots=("greedy",),
            opening=random_plies(0, 2),
            perft=connect4.perft,
        ),
    )
}
"""Every game, by wire name, in the order `welcome.games` lists them."""

GAMES: dict[str, Game[Any, Any]] = {name: entry.rules for name, entry in REGISTRY.items()}
"""The rule books alone, by wire name."""


def find_game(name: str) -> Game[Any, Any] | None:
    """The game registered under `name`, or None."""
    return GAMES.get(name)


def bots() -> dict[str, list[str]]:
    """Every named bot and the games it plays, from the registry alone (no AI module is loaded)."""
    found: dict[str, list[str]] = {}
    for name, entry in REGISTRY.items():
        for bot in entry.bots:
            found.setdefault(bot, []).append(name)
    return found
