"""Screens that were wrong or stale (issue 34, found by a new user at 120x40 and 80x24): each test drives the real
app with its Pilot against a real server on loopback and reads what the screen shows."""

from __future__ import annotations

import re

from rich.console import Console
from textual.widget import Widget
from textual.widgets import DataTable, RichLog, Select, Static
from textual.widgets._select import SelectCurrent

from gamenight.client.app import GameNightApp
from gamenight.client.model import AI, BOT, ME, OPEN
from gamenight.client.screens.challenge import ChallengeScreen
from gamenight.client.screens.dialogs import ConfirmScreen, GameOverScreen
from gamenight.client.screens.game import GameScreen
from gamenight.client.screens.tournaments import TournamentScreen, TournamentsScreen
from gamenight.client.widgets.connect4 import Connect4Board
from gamenight.client.widgets.tron import TronArena
from gamenight.protocol.messages import AddAi as AddAiRequest
from gamenight.protocol.messages import CreateRoom, Join, Leave, Resign
from tests.client.conftest import create_room_via_form, mounted, wait_for
from tests.client.test_leaderboard_tournaments import host_from_lobby
from tests.peer import Peer

SIZE = (120, 40)
BOT_KEY = "rhino-key-" + "k" * 20


def drawn(widget: Widget) -> str:
    """The text a widget shows now (a selector: the choice it shows), as the user reads it."""
    if isinstance(widget, Select):
        widget = widget.query_one(SelectCurrent).query_one("#label", Static)
    return str(widget.render()).strip()


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


async def test_the_challenge_form_names_the_seats_of_the_game_chosen(url) -> None:
    """Switching the challenge form from Connect Four to Othello shows "Your seat: black", not Connect Four's "red"."""
    rhino = await Peer.connect(url, "rhino", key=BOT_KEY, bot=True, accepts=["connect4", "othello"])
    app = GameNightApp(url, "ann", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "rhino" in app.model.presence.players, "rhino in the online list")
        table = app.screen.query_one("#players", DataTable)
        await wait_for(pilot, lambda: table.row_count == 1, "the online list drawn")
        table.focus()
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, ChallengeScreen), "the challenge form")
        form = app.screen
        seat = form.query_one("#seat", Select)
        await wait_for(pilot, lambda: drawn(seat) == "red", "Connect Four's first seat")
        form.query_one("#game", Select).value = "othello"
        await wait_for(pilot, lambda: form.query("#opt-size"), "Othello's option fields")
        await pilot.pause()
        assert drawn(seat) == "black"
        assert [str(prompt) for prompt, _ in seat._options] == ["black", "white", "random"]
    await rhino.close()


def noticed(app: GameNightApp, *words: str) -> bool:
    """True when a notification shown contains every one of `words`."""
    return any(all(w in n.message for w in words) for n in app._notifications)


async def test_relaunching_after_a_finished_game_opens_the_lobby(url) -> None:
    """Quit gamenight on a finished game's result and start it again: the lobby shows (the finished room is left,
    with a notice saying so), not the finished game's screen."""
    app = GameNightApp(url, "ann", save_name=False, session_key="test-server")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("n", "enter")  # the quick menu opens on Play: Enter starts the game
        await wait_for(pilot, lambda: app.model.room is not None and app.model.room.my_turn, "the game against the AI")
        code = app.model.room.code
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question whether to resign")
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, GameOverScreen), "the game over")
    again = GameNightApp(url, "ann", save_name=False, session_key="test-server")
    async with again.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: noticed(again, f"Your game in room {code} had ended"), "the notice")
        await pilot.pause()
        assert again.model.room is None and again.screen is again.lobby_screen
        assert not any(isinstance(s, GameScreen) for s in again.screen_stack)
        assert again.connection is not None and again.connection.resumed


