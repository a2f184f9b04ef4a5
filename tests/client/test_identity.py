"""The client's identity: a key made on first run, kept beside the name, sent in hello; a refused name is replaced."""

from __future__ import annotations

import json
import stat

from textual.widgets import Input, Static

from gamenight.client.__main__ import main as client_main
from gamenight.client.app import GameNightApp
from gamenight.client.config import CONFIG_ENV, CONFIG_FILE, legacy_key, player_identity, remember_name, saved_name
from gamenight.client.identity_cli import identity_code
from gamenight.client.screens.dialogs import NameScreen
from gamenight.client.state import ClientState
from gamenight.protocol.identity import Identity
from gamenight.protocol.messages import Welcome
from tests.client.conftest import wait_for
from tests.client.recorded import wire
from tests.peer import Peer

SIZE = (100, 36)
OTHER_KEY = "someone-else-" + "x" * 20


def test_identity_is_made_once_and_kept_beside_the_name(private_config):
    """The first run makes a key pair and saves its private key in the config file with the name; later runs
    reuse it (the same public key), and no protocol 2 secret is made any more."""
    remember_name("ann")
    identity = player_identity()
    stored = json.loads((private_config / CONFIG_FILE).read_text(encoding="utf-8"))
    assert stored["identity"] == identity.secret and stored["name"] == "ann" and "key" not in stored
    assert player_identity().public_key == identity.public_key
    assert saved_name() == "ann" and legacy_key() is None


def test_a_damaged_identity_is_replaced(private_config):
    """A saved identity that is not 64 hex digits is replaced by a new one (the old secret key is kept aside)."""
    private_config.mkdir(parents=True)
    old = "o" * 40
    (private_config / CONFIG_FILE).write_text(json.dumps({"identity": "zz", "key": old}), encoding="utf-8")
    identity = player_identity()
    assert player_identity().public_key == identity.public_key and legacy_key() == old


def test_the_config_file_and_its_folder_are_the_users_alone(private_config):
    """The config file that holds the private key is created 0600 in a 0700 folder, and an older 0644 file and
    0755 folder become so at the next save."""
    player_identity()
    assert stat.S_IMODE((private_config / CONFIG_FILE).stat().st_mode) == 0o600
    assert stat.S_IMODE(private_config.stat().st_mode) == 0o700
    (private_config / CONFIG_FILE).chmod(0o644)
    private_config.chmod(0o755)
    remember_name("ann")
    assert stat.S_IMODE((private_config / CONFIG_FILE).stat().st_mode) == 0o600
    assert stat.S_IMODE(private_config.stat().st_mode) == 0o700


def test_welcome_under_another_name_is_shown():
    """A welcome that gives a guest another name than the one asked for updates the name and says why."""
    state = ClientState("alice")
    changes = state.apply(wire("welcome", protocol=1, session="s", server="t", games=[], name="alice2"))
    assert state.name == "alice2"
    assert any("alice2" in n.text and "alice" in n.text for n in changes.notices)


async def test_the_app_claims_its_name_with_its_key(url, private_config):
    """The app proves its saved identity: its name is claimed, so a keyless hello for it plays under another name."""
    app = GameNightApp(url, "ann", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        assert app.connection is not None and app.connection.identity is not None
        assert app.connection.identity.public_key == player_identity().public_key
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


async def test_identity_export_and_import_play_as_the_same_person_on_a_second_machine(
    url, private_config, tmp_path, monkeypatch, capsys
):
    """`gamenight identity export FILE` writes the identity 0600; `import FILE` on another machine (another config
    folder), or the printed code pasted there, makes it claim the same names on a server."""
    first = player_identity()
    owner = await Peer.connect(url, "ann", identity=first)
    assert owner.welcome.claimed
    await owner.close()
    exported = tmp_path / "ann.identity"
    assert client_main(["identity", "export", str(exported)]) == 0
    assert stat.S_IMODE(exported.stat().st_mode) == 0o600
    assert client_main(["identity", "export"]) == 0
    code = capsys.readouterr().out.strip()

    for machine, source in (("laptop", str(exported)), ("phone", code)):
        monkeypatch.setenv(CONFIG_ENV, str(tmp_path / machine))
        assert client_main(["identity", "import", source]) == 0
        assert player_identity().public_key == first.public_key
        again = await Peer.connect(url, "ann", identity=player_identity())
        assert again.welcome.claimed and again.welcome.name == "ann"
        await again.close()


def test_a_bad_code_or_another_identity_is_not_imported(private_config, tmp_path, monkeypatch):
    """A cut or mistyped code is refused (exit 2) and changes nothing; a machine with another identity keeps it
    unless the import says --force."""
    mine = player_identity()
    theirs = Identity.generate()
    code = identity_code(theirs)
    for bad in (code[:-1], code.replace(theirs.secret[:4], "0000" if theirs.secret[:4] != "0000" else "1111"), "x"):
        assert client_main(["identity", "import", bad]) == 2
    assert client_main(["identity", "import", code]) == 2
    assert player_identity().public_key == mine.public_key
    assert client_main(["identity", "import", code, "--force"]) == 0
    assert player_identity().public_key == theirs.public_key
