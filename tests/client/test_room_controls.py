"""Pilot tests of the room's other controls against the real server: joining from the lobby, chat, seating an AI
(help and resizing run on a scripted connection in test_flows.py)."""

from __future__ import annotations

from textual.widgets import RichLog

from gamenight.client.model import ME, OPEN
from gamenight.client.widgets.othello import OthelloBoard
from gamenight.protocol.messages import Chat, CreateRoom, Join
from tests.client.conftest import create_room_via_form, noticed, wait_for
from tests.peer import Peer


def _log_text(app) -> str:
    """Everything the room's log shows."""
    return "\n".join(line.text for line in app.screen.query_one("#log", RichLog).lines)


async def test_join_from_the_lobby_and_chat(make_app, url):
    """Enter on a lobby row takes its free seat; chat lines travel both ways and show in the log."""
    bob = await Peer.connect(url, "bob")
    info = await bob.request(CreateRoom, game="othello", options={})
    await bob.request(Join, room=info.room, seat=0)
    app = make_app("ann")
    async with app.run_test(size=(100, 36)) as pilot:
        await wait_for(pilot, lambda: info.room in app.model.lobby.rooms, "bob's room in the lobby")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.model.room is not None and app.model.room.status == "playing", "the game")
        assert app.model.room.seat == 1 and not app.model.room.my_turn
        await pilot.press("t", *"good luck", "enter")
        heard = await bob.expect("event", kind="chat")
        assert heard.data["text"] == "good luck" and heard.data["name"] == "ann"
        await bob.send(Chat(room=info.room, text="thanks"))
        await wait_for(pilot, lambda: "bob: thanks" in _log_text(app), "bob's line in the log")
        await pilot.press("escape")
        assert app.screen.query_one(OthelloBoard).has_focus
    await bob.close()


async def test_host_seats_an_ai_with_plus(make_app):
    """In a waiting room the host's + seats an AI in the open seat, which starts the game."""
    app = make_app("ann")
    async with app.run_test(size=(100, 36)) as pilot:
        await create_room_via_form(app, pilot, "othello", [ME, OPEN])
        assert app.model.room.host and app.screen.check_action("add_ai", ())
        await pilot.press("plus")
        await wait_for(pilot, lambda: app.model.room.status == "playing", "the game with the AI")
        assert app.model.room.summary.seats[1].kind == "ai"
        assert not app.screen.check_action("add_ai", ()) and not app.screen.check_action("remove_ai", ())


async def test_y_copies_a_waiting_rooms_code_for_a_friend(make_app, url):
    """In a room waiting for a player, `y` (shown in the footer) puts the room's code on the clipboard and shows it
    in a toast; once the seats are full the key is gone."""
    app = make_app("ann")
    async with app.run_test(size=(110, 36)) as pilot:
        code = await create_room_via_form(app, pilot, "othello", [ME, OPEN])
        game = app.screen
        await wait_for(pilot, lambda: game.check_action("copy_code", ()), "the copy key")
        assert "Copy code" in {a.binding.description for a in game.active_bindings.values() if a.enabled}
        await pilot.press("y")
        assert app.clipboard == code
        await wait_for(pilot, lambda: noticed(app, code, "copied"), "the toast")
        bob = await Peer.connect(url, "bob")
        await bob.request(Join, room=code, seat=1)
        await wait_for(pilot, lambda: app.model.room.status == "playing", "the game")
        assert not game.check_action("copy_code", ())
        await bob.close()
