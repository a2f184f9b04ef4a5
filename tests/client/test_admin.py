"""The admin tools in the TUI (moderation, issue 37): the real app (Pilot) of an admin the operator named with
`gamenight-server admin add`, a real server in a child process, and raw protocol clients as the players acted on."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Select

from gamenight.client.app import GameNightApp
from gamenight.client.config import player_identity
from gamenight.client.connection import REFUSED
from gamenight.client.screens.admin import AdminScreen
from gamenight.protocol.messages import CreateRoom, Leaderboard, ListRooms, Moderate
from gamenight.server.__main__ import main
from tests.client.conftest import noticed, select_player, wait_for
from tests.peer import Peer
from tests.server.test_identity import refused_hello
from tests.waiting import eventually

SIZE = (120, 36)
EVE_KEY = "e" * 8 + "eve-key-0123456789"


async def make_admin(url: str, db: Path, name: str) -> None:
    """Claim `name` with the app's own identity, name it an admin with the real CLI, and wait until the running server
    has read the list again (a hello with that identity is welcomed as an admin)."""
    first = await Peer.connect(url, name, identity=player_identity())
    await first.close()
    assert main(["--db", str(db), "admin", "add", name]) == 0

    async def admin_now() -> bool:
        peer = await Peer.connect(url, name, identity=player_identity())
        await peer.close()
        return bool(peer.welcome and peer.welcome.admin)

    await eventually(admin_now, "the server to read the new admin", every=0.5)


async def admin_dialog_on_player(app: GameNightApp, pilot, name: str) -> AdminScreen:
    """Select `name` in the online list and press a: the admin dialog on that player."""
    await select_player(app, pilot, name)
    await pilot.press("a")
    await wait_for(pilot, lambda: isinstance(app.screen, AdminScreen), "the admin dialog")
    assert isinstance(app.screen, AdminScreen)
    return app.screen


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The test server's database file (tests/client/conftest.py `url` runs the server on it)."""
    return tmp_path / "rooms.db"


async def test_an_admin_kicks_a_player_from_the_online_list(url, db, capsys):
    """An admin's lobby offers Admin; `a` on a player, a reason and Enter kick them: the player's connection gets
    `kicked` with the reason and closes, the admin sees it done, and `gamenight-server audit` lists it."""
    await make_admin(url, db, "boss")
    eve = await Peer.connect(url, "eve")
    app = GameNightApp(url, "boss", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.admin, "the admin's welcome")
        dialog = await admin_dialog_on_player(app, pilot, "eve")
        assert dialog.query_one("#action", Select).value == "kick"
        assert not dialog.query_one("#duration-row").display  # a kick lasts no time
        dialog.query_one("#reason", Input).value = "flooding the chat"
        await pilot.press("enter")
        error = await eve.expect("error", code="kicked")
        assert "flooding the chat" in error.message and "boss" in error.message
        await wait_for(pilot, lambda: noticed(app, "kick eve: done"), "the admin told it is done")
    capsys.readouterr()
    assert main(["--db", str(db), "audit"]) == 0
    assert capsys.readouterr().out.strip().endswith('boss kick eve: flooding the chat {"sessions": 1}')


