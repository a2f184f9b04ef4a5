"""The TUI's clocks against the real server: presets in the form, clocks counting down, keys for takeback and
moretime shown only when allowed, and the flag when the server ends a game on time."""

from __future__ import annotations

import re

from textual.widgets import Select
from textual.widgets._footer import FooterKey

from gamenight.client import messages as ui
from gamenight.client.model import AI, ME, OPEN, describe_result
from gamenight.client.screens.create import TIME_PRESETS
from gamenight.client.screens.dialogs import ConfirmScreen
from gamenight.client.screens.game import GameScreen
from gamenight.client.screens.history import ReplayScreen
from gamenight.client.widgets.clock import ClockView, clock_table, format_ms
from gamenight.client.widgets.connect4 import Connect4Board
from gamenight.protocol.messages import Join, ListGames, MakeMove, TakebackDecline
from gamenight.protocol.vocab import Clock
from tests.client.conftest import create_room_via_form, mounted, wait_for
from tests.peer import Peer


def _clock_text(app, kind: type = GameScreen) -> str:
    """What the clock widget of the screen of `kind` shows now, as plain text (the times as text too: a tall
    terminal draws them in large digits)."""
    from rich.console import Console

    screen = next(s for s in app.screen_stack if isinstance(s, kind))
    view = screen.query_one(ClockView)
    console = Console(width=40, record=True)
    console.print(view.shown or "")
    return console.export_text() + " ".join(view.readings)


def test_clock_readings():
    """Hours, minutes and seconds above 10 s, tenths below, days and hours in correspondence."""
    assert format_ms(3_723_000) == "1:02:03"
    assert format_ms(299_400) == "4:59"
    assert format_ms(9_340) == "9.3"
    assert format_ms(-5) == "0.0"
    assert format_ms(2 * 86_400_000 + 3 * 3_600_000, correspondence=True) == "2d 03h"


def test_running_clock_counts_down_and_turns_red_under_ten_seconds():
    """The running seat's time falls with the time since the state arrived; under 10 s it is red; a flag shows."""
    clock = Clock(remaining_ms=(10_500, 60_000), running=0)
    table = clock_table(clock, ["black", "white"], 1000.0, None, 0)
    cells = [cell for column in table.columns for cell in column.cells]
    black_time, white_time = cells[2], cells[3]
    assert black_time.plain.strip() == "9.5" and "red" in str(black_time.style) and "reverse" in str(black_time.style)
    assert white_time.plain.strip() == "1:00" and "red" not in str(white_time.style)
    flagged = clock_table(Clock(remaining_ms=(0, 60_000)), ["black", "white"], 0.0, 0, None)
    assert [c.plain.strip() for c in flagged.columns[1].cells] == ["flag", "1:00"]


