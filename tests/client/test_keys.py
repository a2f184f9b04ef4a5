"""Keys that tell the truth (issue 34): no board key shadows a screen key, the footer offers only what the server
takes (no takeback in a rated game, no move keys for spectators or after the end), and `?` opens the help.

Pilot tests of the real app against a real server on loopback, with scripted players (tests/peer.py).
"""

from __future__ import annotations

from textual.screen import Screen

from gamenight.client import messages as ui
from gamenight.client.model import AI, ME
from gamenight.client.screens.dialogs import ConfirmScreen, GameOverScreen, HelpScreen
from gamenight.client.screens.game import GameScreen
from gamenight.client.widgets.connect4 import Connect4Board
from gamenight.client.widgets.othello import OthelloBoard
from gamenight.protocol.messages import CreateRoom, Join
from gamenight.protocol.vocab import Role
from tests.client.conftest import create_room_via_form, mounted, wait_for
from tests.peer import Peer

SIZE = (120, 36)


def footer(screen: Screen[object]) -> set[str]:
    """The descriptions the footer shows now (the screen's active bindings it draws)."""
    return {active.binding.description for active in screen.active_bindings.values() if active.binding.show}


async def test_b_leaves_a_connect_four_game_instead_of_dropping_a_disc(make_app) -> None:
    """In Connect Four, with the board focused, `b` asks whether to leave (it drops no disc into column b); after
    the game `b` goes back to the lobby."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        await create_room_via_form(app, pilot, "connect4", [ME, f"{AI}:1"], {"ai_pace_ms": 0, "ai_ms": 100})
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move")
        board = await mounted(app, pilot, Connect4Board)
        game = app.screen
        assert board.has_focus
        await pilot.press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question whether to leave")
        assert app.model.room.state.moves == []
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is game, "back in the game")
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question whether to resign")
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, GameOverScreen), "the game over")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is game and board.has_focus, "the final board")
        await pilot.press("b")
        await wait_for(pilot, lambda: app.screen is app.lobby_screen, "the lobby")
        assert app.model.room is None


async def test_takeback_is_offered_only_where_the_server_takes_it(make_app) -> None:
    """After a move against the AI, `u Takeback` is in the footer of an unrated game and not in a rated one (the
    server refuses takebacks in rated games)."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        for rated in (False, True):
            options = {"ai_pace_ms": 0, "ai_ms": 100, "rated": rated}
            await create_room_via_form(app, pilot, "othello", [ME, f"{AI}:1"], options)
            game = app.screen
            board = await mounted(app, pilot, OthelloBoard)
            await wait_for(pilot, lambda b=board: app.model.room.my_turn and b.position.can_move, "ann's first move")
            await pilot.press("enter")
            await wait_for(pilot, lambda: len(app.model.room.state.moves) == 2, "the AI's answer")
            await wait_for(pilot, lambda: app.model.room.my_turn, "ann's second move")
            assert app.model.room.summary.options.get("rated") is rated
            assert ("Takeback" in footer(game)) is not rated
            app.post_message(ui.LeaveRoom())
            await wait_for(pilot, lambda: app.screen is app.lobby_screen and app.model.room is None, "the lobby")


async def test_move_keys_are_offered_only_to_players_of_a_running_game(make_app, url) -> None:
    """ "Play here" is in the footer on your turn but not once the game is over; a spectator of an Othello game gets
    no "Play here", and of a Tron game no "Steer"."""
    bob, cat = await Peer.connect(url, "bob"), await Peer.connect(url, "cat")
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("n", "enter")  # the quick menu opens on Play: Enter starts the game
        board = await mounted(app, pilot, OthelloBoard)
        game = app.screen
        await wait_for(pilot, lambda: board.position.can_move, "ann's first move")
        assert "Play here" in footer(game)
        app.post_message(ui.Resign())
        await wait_for(pilot, lambda: isinstance(app.screen, GameOverScreen), "the game over")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is game and board.position.status == "finished", "the final board")
        assert "Play here" not in footer(game)
        app.post_message(ui.LeaveRoom())
        await wait_for(pilot, lambda: app.screen is app.lobby_screen, "the lobby")

        for kind, move_key in (("othello", "Play here"), ("tron", "Steer")):
            info = await bob.request(CreateRoom, game=kind, options={})  # a Tron game ends soon: made just now
            await bob.request(Join, room=info.room, seat=0)
            await cat.request(Join, room=info.room, seat=1)
            app.post_message(ui.JoinRoom(info.room, Role.SPECTATOR))
            await wait_for(
                pilot,
                lambda: isinstance(app.screen, GameScreen) and app.screen.board and app.model.room.status == "playing",
                f"watching the {kind} game",
            )
            watching = app.screen
            await pilot.pause()
            assert move_key not in footer(watching) and "Lobby" in footer(watching)
            await pilot.press("b")
            await wait_for(pilot, lambda: app.screen is app.lobby_screen, "the lobby")
    await bob.close()
    await cat.close()


async def test_question_mark_opens_the_help(make_app) -> None:
    """`?` opens the help in the lobby and in a game (as F1 does), and closes it again."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help over the lobby")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen is app.lobby_screen, "the lobby again")
        await pilot.press("n", "enter")  # the quick menu opens on Play: Enter starts the game
        await mounted(app, pilot, OthelloBoard)
        game = app.screen
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help over the game")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is game, "the game again")
