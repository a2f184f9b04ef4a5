"""The games this server hosts: a plain registry from wire name to rule book.

Adding a game means writing its module against `base.Game` and listing it here; every game in this
registry is run through the same conformance tests (tests/games/test_conformance.py).
"""

from __future__ import annotations

from gamenight.server.games.base import Game
from gamenight.server.games.connect4 import ConnectFour
from gamenight.server.games.othello import Othello
from gamenight.server.games.pentago import Pentago
from gamenight.server.games.tron import Tron

GAMES: dict[str, Game] = {game.name: game for game in (Othello(), Pentago(), Tron(), ConnectFour())}


def find_game(name: str) -> Game | None:
    """The game registered under `name`, or None."""
    return GAMES.get(name)
