"""Pilot tests of the tournament screens against a real server: host one from the lobby, follow it to the final
table (its updates applied), get seated in your own game without asking, and answer another host's invitation from
its dialog."""

from __future__ import annotations

import secrets

from textual.widgets import DataTable, Input, Label, Select, Static

from gamenight.client.app import GameNightApp
from gamenight.client.screens.challenge import OfferScreen
from gamenight.client.screens.dialogs import ConfirmScreen
from gamenight.client.screens.game import GameScreen
from gamenight.client.screens.history import ReplayScreen
from gamenight.client.screens.tournaments import CreateTournamentScreen, TournamentScreen, TournamentsScreen
from gamenight.client.state import TournamentView
from gamenight.protocol.messages import CreateTournament, GetTournament, TournamentUpdate
from gamenight.protocol.vocab import RoomStatus
from tests.client.conftest import wait_for
from tests.peer import Peer

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


def noticed(app: GameNightApp, *words: str) -> bool:
    """True when a notification shown contains every one of `words`."""
    return any(all(w in n.message for w in words) for n in app._notifications)


async def invited(app: GameNightApp, pilot, url: str) -> tuple[Peer, str]:
    """Another player ("host", a raw protocol client) hosts a rated round robin of Connect Four naming the TUI's
    player and AI level 1; returns the host and the tournament once the TUI shows the invitation's dialog."""
    await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
    host = await Peer.connect(url, "host", key="host-key-" + secrets.token_urlsafe(12))
    reply = await host.request(
        CreateTournament,
        game="connect4",
        kind="round_robin",
        rated=True,
        options={"ai_pace_ms": 0},
        players=["dora", "AI level 1"],
    )
    assert reply.type == "tournament" and reply.status == "waiting" and reply.invited == ["dora"], reply
    await wait_for(
        pilot, lambda: isinstance(app.screen, OfferScreen) and app.screen.query("#decline"), "the invitation dialog"
    )
    assert str(app.screen.query_one(".dialog-title", Label).render()) == "A tournament invitation"
    text = str(app.screen.query_one("#offer-text").render())
    assert text.startswith("host invites you to a round robin of Connect Four (") and "Rated on" in text, text
    assert reply.tournament in text and "entered: AI level 1; invited: dora" in text
    assert app.model.room is None  # nothing is played before the answer
    return host, reply.tournament


async def test_an_invitation_accepted_from_the_dialog_seats_the_player(make_app, url):
    """Named in someone else's tournament, the player sees an invitation dialog, not a game; y accepts, the
    tournament starts and its first game opens, announced as the tournament's (not as a "welcome back")."""
    app = make_app("dora")
    async with app.run_test(size=SIZE) as pilot:
        host, tournament = await invited(app, pilot, url)
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, GameScreen), "the tournament's game", TOURNAMENT_GUARD_S)
        gone = await host.expect("challenge_gone")
        assert gone.why == "accepted" and gone.tournament == tournament
        await wait_for(pilot, lambda: noticed(app, "tournament", tournament, "starts"), "the game's notice")
        assert not noticed(app, "Welcome back")
        await wait_for(pilot, lambda: app.model.room.status == RoomStatus.PLAYING, "the game playing")
        assert app.model.room.seat is not None
        await wait_for(pilot, lambda: tournament in app.model.tournaments.known, "the tournament's reply")
        info = app.model.tournaments.known[tournament]
        assert "dora" in info.entries and info.invited == []
        await host.close()


async def test_an_invitation_declined_from_the_dialog_drops_the_player(make_app, url):
    """n declines: the host is told, the player is dropped and, with only an AI left, the tournament is cancelled;
    the player is never seated."""
    app = make_app("dora")
    async with app.run_test(size=SIZE) as pilot:
        host, tournament = await invited(app, pilot, url)
        await pilot.press("n")
        gone = await host.expect("challenge_gone")
        assert gone.why == "declined"
        final = await host.wait(lambda m: m.type == "tournament" and m.status == "cancelled")
        assert final.tournament == tournament and final.dropped == ["dora"] and final.games == []
        await wait_for(pilot, lambda: not isinstance(app.screen, OfferScreen), "the dialog closed")
        assert app.model.room is None and not isinstance(app.screen, GameScreen)
        await host.close()


async def test_its_host_calls_a_tournament_off_from_its_screen(make_app, url):
    """`k` on the host's own running tournament asks to confirm, then cancels it: the screen shows it cancelled
    and no longer offers `k`."""
    app = make_app("dora")
    async with app.run_test(size=SIZE) as pilot:
        screen = await host_from_lobby(app, pilot, "connect4", "AI level 1, AI level 2")
        await wait_for(pilot, lambda: screen.shown.status == "running", "the start")
        assert screen.check_action("call_off", ())
        await pilot.press("k")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.shown.status == "cancelled", "the cancellation")
        assert not screen.check_action("call_off", ())
        heading = str(screen.query_one("#t-heading", Static).render())
        assert "cancelled" in heading.lower()


def table_text(screen: TournamentScreen) -> list[list[str]]:
    """What the screen's standings and games tables show, row by row, as text."""
    shown = []
    for table in ("#t-standings", "#t-games"):
        rows = screen.query_one(table, DataTable)
        shown.extend([str(cell) for cell in rows.get_row_at(n)] for n in range(rows.row_count))
    return shown


async def test_the_tournament_screen_applies_each_update_and_shows_what_the_whole_one_shows(make_app, url, monkeypatch):
    """After the whole tournament once, its games' starts and ends reach the screen as `tournament_update`s that
    carry only what changed; the screen shows each game's result as it arrives, and at the end exactly what the
    whole tournament, asked for afresh, shows."""
    updates: list[TournamentUpdate] = []
    fold = TournamentView.fold

    def kept(view: TournamentView, update: TournamentUpdate) -> bool:
        updates.append(update)
        return fold(view, update)

    monkeypatch.setattr(TournamentView, "fold", kept)
    app = make_app("erin")
    async with app.run_test(size=SIZE) as pilot:
        screen = await host_from_lobby(app, pilot, "connect4", "AI level 1, AI level 2")
        games = screen.query_one("#t-games", DataTable)
        await wait_for(pilot, lambda: games.row_count == 2, "the schedule")
        assert str(games.get_row_at(0)[3]) == "playing"
        first_end = lambda: screen.shown.games[0]["places"] is not None  # noqa: E731
        await wait_for(pilot, first_end, "the first game's end", timeout=TOURNAMENT_GUARD_S)
        ended = next(u for u in updates if any(g["places"] is not None for g in u.games))
        assert [g["index"] for g in ended.games if g["places"] is not None] == [0] and ended.game_count == 2
        assert {row["player"] for row in ended.standings} == {"AI level 1", "AI level 2"}
        await pilot.pause(0.1)
        assert str(games.get_row_at(0)[3]).endswith("wins") or str(games.get_row_at(0)[3]) == "draw"
        await wait_for(pilot, lambda: screen.shown.status == "finished", "the end", timeout=TOURNAMENT_GUARD_S)
        await pilot.pause(0.1)
        folded = table_text(screen)
        viewer = await Peer.connect(url, "viewer")
        whole = await viewer.request(GetTournament, tournament=screen.tournament)
        await viewer.close()
        assert [whole.games, whole.standings] == [screen.shown.games, screen.shown.standings]
        app.model.tournaments.known[screen.tournament] = whole
        screen.show()
        await pilot.pause(0.1)
        assert table_text(screen) == folded