async def test_blitz_preset_game_against_a_friend(make_app, url):
    """The 5+3 preset fills the clock fields; both clocks show; m gives 15 s; u asks a takeback, shown only then."""
    bob = await Peer.connect(url, "bob")
    app = make_app("ann")
    async with app.run_test(size=(110, 40)) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("c")
        await wait_for(pilot, lambda: app.screen.query("#preset"), "the form with presets")
        app.screen.query_one("#game", Select).value = "connect4"
        await wait_for(
            pilot, lambda: app.screen.game.name == "connect4" and app.screen.query("#opt-clock_s"), "connect4"
        )
        await pilot.pause()
        app.screen.query_one("#preset", Select).value = 3
        await wait_for(pilot, lambda: app.screen._raw_values().get("clock_s") == 300, "the preset in the fields")
        assert TIME_PRESETS[3][0] == "5+3 blitz" and app.screen._raw_values()["increment_s"] == 3
        await pilot.press("escape")
        code = await create_room_via_form(app, pilot, "connect4", [ME, OPEN], {"clock_s": 300, "increment_s": 3})
        await bob.request(Join, room=code, seat=1)
        start = await bob.wait(lambda m: m.type == "state" and m.status == "playing" and m.clock is not None)
        await wait_for(pilot, lambda: app.model.room.status == "playing", "the game")
        await wait_for(pilot, lambda: app.screen.query_one(ClockView).display, "the clocks")
        assert re.search(r"\b[45]:\d\d\b", _clock_text(app))  # five minutes, counting down (however loaded)
        assert not app.screen.check_action("takeback", ()) and app.screen.check_action("moretime", ())
        app.post_message(ui.MoveChosen("d"))
        state = await bob.wait(lambda m: m.type == "state" and m.moves == ["d"])
        # the mover's thinking time by the server's clock; each state gives the clocks as they stood at its at_ms, and
        # on a loaded machine the first state can be stamped some ms after the clock started
        spent = state.clock.at_ms - start.clock.at_ms
        assert start.clock.remaining_ms[0] <= 300_000
        assert abs(state.clock.remaining_ms[0] - (start.clock.remaining_ms[0] - spent + 3_000)) <= 50  # increment back
        await pilot.press("m")
        more = await bob.expect("event", kind="moretime")
        assert more.data["to"] == [1]
        await wait_for(pilot, lambda: app.screen.check_action("takeback", ()), "the takeback key")
        await pilot.press("u")
        offer = await bob.expect("event", kind="takeback")
        assert offer.data == {"seat": 0, "action": "offer"}
        await bob.send(TakebackDecline(room=code))
        await wait_for(pilot, lambda: any("declines" in line.text for line in app.model.room.log), "the decline")
        await bob.send(MakeMove(room=code, move="c", seq=state.seq + 1))
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's turn again")
    await bob.close()


async def test_ai_accepts_a_takeback_from_the_keyboard(make_app):
    """Against the AI, u takes back the move and the AI's reply at once: the board is empty again."""
    app = make_app("ann")
    async with app.run_test(size=(110, 40)) as pilot:
        await create_room_via_form(app, pilot, "connect4", [ME, "ai:1"], {"clock_s": 120, "ai_pace_ms": 0, "ai_ms": 50})
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first turn")
        app.post_message(ui.MoveChosen("d"))
        await wait_for(pilot, lambda: len(app.model.room.state.moves) == 2 and app.model.room.my_turn, "the AI reply")
        await pilot.press("u")
        await wait_for(pilot, lambda: app.model.room.state.moves == [], "the takeback")
        assert app.model.room.my_turn and app.model.room.state.clock.remaining_ms[1] == 120_000


async def test_flag_shown_when_the_server_ends_the_game_on_time(make_app, url):
    """A player who lets 1 s run out sees "flag" on their clock and a game-over saying they ran out of time."""
    bob = await Peer.connect(url, "bob")
    app = make_app("ann")
    async with app.run_test(size=(110, 40)) as pilot:
        code = await create_room_via_form(app, pilot, "pentago", [ME, OPEN], {"clock_s": 1})
        await bob.request(Join, room=code, seat=1)
        await wait_for(pilot, lambda: app.model.room.status == "finished", "the flag")
        await wait_for(pilot, lambda: "flag" in _clock_text(app), "the flag on the clock")
        assert app.model.room.flagged() == 0
        room = app.model.room
        assert room.state.result.reason == "time" and "ran out of time" in describe_result(room.state.result, room)
        games = await bob.request(ListGames)
        app.post_message(ui.OpenReplay(games.games[0]["game_id"]))
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen), "the replay viewer")
        await pilot.press("end")
        await wait_for(pilot, lambda: "flag" in _clock_text(app, ReplayScreen), "the flag in the replay")
    await bob.close()


def _footer_keys(app) -> set[str]:
    """The keys the game screen's footer shows now."""
    return {key.key for key in app.screen.query(FooterKey)}


