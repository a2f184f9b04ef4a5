"""Typed moves and the premove: the move line (/) plays Othello, Pentago and Connect Four moves as the move list
writes them, completes a prefix, refuses a text that is no move without sending it, and queues one move for your
next turn."""

from __future__ import annotations

from textual.widgets import Input, Static

from gamenight.client.model import ME, OPEN
from gamenight.client.typed import read_move
from gamenight.client.widgets.connect4 import Connect4Board
from gamenight.client.widgets.othello import OthelloBoard
from gamenight.client.widgets.othello import move_syntax as othello_syntax
from gamenight.client.widgets.pentago import PentagoBoard
from gamenight.protocol.messages import Join, MakeMove
from tests.client.conftest import create_room_via_form, mounted, wait_for
from tests.peer import Peer

SIZE = (110, 36)


def sent_moves(app) -> list[str]:
    """Record the moves the app sends from now on (the list fills as it sends)."""
    moves: list[str] = []
    send = app._send

    def spy(msg):
        if isinstance(msg, MakeMove):
            moves.append(msg.move)
        return send(msg)

    app._send = spy
    return moves


def hint(app) -> str:
    """The line under the move line."""
    return str(app.screen.query_one("#move-hint", Static).render())


def noticed(app, *words: str) -> bool:
    """True when a notification shown contains every one of `words`."""
    return any(all(w in n.message for w in words) for n in app._notifications)


async def test_typed_othello_move_and_refused_text(make_app, url):
    """Typing f5-style moves plays them; a square off the board or a taken one is refused with the reason, unsent."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        code = await create_room_via_form(app, pilot, "othello", [ME, OPEN])
        bob = await Peer.connect(url, "bob")
        await bob.request(Join, room=code, seat=1)
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move")
        board = await mounted(app, pilot, OthelloBoard)
        sent = sent_moves(app)
        await pilot.press("slash")
        assert app.screen.query_one("#move-line", Input).has_focus
        for key in "z9":
            await pilot.press(key)
        await pilot.press("enter")
        await wait_for(pilot, lambda: noticed(app, "z9 is not a square of this board (a1 to h8)"), "the reason")
        await pilot.press("ctrl+a", "ctrl+k", "d", "4", "enter")  # d4 holds a disc at the start
        await wait_for(pilot, lambda: noticed(app, "d4 is taken"), "the taken square's reason")
        assert sent == []
        target = board.position.legal[0]
        await pilot.press("ctrl+a", "ctrl+k", *target.upper(), "enter")
        await bob.expect("state", last_move=target)
        assert sent == [target]
        await bob.close()


async def test_typed_pentago_move_completes_and_lists_turns(make_app, url):
    """Typing a Pentago square lists its eight turns (nothing is sent); adding the turn, in any case, plays it."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        code = await create_room_via_form(app, pilot, "pentago", [ME, OPEN])
        bob = await Peer.connect(url, "bob")
        await bob.request(Join, room=code, seat=1)
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move")
        await mounted(app, pilot, PentagoBoard)
        sent = sent_moves(app)
        await pilot.press("slash", "c", "3")
        await wait_for(pilot, lambda: hint(app).startswith("8 moves: c3 tl cw"), "the eight completions")
        await pilot.press("enter")
        assert sent == [] and noticed(app, "c3 could be 8 moves")
        await pilot.press("space", "T", "R", "space", "c", "c")
        await wait_for(pilot, lambda: hint(app) == "Enter plays c3 tr ccw", "the one completion")
        await pilot.press("enter")
        await bob.expect("state", last_move="c3 tr ccw")
        assert sent == ["c3 tr ccw"]
        await pilot.press("c", "3", "space", "x", "enter")  # the move line keeps the focus
        await wait_for(pilot, lambda: noticed(app, "c3 x is not a move"), "the form's reason")
        assert sent == ["c3 tr ccw"]
        await bob.close()


