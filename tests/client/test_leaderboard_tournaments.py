"""Pilot tests of the tournament screens against a real server: host one from the lobby, follow it to the final
table, and get seated in your own game without asking."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Select, Static

from gamenight.client.screens.game import GameScreen
from gamenight.client.screens.history import ReplayScreen
from gamenight.client.screens.tournaments import CreateTournamentScreen, TournamentScreen, TournamentsScreen
from tests.client.conftest import wait_for

SIZE = (120, 40)
TOURNAMENT_GUARD_S = 120.0  # only a hang fails: AI games under load can be slow


async def host_from_lobby(app, pilot, game: str, players: str, opens: type = TournamentScreen):
    """`t` in the lobby, `c` for the form, fill it, submit; returns the screen that opens (the tournament's, or the
    game's when you play in its first game)."""
    await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
    await pilot.press("t")
    await wait_for(pilot, lambda: isinstance(app.screen, TournamentsScreen) and app.screen.loaded, "the list")
    await pilot.press("c")
    await wait_for(pilot, lambda: isinstance(app.screen, CreateTournamentScreen), "the form")
    form = app.screen
    form.query_one("#t-game", Select).value = game
    form.query_one("#t-players", Input).value = players
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: isinstance(app.screen, opens) and getattr(app.screen, "shown", True), "its screen")
    return app.screen


async def test_host_a_round_robin_of_an_ai_and_a_bot_to_the_final_table(make_app, url):
    """From the lobby: host a round robin of AI level 1 and the "greedy" bot; the screen follows its two games
    and ends on the final table, `v` replays a game; the list then shows it finished."""
    app = make_app("carol")
    async with app.run_test(size=SIZE) as pilot:
        screen = await host_from_lobby(app, pilot, "connect4", "AI level 1, bot greedy")
        await wait_for(
            pilot,
            lambda: screen.shown is not None and screen.shown.status == "finished",
            "the end",
            timeout=TOURNAMENT_GUARD_S,
        )
        await pilot.pause(0.1)
        heading = str(screen.query_one("#t-heading", Static).render())
        assert "Final standings" in heading and "Round robin of Connect Four hosted by carol" in heading
        standings = screen.query_one("#t-standings", DataTable)
        players = {str(standings.get_row_at(n)[1]) for n in range(standings.row_count)}
        assert players == {"AI level 1", "bot greedy"}
        games = screen.query_one("#t-games", DataTable)
        assert games.row_count == 2
        results = [str(games.get_row_at(n)[3]) for n in range(2)]
        assert all(r.endswith("wins") or r == "draw" for r in results)
        await pilot.press("v")  # the first game, replayed from the history
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen), "the replay")
        assert app.screen.replay.record["players"][0]["name"] == screen.shown.games[0]["players"][0]
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, "back to the tournament")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, TournamentsScreen), "the list")
        listing = app.screen
        await pilot.press("r")
        await wait_for(pilot, lambda: listing.loaded, "the list again")
        row = [str(cell) for cell in listing.query_one("#tournaments", DataTable).get_row_at(0)]
        assert row[1] == "Connect Four" and row[3] == "finished"


async def test_your_tournament_game_opens_by_itself(make_app, url):
    """Entered against an AI, you are seated by the server and the game screen opens without a key press."""
    app = make_app("carol")
    async with app.run_test(size=SIZE) as pilot:
        game = await host_from_lobby(app, pilot, "connect4", "me, AI level 1", opens=GameScreen)
        await wait_for(pilot, lambda: app.model.tournaments.known, "the tournament")
        info = next(iter(app.model.tournaments.known.values()))
        assert game.session.code == info.games[0]["room"] and game.session.playing
        assert info.games[0]["players"] == ["carol", "AI level 1"]