async def test_a_click_on_a_finished_connect_four_board_says_the_game_is_over(make_app) -> None:
    """After the game, a click on the Connect Four board says "The game is over", not "It is not your move"."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        await create_room_via_form(app, pilot, "connect4", [ME, f"{AI}:1"], {"ai_pace_ms": 0, "ai_ms": 100})
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move")
        board = await mounted(app, pilot, Connect4Board)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question whether to resign")
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, GameOverScreen), "the game over")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, GameScreen), "the final board")
        await pilot.click(Connect4Board, offset=tuple(board.column_center("d")))
        await wait_for(pilot, lambda: noticed(app, "The game is over"), "the notice")
        assert not noticed(app, "It is not your move")


async def test_the_live_tron_panel_counts_the_ticks(make_app) -> None:
    """During a Tron game the side panel's list is headed "Ticks" and follows the tick the riders are at (it
    stayed "no moves yet"), and says where the riders' moves are."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        options = {"width": 16, "height": 12, "tick_ms": 200, "countdown_ms": 500}
        await create_room_via_form(app, pilot, "tron", [ME, f"{BOT}:floodfill"], options)
        # The game screen, wherever it is in the stack: a rider riding straight may crash within a few ticks, and
        # on a loaded machine the game-over dialog can be on top of it before the test looks.
        await wait_for(pilot, lambda: game_screens(app), "the game screen")
        game = game_screens(app)[0]
        await wait_for(pilot, lambda: game.query(TronArena), "the arena mounted")
        moves = game.query_one("#moves", Static)
        # Whatever tick the game reaches (it need not last), the panel names it once the riders have moved.
        await wait_for(pilot, lambda: re.search(r"\btick [1-9]", drawn(moves)), "a tick named in the panel")
        assert drawn(game.query_one("#moves-heading")) == "Ticks"
        assert "a replay (h in the lobby) steps through them" in drawn(moves)


def game_screens(app: GameNightApp) -> list[GameScreen]:
    """The game screens in the app's stack (under any dialog)."""
    return [screen for screen in app.screen_stack if isinstance(screen, GameScreen)]


def lines_of(widget: Static) -> list[str]:
    """The lines a Static's renderable (a table, say) takes at the widget's own width, as plain text."""
    console = Console(width=widget.content_size.width, color_system=None, legacy_windows=False)
    with console.capture() as captured:
        console.print(widget.content)
    return captured.get().splitlines()


async def test_you_is_never_cut_from_the_side_panel_at_120_columns(make_app) -> None:
    """At 120x40 a longer name in the side panel is cut, but "(you)" after it shows whole (it read "(y…")."""
    app = make_app("maximilian_92")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("n", "enter")  # the quick menu opens on Play: Enter starts the game
        await wait_for(pilot, lambda: app.model.room is not None and app.model.room.my_turn, "the game against the AI")
        players = app.screen.query_one("#players", Static)
        await wait_for(pilot, lambda: len(lines_of(players)) == 2, "both seats drawn")
        mine = lines_of(players)[0]
        assert "black: maximil" in mine and "… (you) 2 ◀" in mine, mine


async def test_the_ai_figures_say_a_forced_win_instead_of_a_raw_score(make_app) -> None:
    """Stacking discs in one column against the AI: its figures never show an engine score such as "+999547";
    once its search proves the win they say "sees a forced win"."""
    app = make_app("ann")
    shown: set[str] = set()
    async with app.run_test(size=SIZE) as pilot:
        await create_room_via_form(app, pilot, "connect4", [ME, f"{AI}:3"], {"ai_pace_ms": 0, "ai_ms": 200})
        await mounted(app, pilot, Connect4Board)
        room = app.model.room
        figures = app.screen.query_one("#ai-info", Static)
        while room.status == "playing":
            await wait_for(pilot, lambda: room.my_turn or room.status != "playing", "ann's turn or the end")
            shown.add(drawn(figures))
            if room.my_turn:
                moves = len(room.state.moves)
                await pilot.press("1" if "a" in room.state.legal else "2")
                await wait_for(pilot, lambda before=moves: len(room.state.moves) > before, "ann's disc")
        shown.add(drawn(figures))
    assert tuple(room.state.result.winners) == (1,)
    assert any("yellow AI:" in text and "sees a forced win" in text for text in shown), shown
    assert not any("score" in text for text in shown), shown


def log_text(app: GameNightApp) -> str:
    """Everything the room's log shows."""
    return "\n".join(line.text for line in app.screen.query_one("#log", RichLog).lines)


