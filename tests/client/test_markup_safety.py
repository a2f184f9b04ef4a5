"""No name can crash the TUI: names, chat, reasons and the server's texts that look like Rich markup ("[/]x",
"[red]", "[link=x]y[/link]", ...) are drawn literally on every screen, never parsed (issue 34).

The behavioural tests drive the real app (Pilot) against a real server on loopback, with scripted players
(tests/peer.py) under such names; each reads what the widgets draw (their rendered lines), not the data behind.
"""

from __future__ import annotations

import secrets

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import DataTable, Input, Label, RichLog, Select, Static
from textual.widgets._data_table import default_cell_formatter
from textual.widgets._select import SelectOverlay
from textual.widgets._toast import Toast

from gamenight.client.app import GameNightApp
from gamenight.client.plain import plain
from gamenight.client.screens.challenge import ChallengeScreen, OfferScreen
from gamenight.client.screens.dialogs import GameOverScreen, NameScreen
from gamenight.client.screens.game import GameScreen
from gamenight.client.screens.history import HistoryScreen, ReplayScreen
from gamenight.client.screens.lobby import LobbyScreen
from gamenight.client.screens.ratings import LeaderboardScreen, PlayerCardScreen, PlayerNameScreen
from gamenight.client.screens.tournaments import TournamentScreen, TournamentsScreen
from gamenight.protocol.messages import (
    Accept,
    ChallengeRequest,
    Chat,
    CreateRoom,
    CreateTournament,
    Decline,
    Join,
    MakeMove,
    Resign,
)
from tests.client.conftest import wait_for
from tests.client.test_challenges import challenge_from_lobby
from tests.peer import Peer

SIZE = (160, 48)
TOURNAMENT_GUARD_S = 60.0  # only a hang fails
MARKUP = ("[/]x", "[bold", "[link=x]y[/link]", "[red]", "\\[", "[/red]", "[@click=app.quit]q[/]", "[$accent]z", "[b]")
"""Strings Rich or Textual would read as markup: closing nothing (MarkupError), an unclosed tag, a link, a style, an
escaped bracket, an action, a Textual variable."""


def drawn(widget: Widget) -> str:
    """The text a widget draws now (what a user sees of it), its lines joined and white space folded, so that
    where a line wraps does not matter."""
    lines = widget.render_lines(Region(0, 0, *widget.outer_size))  # borders and padding included
    return " ".join(" ".join("".join(segment.text for segment in line) for line in lines).split())


def cells(table: DataTable[Text | str]) -> list[list[str]]:
    """Every cell of a table as it draws it (its own cell formatter: a `str` is read as markup there)."""
    shown = []
    for row in range(table.row_count):
        shown.append([str(getattr(default_cell_formatter(c), "plain", c)) for c in table.get_row_at(row)])
    return shown


def toasts(app: GameNightApp) -> list[str]:
    """The text of every toast on screen, as drawn."""
    return [" ".join(str(toast.render()).split()) for toast in app.screen.query(Toast)]


def toasted(app: GameNightApp, text: str) -> bool:
    """True once a toast on screen shows `text`."""
    return any(text in shown for shown in toasts(app))


def key(name: str) -> str:
    """A claim key for a test player."""
    return name.encode().hex()[:8].ljust(8, "k") + secrets.token_urlsafe(12)


# -- the helper ------------------------------------------------------------------------------------------------------


class Sinks(App[None]):
    """One of each widget the client draws text in."""

    CSS = "DataTable { height: 3; }"

    def compose(self) -> ComposeResult:
        """A Static, a Label, a table and a selector."""
        yield Static(id="static")
        yield Label(id="label")
        yield DataTable(id="table")
        yield Select([("x", 0)], id="select", allow_blank=False)


@pytest.mark.parametrize("text", MARKUP)
async def test_plain_text_is_drawn_as_written_in_every_widget(text: str) -> None:
    """A name given to `plain` shows character for character in a Static, a Label, a table cell and a selector."""
    app = Sinks()
    async with app.run_test(size=(60, 20)) as pilot:
        app.query_one("#static", Static).update(plain(text))
        app.query_one("#label", Label).update(plain(text, style="bold"))
        table = app.query_one("#table", DataTable)
        table.add_column("who")
        table.add_row(plain(text))
        select = app.query_one("#select", Select)
        select.set_options([(plain(text), 1)])
        select.value = 1
        await pilot.pause()
        assert drawn(app.query_one("#static")) == text
        assert drawn(app.query_one("#label")) == text
        assert cells(table) == [[text]] and text in drawn(table)
        assert drawn(select.query_one("#label")) == text
        select.expanded = True  # the list of choices
        await pilot.pause()
        assert text in drawn(select.query_one(SelectOverlay))
    assert plain(7).plain == "7" and plain(text, style="bold").style == "bold" and not plain(text).spans


# -- guests: the lobby, the online list, challenges, a room, its end --------------------------------------------------