async def test_an_admin_bans_a_player_for_a_day_and_they_cannot_reconnect(url, db):
    """From the TUI an admin bans a claimed player for a day: their connection closes with `banned`, and their
    next hello (with their key) is refused `banned`, saying when it ends."""
    await make_admin(url, db, "boss")
    eve = await Peer.connect(url, "eve", key=EVE_KEY)
    app = GameNightApp(url, "boss", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await admin_dialog_on_player(app, pilot, "eve")
        dialog.query_one("#action", Select).value = "ban"
        await wait_for(pilot, lambda: dialog.query_one("#duration-row").display, "the duration shown for a ban")
        dialog.query_one("#duration", Select).value = 86400
        dialog.query_one("#reason", Input).value = "cheating"
        dialog.query_one("#reason", Input).focus()
        await pilot.press("enter")
        banned = await eve.expect("error", code="banned")
        assert "cheating" in banned.message
        await wait_for(pilot, lambda: noticed(app, "ban eve: done, until"), "the admin told it is done")
    refused = await refused_hello(url, "eve", key=EVE_KEY)
    assert refused.code == "banned" and refused.until is not None and refused.until == banned.until


async def test_an_admin_closes_a_room_and_others_have_no_admin_key(url, db):
    """`a` on a room closes it (it leaves the listing); a player who is not an admin gets no Admin action."""
    await make_admin(url, db, "boss")
    ann = await Peer.connect(url, "ann")
    room = await ann.request(CreateRoom, game="othello", options={})
    app = GameNightApp(url, "boss", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: room.room in app.model.lobby.rooms, "the room listed")
        rooms = app.screen.query_one("#rooms", DataTable)
        rooms.focus()
        rooms.move_cursor(row=rooms.get_row_index(room.room))
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, AdminScreen), "the admin dialog on the room")
        assert app.screen.query_one("#action", Select).value == "close_room"
        app.screen.query_one("#reason", Input).value = "offensive name"
        await pilot.press("enter")
        await wait_for(pilot, lambda: room.room not in app.model.lobby.rooms, "the room gone from the lobby")
    listed = await ann.request(ListRooms)
    assert room.room not in {r.room for r in listed.rooms}
    player = GameNightApp(url, "carol", save_name=False)
    async with player.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: player.model.lobby.games, "carol's welcome")
        assert not player.model.admin and not player.screen.check_action("admin", ())
        await pilot.press("a")
        await pilot.pause()
        assert not isinstance(player.screen, AdminScreen)
    await ann.close()


async def test_a_kicked_player_sees_why_and_does_not_reconnect_by_itself(url, db):
    """A TUI player an admin kicks is shown the admin's reason and stays offline (its connection does not dial
    again on its own), its header saying an admin closed the connection."""
    boss_key = "b" * 8 + "boss-key-0123456789"
    boss = await Peer.connect(url, "boss", key=boss_key)
    await boss.close()
    assert main(["--db", str(db), "admin", "add", "boss"]) == 0

    async def admin_now() -> bool:
        peer = await Peer.connect(url, "boss", key=boss_key)
        await peer.close()
        return bool(peer.welcome and peer.welcome.admin)

    await eventually(admin_now, "the server to read the new admin", every=0.5)
    boss = await Peer.connect(url, "boss", key=boss_key)
    app = GameNightApp(url, "eve", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "eve's welcome")
        welcomes = app.connection.welcomes if app.connection is not None else 0
        done = await boss.request(Moderate, action="kick", target="eve", reason="language")
        assert done.type == "moderated"
        await wait_for(pilot, lambda: noticed(app, "language"), "the kick's reason shown")
        await wait_for(pilot, lambda: "an admin" in app.sub_title, "the header saying an admin closed it")
        # Refused ends the connection's loop (client/connection.py `run`): no reconnect is tried.
        assert app.connection is not None and app.connection.status.state == REFUSED
        assert app.connection.welcomes == welcomes and not app.connection.connected
    await boss.close()


async def test_an_admin_voids_a_players_rated_games_of_the_last_day(url, db):
    """From the TUI an admin voids a player's rated games of the last day: the leaderboard shows both players back
    at the ratings they had before the game, with no game counted."""
    from tests.server.test_ratings import alice_resigns, claimed_pair, rated_game

    await make_admin(url, db, "boss")
    alice, bob = await claimed_pair(url)
    code = await rated_game(alice, bob)
    _, over = await alice_resigns(alice, bob, code)
    before = {c["name"]: c["before"] for c in over.data["ratings"]}
    app = GameNightApp(url, "boss", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await admin_dialog_on_player(app, pilot, "bob")
        dialog.query_one("#action", Select).value = "void"
        await wait_for(pilot, lambda: dialog.query_one("#duration-row").display, "how far back, shown for a void")
        dialog.query_one("#reason", Input).value = "engine assistance"
        dialog.query_one("#reason", Input).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: noticed(app, "void bob: done"), "the admin told it is done")
    board = await alice.request(Leaderboard, game="connect4")
    assert {(e.name, e.rating, e.games) for e in board.entries} == {
        ("alice", before["alice"], 0),
        ("bob", before["bob"], 0),
    }
    for peer in (alice, bob):
        await peer.close()
