"""Screens that were wrong or stale (issue 34, found by a new user at 120x40 and 80x24): each test drives the real
app with its Pilot against a real server on loopback and reads what the screen shows."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from gamenight.client.screens.tournaments import TournamentScreen, TournamentsScreen
from tests.client.conftest import wait_for
from tests.client.test_leaderboard_tournaments import host_from_lobby

SIZE = (120, 40)


async def test_the_tournament_list_shows_the_tournament_just_hosted(make_app) -> None:
    """Back from the tournament you just hosted, the list shows it (not "No tournaments yet" until `r`)."""
    app = make_app("carol")
    async with app.run_test(size=SIZE) as pilot:
        hosted = await host_from_lobby(app, pilot, "connect4", "AI level 1, AI level 2")
        assert isinstance(hosted, TournamentScreen)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, TournamentsScreen), "the list")
        listing = app.screen
        table = listing.query_one("#tournaments", DataTable)
        await wait_for(pilot, lambda: table.row_count == 1, "the hosted tournament in the list")
        assert str(table.get_row_at(0)[0]) == hosted.tournament
        assert not listing.query_one("#no-tournaments", Static).display