async def test_guests_with_markup_names_in_the_lobby_room_and_dialogs(url: str) -> None:
    """Guests named like markup sit in a public room, stay online, challenge, decline with a markup reason, chat and
    resign: the lobby's rooms and online list, the toasts, the challenge and offer dialogs, the game screen (players,
    status, log) and the game-over dialog all show their text literally, and the app keeps running."""
    host = await Peer.connect(url, "[/]x")  # the probe's guest: its name made every lobby exit with MarkupError
    shy = await Peer.connect(url, "[b]shy")  # takes no challenges
    linker = await Peer.connect(url, "[link=x]y[/link]", key=key("linker"), accepts=["othello"])
    room = await host.request(CreateRoom, game="othello", options={})
    await host.request(Join, room=room.room, seat=0)
    app = GameNightApp(url, "[link=x]y[/link]", save_name=False)  # a name someone else has claimed
    async with app.run_test(size=SIZE, notifications=True) as pilot:  # toasts drawn
        await wait_for(pilot, lambda: isinstance(app.screen, NameScreen), "the name dialog")
        await pilot.pause()
        assert "Someone else has claimed '[link=x]y[/link]' on this server." in drawn(app.screen.query_one("#taken"))
        app.screen.query_one("#name", Input).value = "\\[me"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is app.lobby_screen and app.model.name == "\\[me", "the lobby")
        lobby = app.lobby_screen
        rooms = lobby.query_one("#rooms", DataTable)
        players = lobby.query_one("#players", DataTable)
        await wait_for(pilot, lambda: rooms.row_count == 1 and players.row_count == 3, "the room and who is online")
        await pilot.pause()
        assert cells(rooms)[0][3] == "[/]x · open"
        assert "Hello \\[me — 1 room(s) open" in drawn(lobby.query_one("#lobby-intro"))
        online = {row[0]: row[1] for row in cells(players)}
        assert online == {"[/]x": "—", "[b]shy": "—", "[link=x]y[/link]": "Othello"}
        assert "[/]x · open" in drawn(rooms) and "[link=x]y[/link]" in drawn(players)

        players.focus()
        players.move_cursor(row=players.get_row_index("[b]shy"))
        await pilot.press("p")
        await wait_for(pilot, lambda: toasted(app, "[b]shy does not take challenges"), "the toast naming [b]shy")

        form = await challenge_from_lobby(app, pilot, "[link=x]y[/link]")
        assert isinstance(form, ChallengeScreen)
        offer = await linker.expect("challenged")
        await pilot.pause()
        assert "Waiting for [link=x]y[/link] to answer your Othello challenge" in drawn(lobby.query_one("#pending"))
        await linker.request(Decline, challenge=offer.challenge, reason="[/red] [@click=app.quit]later[/]")
        declined = "Your challenge to [link=x]y[/link] was declined: [/red] [@click=app.quit]later[/]"
        await wait_for(pilot, lambda: toasted(app, declined), "the decline toast with its reason")

        await linker.request(ChallengeRequest, to="\\[me", game="othello", options={}, seat=0)
        await wait_for(pilot, lambda: isinstance(app.screen, OfferScreen) and app.screen.query("#decline"), "the offer")
        await pilot.pause()
        assert "[link=x]y[/link] challenges you to Othello" in drawn(app.screen.query_one("#offer-text"))
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is lobby, "the offer declined")

        await shy.request(Join, room=room.room, seat=1)
        await wait_for(pilot, lambda: cells(rooms)[0][3] == "[/]x · [b]shy", "[b]shy seated")
        rooms.focus()
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, GameScreen) and app.model.room.state, "watching the room")
        game = app.screen
        await host.send(Chat(room=room.room, text="[bold [/]hi [red]there"))
        said = "[/]x: [bold [/]hi [red]there"
        await wait_for(pilot, lambda: said in drawn(game.query_one("#log", RichLog)), "the chat line")
        await pilot.pause()
        panel = drawn(game.query_one("#players"))
        assert "black: [/]x" in panel and "white: [b]shy" in panel
        assert drawn(game.query_one("#status")) == "black ([/]x) to move"

        await host.send(Resign(room=room.room))
        await wait_for(pilot, lambda: isinstance(app.screen, GameOverScreen), "the game-over dialog")
        await pilot.pause()
        assert drawn(app.screen.query_one("#detail")) == "black ([/]x) resigned; white ([b]shy) wins"
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is game, "the final board")
        assert drawn(game.query_one("#status")) == "black ([/]x) resigned; white ([b]shy) wins"
        assert app.is_running
    for peer in (host, shy, linker):
        await peer.close()


# -- claimed players: a rated tournament, its games in the history, the ratings ----------------------------------------