async def test_premove_is_sent_on_your_turn_and_esc_cancels_it(make_app, url):
    """A Connect Four move typed on the opponent's turn is drawn on the board and sent when the turn comes; Esc
    cancels one, and nothing is sent then."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        code = await create_room_via_form(app, pilot, "connect4", [ME, OPEN])
        bob = await Peer.connect(url, "bob")
        await bob.request(Join, room=code, seat=1)
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move")
        board = await mounted(app, pilot, Connect4Board)
        sent = sent_moves(app)
        await pilot.press("slash", "d", "enter")
        first = await bob.expect("state", last_move="d")
        await wait_for(pilot, lambda: not app.model.room.my_turn, "bob's turn in ann's view")
        await pilot.press("c", "enter")  # the move line keeps the focus
        await wait_for(pilot, lambda: board.position.premove == "c", "the premove on the board")
        assert "Premove c" in hint(app) and sent == ["d"]
        await bob.send(MakeMove(room=code, move="a", seq=first.seq))
        await bob.expect("state", last_move="c")
        assert sent == ["d", "c"]
        await wait_for(pilot, lambda: board.position.premove is None, "the premove gone from the board")

        # A premove cancelled with Esc is not sent: the turn comes and waits for ann.
        await wait_for(pilot, lambda: not app.model.room.my_turn, "bob's second turn in ann's view")
        await pilot.press("e", "enter")
        await wait_for(pilot, lambda: board.position.premove == "e", "the second premove")
        await pilot.press("escape")
        await wait_for(pilot, lambda: board.position.premove is None and noticed(app, "Premove cancelled"), "Esc")
        seq = app.model.room.seq
        await bob.send(MakeMove(room=code, move="a", seq=seq))
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's third turn")
        await pilot.pause(0.2)
        assert sent == ["d", "c"]
        await bob.close()


async def test_premove_clicked_then_dropped_when_not_legal(make_app, url):
    """An Othello square clicked on the opponent's turn is queued; taken by the opponent's move, it is dropped
    with a note, never sent."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        code = await create_room_via_form(app, pilot, "othello", [ME, OPEN])
        bob = await Peer.connect(url, "bob")
        await bob.request(Join, room=code, seat=1)
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move")
        board = await mounted(app, pilot, OthelloBoard)
        await wait_for(pilot, lambda: board.position.legal, "the board drawing ann's legal squares")
        sent = sent_moves(app)
        first = board.position.legal[0]  # the cursor starts there
        await pilot.press("enter")
        played = await bob.expect("state", last_move=first)
        await wait_for(pilot, lambda: not app.model.room.my_turn, "bob's turn in ann's view")
        answer = played.legal[0]
        await pilot.click(OthelloBoard, offset=tuple(board.cell_center(answer)))
        await wait_for(pilot, lambda: board.position.premove == answer, "the clicked premove")
        await bob.send(MakeMove(room=code, move=answer, seq=played.seq))
        await wait_for(pilot, lambda: noticed(app, f"Premove {answer} dropped"), "the dropped premove's note")
        assert len(sent) == 1 and board.position.premove is None
        await bob.close()


def test_reading_a_typed_move():
    """The move line reads moves case- and space-blind, completes a unique prefix and says why a text is no move."""
    legal = ["c3 tl cw", "c3 tl ccw", "c3 tr cw", "c3 tr ccw", "d4"]
    assert read_move("  C3   TR  CCW ", legal, {}).move == "c3 tr ccw"
    assert read_move("c3 tr", legal, {}).candidates == ("c3 tr cw", "c3 tr ccw")
    assert read_move("d", legal, {}).move == "d4"
    view = {"board": ["." * 8] * 3 + ["...WB..."] + ["." * 8] * 4}
    assert read_move("d4", ["c4"], view, othello_syntax).problem == "d4 is taken"
    assert read_move("i1", ["c4"], view, othello_syntax).problem == "i1 is not a square of this board (a1 to h8)"
    assert read_move("a1", ["c4"], view, othello_syntax).problem == "a1 is not a legal move now"
