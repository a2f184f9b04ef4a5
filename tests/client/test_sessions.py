"""Lasting sessions: quit gamenight (and its private server) mid-game, start it again, and be back in your seat."""

from __future__ import annotations

from pathlib import Path

from gamenight.client.app import GameNightApp
from gamenight.client.config import LOCAL_SERVER, remember_token, saved_token
from gamenight.client.local_server import LocalServer, server_command
from gamenight.client.screens.game import GameScreen
from gamenight.client.screens.lobby import LobbyScreen
from tests.client.conftest import wait_for

SIZE = (100, 36)


def _server(tmp_path: Path) -> LocalServer:
    """A private server child process on a database file that outlives it."""
    return LocalServer([*server_command(), "--db", str(tmp_path / "rooms.db")], log_path=tmp_path / "server.log")


async def test_reopening_gamenight_puts_you_back_in_your_seat(tmp_path):
    """Play a move against the AI, quit (the private server stops too), start again: the game screen opens
    by itself on the same room, same seat, same moves, and you can play on."""
    with _server(tmp_path) as server:
        app = GameNightApp(server.url, "ann", save_name=False, session_key=LOCAL_SERVER)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
            await pilot.press("n", "enter")  # the quick menu opens on Play: Enter starts the game
            await wait_for(
                pilot, lambda: app.model.room is not None and app.model.room.my_turn, "the game against the AI"
            )
            await pilot.press("enter")
            await wait_for(
                pilot, lambda: len(app.model.room.state.moves) >= 2 and app.model.room.my_turn, "the AI's answer"
            )
            code, moves = app.model.room.code, list(app.model.room.state.moves)
        token = saved_token(LOCAL_SERVER)
        assert token is not None

    with _server(tmp_path) as server:  # a new run: a new port, the same database
        again = GameNightApp(server.url, "ann", save_name=False, session_key=LOCAL_SERVER)
        async with again.run_test(size=SIZE) as pilot:
            await wait_for(
                pilot,
                lambda: isinstance(again.screen, GameScreen) and again.model.room.state is not None,
                "the game screen, opened by itself",
            )
            room = again.model.room
            assert room.code == code and room.seat == 0 and room.playing
            assert list(room.state.moves) == moves
            await wait_for(pilot, lambda: room.my_turn, "ann's turn again")
            await pilot.press("enter")
            await wait_for(pilot, lambda: len(room.state.moves) >= len(moves) + 1, "a move after the restart")
        assert saved_token(LOCAL_SERVER) == token  # the same session, so the same token


async def test_a_stale_saved_token_is_replaced_by_a_fresh_session(tmp_path):
    """A saved token the server does not know is dropped: the lobby opens and the new token is saved
    (under "local" only: another server's token is neither sent nor touched)."""
    remember_token(LOCAL_SERVER, "token-of-a-forgotten-server")
    remember_token("ws://friend.example:8765", "friends-token")
    with _server(tmp_path) as server:
        app = GameNightApp(server.url, "ann", save_name=False, session_key=LOCAL_SERVER)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
            assert isinstance(app.screen, LobbyScreen) and app.model.room is None
            assert app.connection is not None and not app.connection.resumed
            assert saved_token(LOCAL_SERVER) == app.connection.token != "token-of-a-forgotten-server"
    assert saved_token("ws://friend.example:8765") == "friends-token"
