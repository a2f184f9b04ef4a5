"""Pilot tests: the client plays Othello through the real server, by keyboard and mouse, against a peer and the AI."""

from __future__ import annotations

from textual.widgets import Static

from gamenight.client.model import ME, OPEN
from gamenight.client.screens.dialogs import ConfirmScreen, GameOverScreen
from gamenight.client.widgets.othello import OthelloBoard
from gamenight.protocol.messages import CreateRoom, Join, MakeMove, Rematch
from tests.client.conftest import create_room_via_form, mounted, wait_for
from tests.peer import Peer

SIZE = (100, 36)


async def _open_room_for_two(app, pilot) -> str:
    """From the lobby: create an Othello room with me in seat 1 and seat 2 open; returns its code."""
    return await create_room_via_form(app, pilot, "othello", [ME, OPEN])


async def _seat_opponent(url: str, code: str) -> Peer:
    """A scripted second player takes the open seat (white), which starts the game."""
    bob = await Peer.connect(url, "bob")
    await bob.request(Join, room=code, seat=1)
    return bob


def _moves_shown(app) -> str:
    """The move list as the side panel shows it."""
    return str(app.screen.query_one("#moves", Static).render())


async def test_play_by_keys_and_mouse_then_resign_and_rematch(make_app, url):
    """A whole session: create a room, move by Enter and by click, see the list grow, resign, rematch."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        code = await _open_room_for_two(app, pilot)
        bob = await _seat_opponent(url, code)
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move")
        board = await mounted(app, pilot, OthelloBoard)
        assert board.has_focus
        await wait_for(pilot, lambda: board.position.legal, "the board drawing ann's legal squares")

        # Keyboard: the cursor starts on a legal square; moving it right and back keeps it legal.
        first = board.position.legal[0]
        await pilot.press("right", "left", "enter")
        played = await bob.expect("state", last_move=first)
        await wait_for(pilot, lambda: app.model.room.seq == played.seq, "ann's view of her move")
        assert "1. " + first in _moves_shown(app)

        await bob.send(MakeMove(room=code, move=played.legal[0], seq=played.seq))
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's second move")

        # Mouse: click the last legal square.
        target = app.model.room.state.legal[-1]
        await pilot.click(OthelloBoard, offset=tuple(board.cell_center(target)))
        clicked = await bob.expect("state", last_move=target)
        await wait_for(pilot, lambda: app.model.room.seq == clicked.seq, "the clicked move")
        assert "3. " + target in _moves_shown(app)
        assert board.position.last_move == target

        # Resign with confirmation: the result dialog says who won and why.
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the resign question")
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, GameOverScreen), "the game-over dialog")
        assert app.screen.headline == "You lost"
        assert "resigned" in app.screen.detail and "white (bob) wins" in app.screen.detail

        # Rematch from the dialog; once bob agrees the seats rotate and ann plays white.
        await pilot.press("r")
        await bob.expect("event", kind="rematch")
        await bob.send(Rematch(room=code))
        await wait_for(
            pilot, lambda: app.model.room.status == "playing" and app.model.room.games_started == 2, "the rematch"
        )
        await wait_for(pilot, lambda: app.model.room.seat == 1, "ann's new seat")
        assert not app.model.room.my_turn
        assert "black (bob) to move" in str(app.screen.query_one("#status", Static).render())
        await bob.close()


async def test_new_game_against_the_ai_in_two_keys(make_app):
    """`n` in the lobby starts Othello against the AI; the AI answers and its search figures are shown."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("n", "enter")  # the quick menu opens on Play: Enter starts the game
        await wait_for(pilot, lambda: app.model.room is not None and app.model.room.my_turn, "the game against the AI")
        summary = app.model.room.summary
        assert summary is not None and summary.seats[1].kind == "ai"
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: len(app.model.room.state.moves) >= 2 and app.model.room.my_turn, "the AI's answer"
        )
        assert app.model.room.last_ai_seat == 1 and "fallback" not in app.model.room.ai_info[1]
        shown = str(app.screen.query_one("#ai-info", Static).render())
        assert shown.startswith("white AI:") and "nodes" in shown


async def test_spectator_sees_moves_but_cannot_play(make_app, url):
    """Watching a room shows its moves; the board offers no moves and Enter sends nothing."""
    alice = await Peer.connect(url, "alice")
    bob = await Peer.connect(url, "bob")
    info = await alice.request(CreateRoom, game="othello", options={})
    await alice.request(Join, room=info.room, seat=0)
    await bob.request(Join, room=info.room, seat=1)
    start = await alice.expect("state")
    app = make_app("carol")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: info.room in app.model.lobby.rooms, "the room in the lobby")
        await pilot.press("s")
        await wait_for(
            pilot, lambda: app.model.room is not None and app.model.room.state is not None, "the watched game"
        )
        assert app.model.room.role == "spectator"
        board = await mounted(app, pilot, OthelloBoard)
        assert not board.position.can_move and board.position.legal == ()
        await pilot.press("enter")
        await alice.send(MakeMove(room=info.room, move=start.legal[0], seq=start.seq))
        await wait_for(pilot, lambda: app.model.room.state.moves == [start.legal[0]], "the watched move")
        assert "watching" in app.screen.title
    await alice.close()
    await bob.close()
