"""The `gamenight-bot` command line and its key file, without a server."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from gamenight.client.bot.__main__ import parse_args
from gamenight.client.bot.runner import bot_key, default_key_file
from gamenight.client.config import CONFIG_ENV


def test_key_is_made_once_private_and_then_reused(tmp_path: Path) -> None:
    """The first run writes a new identity readable by its owner only (file 0600, folder 0700); later runs read
    the same identity."""
    path = tmp_path / "deep" / "rhino.key"
    identity, legacy = bot_key(path)
    assert legacy is None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert bot_key(path)[0].public_key == identity.public_key


def test_a_key_file_of_protocol_2_gets_an_identity_and_keeps_its_key(tmp_path: Path) -> None:
    """A key file from before protocol 3 (one secret key) is kept as the old key (to move its claim) beside a new
    identity, written back 0600; the next run reads both."""
    path = tmp_path / "rhino.key"
    old = "r" * 43
    path.write_text(old + "\n")
    path.chmod(0o644)
    identity, legacy = bot_key(path)
    assert legacy == old and stat.S_IMODE(path.stat().st_mode) == 0o600
    again, legacy_again = bot_key(path)
    assert again.public_key == identity.public_key and legacy_again == old


@pytest.mark.parametrize("text", ["short\n", "ed25519 12ab\n", "two\nlines\n"])
def test_a_damaged_key_file_is_refused_not_replaced(tmp_path: Path, text: str) -> None:
    """A key file holding something that is not a key stops the bot rather than silently claiming anew."""
    path = tmp_path / "rhino.key"
    path.write_text(text)
    with pytest.raises(ValueError, match="no usable key"):
        bot_key(path)
    assert path.read_text() == text


def test_key_file_defaults_next_to_the_client_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --key-file the key lives in the client's config folder, one file per bot name."""
    monkeypatch.setenv(CONFIG_ENV, str(tmp_path))
    config = parse_args(["ws://h:8765", "--name", "rhino", "--game", "othello", "--engine", "x", "--protocol", "gtp"])
    assert config.key_file == tmp_path / "bots" / "rhino.key" == default_key_file("rhino")
    assert config.url == "ws://h:8765" and config.max_games == 1 and config.accept == "all"


def test_bare_host_means_the_default_port() -> None:
    """`gamenight-bot host` reaches ws://host:8765, as the client does."""
    config = parse_args(["myhost", "--name", "b", "--game", "tron", "--engine", "x", "--protocol", "tron2010"])
    assert config.url == "ws://myhost:8765"


@pytest.mark.parametrize(
    "bad",
    [
        ["--game", "connect4", "--protocol", "gtp"],  # a GTP engine plays Othello only
        ["--game", "othello", "--protocol", "uci"],  # no such protocol
        ["--game", "othello", "--protocol", "gtp", "--max-games", "0"],
        ["--game", "othello", "--protocol", "gtp", "--accept", "robots"],
    ],
)
def test_inconsistent_options_are_refused_up_front(bad: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Options that cannot work (a protocol that does not play the game, no games at all) stop with usage help."""
    with pytest.raises(SystemExit) as stopped:
        parse_args(["ws://h:1", "--name", "b", "--engine", "x", *bad])
    assert stopped.value.code == 2 and "gamenight-bot" in capsys.readouterr().err
