"""Pilot test of the client's recovery from a dropped connection, against the in-process server (the missed
tick and the server error run on a scripted connection in test_flows.py)."""

from __future__ import annotations

import pytest

from gamenight.client.model import ME, OPEN
from gamenight.client.screens.game import GameScreen
from gamenight.protocol.messages import Join
from gamenight.server.app import GameServer
from tests.client.conftest import create_room_via_form, wait_for
from tests.peer import Peer


@pytest.fixture
def url(game_server: GameServer) -> str:
    """The in-process server (no AI is needed here), so a test can drop a client's connection."""
    return f"ws://127.0.0.1:{game_server.port}"


async def test_dropped_connection_resumes_into_the_same_seat(make_app, game_server, url):
    """The server drops the client mid-game: the header says so, the client reconnects with its token
    and is back in its seat of the same room, with the board up to date."""
    app = make_app("ann")
    async with app.run_test(size=(100, 36)) as pilot:
        code = await create_room_via_form(app, pilot, "othello", [ME, OPEN])
        bob = await Peer.connect(url, "bob")
        await bob.request(Join, room=code, seat=1)
        await wait_for(pilot, lambda: app.model.room.my_turn, "the start")
        seen: list[str] = []
        app.watch(app, "sub_title", lambda title: seen.append(title), init=False)
        session = app.model.session_id
        await game_server.connections[session].close()
        await wait_for(pilot, lambda: any("reconnecting" in s for s in seen), "the reconnecting notice")
        await wait_for(
            pilot, lambda: app.sub_title.startswith("connected") and app.model.room.syncing is False, "the reconnection"
        )
        assert app.model.session_id == session and app.model.room.code == code and app.model.room.seat == 0
        assert isinstance(app.screen, GameScreen) and app.model.room.my_turn
        await bob.close()
