"""Widgets of the client: one board per kind of game, and the panels around them.

`BOARDS` is the one registry of per-game drawing: each game's `BoardSpec` (its widget class, its seat
chips, its replay fold) lives in that game's widget module. Adding a board for a game is that one file
and one entry here; a game with no entry is drawn by the generic `TextBoard`.
"""

from __future__ import annotations

from gamenight.client.widgets import connect4, othello, pentago, tron
from gamenight.client.widgets.board import BoardSpec, TextBoard

BOARDS: dict[str, BoardSpec] = {
    "othello": othello.BOARD,
    "pentago": pentago.BOARD,
    "tron": tron.BOARD,
    "connect4": connect4.BOARD,
}

FALLBACK = BoardSpec(TextBoard)
"""What a game without a registered board gets: its position as text, moves typed in."""


def board_spec(game: str) -> BoardSpec:
    """The registered board of `game`, or the text fallback."""
    return BOARDS.get(game, FALLBACK)
