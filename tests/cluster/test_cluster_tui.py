"""The bundled TUI, unchanged, plays in a room that another node owns (its requests forwarded, frames relayed)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gamenight.client.app import GameNightApp
from gamenight.client.model import ME, OPEN
from gamenight.client.widgets.othello import OthelloBoard
from gamenight.protocol.messages import CreateRoom, Join, MakeMove
from tests.client.conftest import create_room_via_form, wait_for
from tests.cluster.helpers import eventually
from tests.cluster.redisproc import RedisProcess
from tests.cluster.test_cluster_nodes import knows, owner
from tests.peer import Peer
from tests.server.serverproc import ServerProcess

SIZE = (100, 36)
WAIT_S = 30.0  # hang guard only


@pytest.mark.slow
async def test_tui_plays_a_room_owned_by_another_node(
    cluster: Callable[..., ServerProcess], redis_server: RedisProcess, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The TUI on n2 creates a room that is placed on n1 (n2 already runs one), and plays it against a peer on n1:
    its move reaches the peer, and the peer's reply shows on its board."""
    monkeypatch.setenv("GAMENIGHT_CONFIG_DIR", str(tmp_path / "config"))
    nodes = [cluster("n1"), cluster("n2")]
    busy = await Peer.connect(nodes[1].url, "busy")
    await busy.request(CreateRoom, game="connect4", options={})
    await eventually(lambda: knows(nodes[1], "n1"), "n2 to see n1 alive")
    app = GameNightApp(nodes[1].url, "ann", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        code = await create_room_via_form(app, pilot, "othello", [ME, OPEN])
        assert await owner(redis_server, code) == "n1"
        bob = await Peer.connect(nodes[0].url, "bob")
        await bob.request(Join, room=code, seat=1)
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move", WAIT_S)
        board = app.screen.query_one(OthelloBoard)
        await wait_for(pilot, lambda: board.position.legal, "ann's legal squares", WAIT_S)
        first = board.position.legal[0]
        await pilot.press("enter")
        played = await bob.expect("state", last_move=first)
        await bob.send(MakeMove(room=code, move=played.legal[0], seq=played.seq))
        await wait_for(pilot, lambda: board.position.last_move == played.legal[0], "bob's reply on ann's board", WAIT_S)
        assert app.model.room.my_turn
        await bob.close()
    await busy.close()