async def test_the_log_says_which_colour_a_player_sits_down_as(make_app, url) -> None:
    """Joining bob's private Othello room by its code, ann's log says "ann sits down as white" (it said "seat 2":
    a private room is not in the lobby, so its seats' colours come from the game's description)."""
    bob = await Peer.connect(url, "bob")
    info = await bob.request(CreateRoom, game="othello", options={}, private=True)
    await bob.request(Join, room=info.room, seat=0)
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        assert info.room not in app.model.lobby.rooms
        await pilot.press("o")
        await pilot.press(*info.room, "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, GameScreen) and "ann" in log_text(app), "ann in the log")
        assert "ann sits down as white" in log_text(app), log_text(app)
    await bob.close()


async def test_the_result_names_a_player_who_resigned_and_left(make_app, url) -> None:
    """bob resigns ann's game and leaves the room: ann's status line still reads "white (bob) resigned"."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        code = await create_room_via_form(app, pilot, "othello", [ME, OPEN])
        bob = await Peer.connect(url, "bob")
        await bob.request(Join, room=code)
        await wait_for(pilot, lambda: app.model.room.status == "playing", "the game")
        await bob.send(Resign(room=code))
        await wait_for(pilot, lambda: isinstance(app.screen, GameOverScreen), "the game over")
        await pilot.press("escape")
        await bob.request(Leave, room=code)
        await wait_for(pilot, lambda: app.model.room.summary.seats[1].open, "bob's seat open")
        await pilot.pause()
        status = drawn(app.screen.query_one("#status", Static))
        assert status == "white (bob) resigned; black (you) wins", status
        await bob.close()


async def test_the_rematch_notice_shows_only_while_it_waits_for_someone(make_app, url) -> None:
    """Against the AI the rematch starts at once and no "it starts when every player agrees" toast follows it; with
    bob in the room the toast says the rematch waits for bob."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("n", "enter")  # the quick menu opens on Play: Enter starts the game
        await wait_for(pilot, lambda: app.model.room is not None and app.model.room.my_turn, "the game against the AI")
        room = app.model.room
        await pilot.press("x", "y")
        await wait_for(pilot, lambda: isinstance(app.screen, GameOverScreen), "the game over")
        await pilot.press("r")
        await wait_for(pilot, lambda: room.games_started == 2 and room.status == "playing", "the rematch")
        await pilot.pause(0.2)
        assert not noticed(app, "Rematch asked for")
        await pilot.press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question whether to leave")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.screen is app.lobby_screen, "the lobby")

        code = await create_room_via_form(app, pilot, "othello", [ME, OPEN])
        bob = await Peer.connect(url, "bob")
        await bob.request(Join, room=code)
        await wait_for(pilot, lambda: app.model.room.status == "playing", "the game with bob")
        await bob.send(Resign(room=code))
        await wait_for(pilot, lambda: isinstance(app.screen, GameOverScreen), "the game over")
        await pilot.press("r")
        await wait_for(pilot, lambda: noticed(app, "Rematch asked for; it starts when bob agrees"), "the notice")
        await bob.close()


async def test_the_lobby_names_games_by_title_and_does_not_count_finished_rooms_as_open(url) -> None:
    """The online list says which games a bot takes by their titles ("Connect Four, Othello", not "connect4, othello"),
    and a finished room still listed is counted as finished, not as open."""
    bob = await Peer.connect(url, "bob")
    info = await bob.request(CreateRoom, game="othello", options={})
    await bob.request(Join, room=info.room, seat=0)
    await bob.request(AddAiRequest, room=info.room, level=1)
    await bob.expect("state", room=info.room)
    await bob.send(Resign(room=info.room))
    await bob.expect("event", kind="game_over")
    rhino = await Peer.connect(url, "rhino", key=BOT_KEY, bot=True, accepts=["connect4", "othello"])
    app = GameNightApp(url, "ann", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one("#players", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, "bob and rhino in the online list")
        assert str(table.get_cell("rhino", "takes")) == "Connect Four, Othello"
        rooms = app.screen.query_one("#rooms", DataTable)
        await wait_for(pilot, lambda: rooms.row_count == 1, "bob's room in the lobby")
        intro = drawn(app.screen.query_one("#lobby-intro", Static))
        assert "0 room(s) open, 1 finished" in intro, intro
    await rhino.close()
    await bob.close()


async def question(app: GameNightApp, pilot) -> str:
    """`b` in a running game: the confirmation's question, then `n` to stay."""
    game = app.screen
    await pilot.press("b")
    await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question whether to leave")
    text = drawn(app.screen.query_one(".dialog-title", Static))
    await pilot.press("n")
    await wait_for(pilot, lambda: app.screen is game, "back in the game")
    return text


async def test_leaving_a_rated_game_in_its_opening_says_it_aborts_it(make_app) -> None:
    """In a rated game's opening, the leave confirmation says leaving aborts the game (it said "Leaving resigns the
    game"); in an unrated game it says leaving resigns."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        for rated in (True, False):
            options = {"ai_pace_ms": 0, "ai_ms": 100, "rated": rated}
            await create_room_via_form(app, pilot, "connect4", [ME, f"{AI}:1"], options)
            await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move")
            await mounted(app, pilot, Connect4Board)
            text = await question(app, pilot)
            if rated:
                assert text.startswith("Leaving aborts this rated game: it is in its opening"), text
            else:
                assert text == "Leaving resigns the game. Leave?", text
            await pilot.press("b", "y")
            await wait_for(pilot, lambda: app.screen is app.lobby_screen and app.model.room is None, "the lobby")