async def test_abort_key_before_your_own_first_move(make_app, url):
    """z is offered from the start, also to the player to move before their first move; confirmed, it aborts the
    game at once (no wait): no winner, and the key goes."""
    bob = await Peer.connect(url, "bob")
    app = make_app("ann")
    async with app.run_test(size=(110, 40)) as pilot:
        code = await create_room_via_form(app, pilot, "connect4", [OPEN, ME], {})
        await bob.request(Join, room=code, seat=0)
        await wait_for(pilot, lambda: app.model.room.status == "playing", "the game")
        await wait_for(pilot, lambda: "z" in _footer_keys(app), "the abort key while bob is to move")
        state = app.model.room.state
        await bob.send(MakeMove(room=code, move="d", seq=state.seq))
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's turn")
        await wait_for(pilot, lambda: "z" in _footer_keys(app), "the abort key before ann's first move")
        await pilot.press("z")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the confirmation")
        await pilot.click("#yes")
        await wait_for(pilot, lambda: app.model.room.status == "finished", "the end of the game")
        result = app.model.room.state.result
        assert result.reason == "aborted" and describe_result(result, app.model.room) == "Game aborted: no winner"
        await wait_for(pilot, lambda: "z" not in _footer_keys(app), "the abort key gone")
    await bob.close()


async def test_the_footer_offers_abort_exactly_in_the_opening(make_app):
    """Against the AI: z is in the footer until both sides have made two moves (the server's rule, counted from
    the moves as the server counts them), then gone; pressed then, it asks nothing."""
    app = make_app("ann")
    async with app.run_test(size=(110, 40)) as pilot:
        await create_room_via_form(app, pilot, "connect4", [ME, f"{AI}:1"], {"ai_pace_ms": 0, "ai_ms": 50})
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move")
        await mounted(app, pilot, Connect4Board)
        await wait_for(pilot, lambda: "z" in _footer_keys(app), "the abort key before any move")
        await pilot.press("4")
        await wait_for(pilot, lambda: len(app.model.room.state.moves) == 2 and app.model.room.my_turn, "the AI's reply")
        await pilot.pause()
        assert "z" in _footer_keys(app) and app.screen.check_action("abort", ())
        await pilot.press("3")
        await wait_for(pilot, lambda: len(app.model.room.state.moves) == 4 and app.model.room.my_turn, "the reply")
        await wait_for(pilot, lambda: "z" not in _footer_keys(app), "the abort key gone after two moves each")
        assert not app.screen.check_action("abort", ())
        await pilot.press("z")
        await pilot.pause()
        assert isinstance(app.screen, GameScreen) and app.model.room.status == "playing"


def test_replay_shows_each_seats_time_after_every_move():
    """A clocked record's replay gives every seat's time at each step: a pass (Othello) leaves the passer's alone."""
    from gamenight.client.replay import Replay

    record = {
        "game_id": 9,
        "game": "othello",
        "options": {"size": 8},
        "moves": ["d3", "c3", "e6"],
        "players": [
            {"seat": 0, "label": "black", "name": "ann", "ai": False},
            {"seat": 1, "label": "white", "name": "bob", "ai": False},
        ],
        "result": {"winner": 0, "winners": [0], "reason": "time", "loser": 1},
        "clock": {
            "initial_ms": 60000,
            "increment_ms": 2000,
            "days_per_move": 0,
            "move_ms": [1000, 5000, 3000],
            "seats": [0, 1, 1],
        },  # white moved twice: black had to pass
    }
    replay = Replay(record, [{"board": []}] * 4)
    assert replay.clock().remaining_ms == (60000, 60000) and replay.clock().running is None
    replay.go(1)
    assert replay.clock().remaining_ms == (61000, 60000)
    replay.go(3)
    assert replay.clock().remaining_ms == (61000, 60000 - 5000 + 2000 - 3000 + 2000)
    assert Replay({**record, "clock": None}, [{}]).clock() is None
