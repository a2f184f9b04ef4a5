"""The quick menu (n in the lobby): a game against the AI by game, AI level and time control, the choice kept for
the next time."""

from __future__ import annotations

from textual.widgets import Select

from gamenight.client.config import load_config
from gamenight.client.screens.game import GameScreen
from gamenight.client.screens.quick import QuickMenuScreen
from gamenight.protocol.vocab import SeatKind
from tests.client.conftest import wait_for

SIZE = (110, 36)


async def test_quick_menu_starts_the_chosen_game_and_remembers_it(make_app):
    """n, then Connect Four, AI level 1 and 3+2: that game starts against that AI on that clock; the next n offers
    the same choice, so n Enter plays it again."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, QuickMenuScreen), "the quick menu")
        menu = app.screen
        assert menu.query_one("#q-game", Select).value == "othello" and menu.query_one("#q-level", Select).value == 3
        menu.query_one("#q-game", Select).value = "connect4"
        menu.query_one("#q-level", Select).value = 1
        menu.query_one("#q-time", Select).value = 2  # 3+2 blitz
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, GameScreen)
                and app.model.room.summary is not None
                and app.model.room.summary.seats[1].kind == SeatKind.AI
            ),
            "the game against the AI",
        )
        summary = app.model.room.summary
        assert summary.game == "connect4" and summary.seats[1].level == 1
        assert summary.options["clock_s"] == 180 and summary.options["increment_s"] == 2
        assert load_config()["quick"] == {"game": "connect4", "level": 1, "preset": 2}

    again = make_app("ann")
    async with again.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: again.model.lobby.games, "the welcome")
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(again.screen, QuickMenuScreen), "the quick menu")
        menu = again.screen
        assert menu.query_one("#q-game", Select).value == "connect4"
        assert menu.query_one("#q-level", Select).value == 1 and menu.query_one("#q-time", Select).value == 2
        await pilot.press("escape")
        await wait_for(pilot, lambda: again.screen is again.lobby_screen, "the lobby again")