async def markup_tournament(url: str) -> None:
    """The host "[/]x" holds a rated Connect Four round robin of "[/]x" and "[red]", who accepts the invitation
    and resigns both games after two moves a side (a rated game ending sooner rates nobody)."""
    host = await Peer.connect(url, "[/]x", key=key("host"))
    loser = await Peer.connect(url, "[red]", key=key("loser"), accepts=["connect4"])
    created = await host.request(
        CreateTournament, game="connect4", kind="round_robin", rated=True, players=["[/]x", "[red]"], start_in_s=0
    )
    assert created.type == "tournament", created
    invitation = await loser.expect("challenged")
    await loser.request(Accept, challenge=invitation.challenge)
    resigned: set[str] = set()
    while len(resigned) < 2:
        seated = await loser.wait(lambda m: m.type == "joined" and m.id is None and m.room not in resigned)
        room = seated.room
        hosts = await host.wait(lambda m, room=room: m.type == "joined" and m.room == room)
        seats = {seated.seat: loser, hosts.seat: host}
        for ply in range(4):
            mover = seats[ply % 2]
            now = await mover.wait(
                lambda m, ply=ply, room=room: m.type == "state" and m.room == room and len(m.moves) == ply
            )
            await mover.send(MakeMove(room=room, move=now.legal[0], seq=now.seq))
        await loser.wait(lambda m, room=room: m.type == "state" and m.room == room and len(m.moves) == 4)
        await loser.send(Resign(room=room))
        resigned.add(room)
    await host.wait(lambda m: m.type == "tournament" and m.status == "finished")
    await host.close()
    await loser.close()


async def test_claimed_markup_names_in_tournaments_history_replay_and_ratings(url: str) -> None:
    """After a rated tournament hosted by "[/]x" against "[red]": the tournaments list, the tournament's heading,
    standings and games, its replay, the history, the leaderboard, both players' cards (from the table and typed
    into the name dialog) and the refusal for a name nobody plays under show the names literally."""
    await markup_tournament(url)
    app = GameNightApp(url, "carol", save_name=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:  # toasts drawn
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, TournamentsScreen) and app.screen.loaded, "the list")
        listing = app.screen
        await pilot.pause()
        assert cells(listing.query_one("#tournaments", DataTable))[0][4] == "[/]x, [red]"

        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TournamentScreen) and app.screen.shown, "the tournament")
        screen = app.screen
        await wait_for(pilot, lambda: screen.shown.status == "finished", "the final table", TOURNAMENT_GUARD_S)
        await pilot.pause()
        heading = drawn(screen.query_one("#t-heading"))
        assert "Round robin of Connect Four hosted by [/]x · rated — Final standings" in heading
        assert [row[1] for row in cells(screen.query_one("#t-standings", DataTable))] == ["[/]x", "[red]"]
        games = cells(screen.query_one("#t-games", DataTable))
        assert [row[1] for row in games] == ["[/]x vs [red]", "[red] vs [/]x"]
        assert [row[3] for row in games] == ["[/]x wins", "[/]x wins"]

        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen), "the replay")
        replay = app.screen
        await pilot.pause()
        assert drawn(replay.query_one("#replay-result")) == "yellow ([red]) resigned; red ([/]x) wins"
        panel = drawn(replay.query_one("#players"))
        assert "red: [/]x" in panel and "yellow: [red]" in panel
        await pilot.press("escape", "escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")

        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded, "the history")
        await pilot.pause()
        history = cells(app.screen.query_one("#games", DataTable))
        assert sorted(row[3] for row in history) == ["[/]x · [red]", "[red] · [/]x"]
        assert all(row[4].endswith("([/]x) wins") and "([red]) resigned" in row[4] for row in history)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")

        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded, "the board")
        board = app.screen
        while board.pool != "connect4":
            await pilot.press("g")
            await wait_for(pilot, lambda: board.loaded, "the next board")
        await pilot.pause()
        table = board.query_one("#leaders", DataTable)
        assert [row[1] for row in cells(table)] == ["[/]x", "[red]"]
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PlayerCardScreen) and app.screen.loaded, "the card")
        await pilot.pause()
        assert drawn(app.screen.query_one("#card-title")) == "[/]x"
        recent = drawn(app.screen.query_one("#card-recent"))
        assert recent.count("win vs [red]") == 2
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")

        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, PlayerNameScreen), "the name dialog")
        app.screen.query_one("#player-name", Input).value = "[red]"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PlayerCardScreen) and app.screen.loaded, "[red]'s card")
        await pilot.pause()
        assert drawn(app.screen.query_one("#card-title")) == "[red]"
        assert drawn(app.screen.query_one("#card-recent")).count("loss vs [/]x") == 2
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")

        await pilot.press("i")  # a name nobody plays under: the server's refusal quotes it
        await wait_for(pilot, lambda: isinstance(app.screen, PlayerNameScreen), "the name dialog")
        app.screen.query_one("#player-name", Input).value = "[/]nobody"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PlayerCardScreen) and app.screen.loaded, "the refusal")
        await pilot.pause()
        assert drawn(app.screen.query_one("#card-title")) == "[/]nobody"
        assert drawn(app.screen.query_one("#card-recent")) == "'[/]nobody' has played no rated game"
        assert app.is_running
