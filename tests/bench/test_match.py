"""The Tron maps an AI match (bench/match.py) cycles through: the all-draw test boards are left out unless asked for."""

from __future__ import annotations

import random

import pytest

from bench.match import parse_player
from gamenight.server.games.tron import MATCH_DRAWN_MAPS, match_maps, match_opening, official_maps

TWO_PLAYER = sorted(name for name, tron_map in official_maps().items() if tron_map.players == 2)


def test_default_tron_maps_leave_out_the_test_boards() -> None:
    """A default Tron match cycles through every official two-player map except test-board and test-board2."""
    maps = match_maps()
    assert set(maps) == set(TWO_PLAYER) - {"test-board", "test-board2"}
    assert not MATCH_DRAWN_MAPS & set(maps)
    assert match_opening(0, random.Random(0)).options["map"] == maps[0]


def test_all_brings_the_test_boards_back_and_names_pick_maps() -> None:
    """`--tron-maps all` plays every two-player map; a list of names plays just those, in that order."""
    assert match_maps("all") == tuple(TWO_PLAYER)
    assert match_maps("keyhole, joust") == ("keyhole", "joust")
    assert match_opening(3, random.Random(0), ("keyhole", "joust")).options["map"] == "joust"


def test_unknown_map_names_are_refused() -> None:
    """A misspelt map name is an error naming it, not a silently shorter match."""
    with pytest.raises(ValueError, match="nowhere"):
        match_maps("joust,nowhere")


def test_prev_names_the_frozen_tron_engine() -> None:
    """`--b prev5` plays level 5 of the frozen pre-issue-18 Tron engine; plain numbers stay current levels."""
    assert parse_player("prev5") == {"prev": 5}
    assert parse_player("5") == {"level": 5}
    assert parse_player("floodfill") == {"bot": "floodfill"}
