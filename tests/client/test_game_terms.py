"""The game screen's terms at a glance: time control and rated or casual over the clocks, each player's rating in a
rated room, and the rating change in the game-over dialog."""

from __future__ import annotations

from rich.console import Console
from textual.widgets import Static

from gamenight.client.messages import MoveChosen
from gamenight.client.model import ME, OPEN
from gamenight.client.screens.dialogs import ConfirmScreen, GameOverScreen
from gamenight.client.widgets.clock import clock_table
from gamenight.client.widgets.panel import time_control
from gamenight.protocol.messages import Join, MakeMove
from gamenight.protocol.vocab import Clock
from tests.client.conftest import create_room_via_form, wait_for
from tests.peer import Peer

SIZE = (110, 40)


def drawn(app, selector: str) -> str:
    """What a Static of the screen shows (a table too), as plain text at the widget's width."""
    widget = app.screen.query_one(selector, Static)
    console = Console(width=widget.content_size.width, color_system=None, legacy_windows=False)
    with console.capture() as captured:
        console.print(widget.content)
    return captured.get().strip()


async def test_rated_game_shows_terms_ratings_and_the_rating_change(make_app, url):
    """A rated 5+3 Connect Four game reads "5+3 · Rated", shows both players' ratings beside their names, and its
    game-over dialog gives each player's rating change."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        options = {"rated": True, "clock_s": 300, "increment_s": 3}
        code = await create_room_via_form(app, pilot, "connect4", [ME, OPEN], options)
        bob = await Peer.connect(url, "bob", key="bob-key-0123456789abcdef")
        await bob.request(Join, room=code, seat=1)
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move")
        assert drawn(app, "#terms") == "5+3 · Rated"
        await wait_for(pilot, lambda: set(app.model.room.ratings) == {"ann", "bob"}, "both players' ratings")
        await pilot.pause()
        players = drawn(app, "#players")
        assert f"ann {app.model.room.ratings['ann']} (you)" in players
        assert f"bob {app.model.room.ratings['bob']}" in players
        for _ in range(2):  # two moves a side: past the opening, the game is rated
            app.post_message(MoveChosen("d"))
            played = await bob.wait(lambda m: m.type == "state" and m.to_move == [1])
            await bob.send(MakeMove(room=code, move="a", seq=played.seq))
            # ann's own move's state may reach her after bob's answer was sent: her turn again is a later seq
            await wait_for(
                pilot, lambda seq=played.seq: app.model.room.my_turn and app.model.room.seq > seq, "ann's turn again"
            )
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the resign question")
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, GameOverScreen), "the game-over dialog")
        assert "ann " in app.screen.detail and " → " in app.screen.detail and "bob " in app.screen.detail
        await bob.close()


def test_time_controls_read_as_players_say_them():
    """Time controls read "5+3", "30s+0", "2 days a move" and "no clock"."""
    assert time_control({"clock_s": 300, "increment_s": 3}) == "5+3"
    assert time_control({"clock_s": 30}) == "30s+0"
    assert time_control({"days_per_move": 2}) == "2 days a move"
    assert time_control({}) == "no clock"


def test_a_tall_terminal_draws_the_clocks_in_large_digits():
    """On a tall terminal each time is drawn in three-line digits under its player; a flag stays a word."""
    clock = Clock(remaining_ms=(299_000, 61_000), running=0)
    console = Console(width=32, color_system=None, legacy_windows=False)
    with console.capture() as captured:
        console.print(clock_table(clock, ["black", "white"], 0.0, None, 0, big=True))
    lines = captured.get().splitlines()
    assert lines[0].startswith("black (you)") and "4:59" not in captured.get()
    digits = "".join(lines[1:4])  # a label line and three lines of digits per seat
    assert len(lines) == 8 and digits.strip() and not any(ch.isdigit() for ch in digits)
    with console.capture() as captured:
        console.print(clock_table(clock, ["black", "white"], 0.0, 1, 0, big=True))
    assert "flag" in captured.get()
