"""Spectators' chat in its own tab of the game screen, and a late joiner sees what was said before it came."""

from __future__ import annotations

from textual.widgets import RichLog, TabbedContent

from gamenight.client.messages import SendChat
from gamenight.protocol.messages import Chat, CreateRoom, Join
from gamenight.protocol.vocab import Role
from tests.client.conftest import wait_for
from tests.peer import Peer

SIZE = (110, 36)


def log_text(app, selector: str) -> str:
    """Everything a log of the game screen holds, as plain text."""
    return "\n".join(strip.text for strip in app.screen.query_one(selector, RichLog).lines)


async def test_late_watcher_sees_earlier_chat_and_spectators_talk_apart(make_app, url):
    """Joining late, ann sees the players' earlier line in the Room tab and the spectator's in the Spectators tab
    (once each); a new spectator line goes to that tab, and so does ann's own, since she watches."""
    alice = await Peer.connect(url, "alice")
    bob = await Peer.connect(url, "bob")
    carol = await Peer.connect(url, "carol")
    info = await alice.request(CreateRoom, game="othello", options={})
    await alice.request(Join, room=info.room, seat=0)
    await bob.request(Join, room=info.room, seat=1)
    await carol.request(Join, room=info.room, role=Role.SPECTATOR)
    await alice.send(Chat(room=info.room, text="good luck"))
    await carol.send(Chat(room=info.room, text="go white"))
    await bob.expect("event", kind="chat", data={"name": "carol", "seat": None, "text": "go white"})
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: info.room in app.model.lobby.rooms, "the room in the lobby")
        await pilot.press("s")
        await wait_for(pilot, lambda: "alice: good luck" in log_text(app, "#log"), "the earlier players' line")
        app.screen.query_one(TabbedContent).active = "spectators-tab"
        await wait_for(pilot, lambda: "go white" in log_text(app, "#spectator-log"), "the earlier spectator line")
        assert "alice: good luck" in log_text(app, "#log") and "go white" not in log_text(app, "#log")
        assert "good luck" not in log_text(app, "#spectator-log")
        await carol.send(Chat(room=info.room, text="what a move"))
        await wait_for(pilot, lambda: "carol: what a move" in log_text(app, "#spectator-log"), "a new spectator line")
        app.post_message(SendChat("hi all"))
        await wait_for(pilot, lambda: "ann: hi all" in log_text(app, "#spectator-log"), "ann's own line")
        assert log_text(app, "#spectator-log").count("go white") == 1
    for peer in (alice, bob, carol):
        await peer.close()
