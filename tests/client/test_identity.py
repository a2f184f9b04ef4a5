"""The client's identity: a key made on first run, kept beside the name, sent in hello; a refused name is replaced."""

from __future__ import annotations

import json

from textual.widgets import Input, Static

from gamenight.client.app import GameNightApp
from gamenight.client.config import CONFIG_FILE, identity_key, remember_name, saved_name
from gamenight.client.screens.dialogs import NameScreen
from gamenight.client.state import ClientState
from gamenight.protocol.messages import Welcome
from tests.client.conftest import wait_for
from tests.client.recorded import wire
from tests.peer import Peer

SIZE = (100, 36)
OTHER_KEY = "someone-else-" + "x" * 20


def test_key_is_made_once_and_kept_beside_the_name(private_config):
    """The first run makes a random key and saves it in the config file with the name; later runs reuse it."""
    remember_name("ann")
    key = identity_key()
    assert len(key) >= 32
    stored = json.loads((private_config / CONFIG_FILE).read_text(encoding="utf-8"))
    assert stored["key"] == key and stored["name"] == "ann"
    assert identity_key() == key
    assert saved_name() == "ann"


def test_a_damaged_key_is_replaced(private_config):
    """A key that is not a string of 16-128 characters is replaced by a new random one."""
    private_config.mkdir(parents=True)
    (private_config / CONFIG_FILE).write_text(json.dumps({"key": "short"}), encoding="utf-8")
    key = identity_key()
    assert key != "short" and identity_key() == key


def test_welcome_under_another_name_is_shown():
    """A welcome that gives a guest another name than the one asked for updates the name and says why."""
    state = ClientState("alice")
    changes = state.apply(wire("welcome", protocol=1, session="s", server="t", games=[], name="alice2"))
    assert state.name == "alice2"
    assert any("alice2" in n.text and "alice" in n.text for n in changes.notices)


async def test_the_app_claims_its_name_with_its_key(url, private_config):
    """The app sends its saved key: its name is claimed, so a keyless hello for it plays under another name."""
    app = GameNightApp(url, "ann", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        assert app.connection is not None and app.connection.key == identity_key()
        guest = await Peer.connect(url, "ann")
        assert isinstance(guest.welcome, Welcome) and guest.welcome.name == "ann2"
        await guest.close()


async def test_name_taken_asks_again_with_the_suggestion(url, private_config):
    """A name claimed by another key brings up the name dialog saying so, with the free name filled in;
    accepting it connects under that name."""
    owner = await Peer.connect(url, "bea", key=OTHER_KEY)
    app = GameNightApp(url, "bea", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, NameScreen), "the name dialog")
        said = str(app.screen.query_one("#taken", Static).render())
        assert "'bea'" in said and "'bea2'" in said
        assert app.screen.query_one("#name", Input).value == "bea2"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.model.lobby.games and app.model.name == "bea2", "the welcome as bea2")
        assert app.connection is not None and app.connection.connected
    await owner.close()
