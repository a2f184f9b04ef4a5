"""Pilot test: Pentago moves with their quadrant turns, by keyboard and by mouse, previewed before they are sent."""

from __future__ import annotations

from gamenight.client.model import ME, OPEN
from gamenight.client.widgets.pentago import PentagoBoard
from gamenight.protocol.messages import Join, MakeMove
from tests.client.conftest import create_room_via_form, mounted, wait_for
from tests.peer import Peer


async def test_place_and_turn_by_keyboard(make_app, url):
    """Enter picks c3, 2 then ← pick an anticlockwise turn of the top-right quadrant, Enter sends it."""
    app = make_app("ann")
    async with app.run_test(size=(100, 36)) as pilot:
        code = await create_room_via_form(app, pilot, "pentago", [ME, OPEN])
        bob = await Peer.connect(url, "bob")
        await bob.request(Join, room=code, seat=1)
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move")
        board = await mounted(app, pilot, PentagoBoard)
        await pilot.press("enter", "2", "left")
        assert board.pending_move == "c3 tr ccw"
        rows, marked, turning = board.shown()
        assert rows[2][2] == "B" and marked == {(2, 2)} and turning == 1
        await pilot.press("escape")
        assert board.pending_move is None and board.chosen == (2, 2)
        await pilot.press("2", "left", "enter")
        state = await bob.expect("state", last_move="c3 tr ccw")
        assert state.view["board"][2][2] == "B"
        await wait_for(pilot, lambda: app.model.room.state.moves == ["c3 tr ccw"], "the move in ann's list")
        assert board.chosen is None and not board.position.can_move

        # Bob answers; ann plays by mouse: a square, a ↻ marker (preview), the same marker again (send).
        await bob.send(MakeMove(room=code, move=state.legal[0], seq=state.seq))
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's second move")
        target = next(m.split()[0] for m in board.position.legal if m.endswith(" br cw"))
        await pilot.click(PentagoBoard, offset=tuple(board.cell_center(target)))
        assert board.chosen is not None
        await pilot.click(PentagoBoard, offset=tuple(board.marker_center("br", "cw")))
        assert board.pending_move == f"{target} br cw"
        await pilot.click(PentagoBoard, offset=tuple(board.marker_center("br", "cw")))
        await bob.expect("state", last_move=f"{target} br cw")
        await bob.close()
