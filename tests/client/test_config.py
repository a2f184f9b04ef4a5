"""The player's name is asked once and remembered in the config directory (never the real one in tests)."""

from __future__ import annotations

from gamenight.client.config import CONFIG_FILE, config_dir, remember_name, saved_name


def test_name_is_remembered(private_config):
    """A saved name comes back on the next start, from GAMENIGHT_CONFIG_DIR."""
    assert config_dir() == private_config
    assert saved_name() is None
    assert remember_name("  Ann   Lee ") == "Ann Lee"
    assert saved_name() == "Ann Lee"
    assert (private_config / CONFIG_FILE).exists()


def test_damaged_config_reads_as_empty(private_config):
    """A config file that is not JSON (or not a map) is ignored rather than stopping the client."""
    private_config.mkdir(parents=True)
    (private_config / CONFIG_FILE).write_text("{not json", encoding="utf-8")
    assert saved_name() is None
    (private_config / CONFIG_FILE).write_text("[1, 2]", encoding="utf-8")
    assert saved_name() is None
    remember_name("bob")
    assert saved_name() == "bob"


def test_long_names_are_cut_and_control_characters_dropped(private_config):
    """Names keep to what the server accepts: printable, at most 24 characters."""
    assert remember_name("x" * 40 + "\x1b[2J") == "x" * 24


async def test_first_start_asks_the_name_once(private_config):
    """With no saved name the app asks for one, saves it, then connects under that name (a scripted
    connection stands in for the server)."""
    from gamenight.client.app import GameNightApp
    from gamenight.client.screens.dialogs import NameScreen
    from tests.client.conftest import wait_for
    from tests.client.recorded import FAKE_URL, FakeConnection, welcome

    app = GameNightApp(FAKE_URL, None, connect=FakeConnection(on_connect=[welcome()]))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, NameScreen), "the name question")
        assert app.connection is None
        await pilot.press(*"Zoe", "enter")
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        assert app.connection is not None and app.connection.name == "Zoe"
    assert saved_name() == "Zoe"
