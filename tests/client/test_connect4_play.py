"""Pilot test: Connect Four from the TUI against the real server and its AI, by keys and by column letters."""

from __future__ import annotations

from gamenight.client.model import AI, ME
from gamenight.client.widgets.connect4 import Connect4Board
from tests.client.conftest import create_room_via_form, mounted, wait_for


async def test_connect4_against_the_ai_from_the_tui(make_app):
    """A player creates a Connect Four room against the AI in the form, drops with 4 (column d) and with the
    cursor keys, and the AI answers each disc on the real server."""
    app = make_app("ann")
    async with app.run_test(size=(100, 36)) as pilot:
        await create_room_via_form(app, pilot, "connect4", [ME, f"{AI}:3"], {"ai_pace_ms": 0, "ai_ms": 100})
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move")
        board = await mounted(app, pilot, Connect4Board)
        await pilot.press("4")
        await wait_for(pilot, lambda: len(app.model.room.state.moves) == 2, "the AI's answer")
        assert app.model.room.state.moves[0] == "d" and board.rows[5][3] == "R"
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's second move")
        board.focus()
        await pilot.press("left", "enter")  # the cursor starts on d: one column left is c
        await wait_for(pilot, lambda: len(app.model.room.state.moves) == 4, "the AI's second answer")
        assert app.model.room.state.moves[2] == "c"
