"""The client's small remembered settings, kept as JSON in the user's config directory.

It holds the player's name, the identity that claims that name on the servers it plays on (an Ed25519 private
key made on first run, never shown or sent; protocol/identity.py, docs/security.md), the secret key of gamenight
before protocol 3 if it had one (sent only to move an old claim, to a server played on before), and, per server,
the resume token of the last session there (key: the server's URL, or "local" for the private server the client
starts), so reopening gamenight puts you back in your seats. The file is the user's alone (mode 0600, its folder
0700).

`GAMENIGHT_CONFIG_DIR` overrides the directory, so tests and portable installs never touch the real one.
A missing or damaged file reads as empty settings: losing a remembered name is better than not starting.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import platformdirs

from gamenight.protocol.identity import Identity

CONFIG_ENV = "GAMENIGHT_CONFIG_DIR"
CONFIG_FILE = "config.json"
CHALLENGES = "challenges"  # false: this player takes no challenges (the hello's `accepts` stays empty)
SOUND = "sound"  # false: no terminal bell (as `gamenight --quiet`)
QUICK = "quick"  # the quick menu's last choice: {"game", "level", "preset"}
MAX_NAME = 24  # the server cuts names to this length too
TOKENS = "tokens"
KEY = "key"  # protocol 2's secret key (kept to move old claims)
KEY_LENGTHS = range(16, 129)  # what servers accepted as a claim key
IDENTITY = "identity"  # the player's Ed25519 private key, 64 hex digits
LOCAL_SERVER = "local"  # the session key of the private server (its port changes from run to run)


def config_dir() -> Path:
    """Where the client keeps its settings."""
    override = os.environ.get(CONFIG_ENV)
    return Path(override) if override else Path(platformdirs.user_config_dir("gamenight"))


def load_config() -> dict[str, Any]:
    """The saved settings, or an empty map if there are none or they cannot be read."""
    try:
        data = json.loads((config_dir() / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def private_folder(folder: Path) -> Path:
    """Make `folder` (and its missing parents) if needed, readable by the user alone (mode 0700), and return it."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)  # an existing folder too (made by an older gamenight with the default mode)
    return folder


def write_private(path: Path, text: str) -> None:
    """Write `path` atomically as a file only its user can read (mode 0600 from its creation on: the secret in it is
    never readable by anyone else, not even for a moment)."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.unlink(missing_ok=True)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)
    temporary.replace(path)


def save_config(data: dict[str, Any]) -> None:
    """Write the settings atomically (a crash mid-write leaves the old file intact), mode 0600 in a 0700 folder."""
    folder = private_folder(config_dir())
    write_private(folder / CONFIG_FILE, json.dumps(data, indent=2, sort_keys=True) + "\n")


def clean_name(name: str) -> str:
    """A display name as the user typed it, trimmed to something the server will accept unchanged."""
    printable = "".join(ch for ch in name if ch.isprintable())
    return " ".join(printable.split())[:MAX_NAME]


def saved_name() -> str | None:
    """The remembered player name, if one was saved."""
    name = load_config().get("name")
    return clean_name(name) or None if isinstance(name, str) else None


def remember_name(name: str) -> str:
    """Save the player's name for next time and return it as saved."""
    data = load_config()
    data["name"] = saved = clean_name(name)
    save_config(data)
    return saved


def player_identity() -> Identity:
    """The key pair that claims this player's name: the saved one, or a new one saved now (first run)."""
    data = load_config()
    secret = data.get(IDENTITY)
    if isinstance(secret, str):
        with contextlib.suppress(ValueError):
            return Identity.from_secret(secret)
    identity = Identity.generate()
    data[IDENTITY] = identity.secret
    save_config(data)
    return identity


def legacy_key() -> str | None:
    """The secret key an older gamenight (protocol 2) claimed names with, if this config holds one (never made
    now: it only moves those claims to the identity)."""
    key = load_config().get(KEY)
    return key if isinstance(key, str) and len(key) in KEY_LENGTHS else None


def takes_challenges() -> bool:
    """Whether this player takes challenges (config `"challenges": false` turns them off; on by default)."""
    return load_config().get(CHALLENGES, True) is not False


def sound_on() -> bool:
    """Whether the client rings the terminal bell (config `"sound": false` turns it off; on by default)."""
    return load_config().get(SOUND, True) is not False


def saved_quick() -> dict[str, Any]:
    """The quick menu's last choice as saved (empty if none)."""
    quick = load_config().get(QUICK)
    return dict(quick) if isinstance(quick, dict) else {}


def remember_quick(choice: dict[str, Any]) -> None:
    """Save the quick menu's choice for next time."""
    data = load_config()
    data[QUICK] = choice
    save_config(data)


def saved_token(server: str) -> str | None:
    """The resume token of the last session on this server, if one was saved."""
    tokens = load_config().get(TOKENS)
    token = tokens.get(server) if isinstance(tokens, dict) else None
    return token if isinstance(token, str) and token else None


def remember_token(server: str, token: str | None) -> None:
    """Save (or, with None, forget) the resume token for this server; unchanged tokens are not rewritten."""
    data = load_config()
    tokens = data.get(TOKENS)
    tokens = dict(tokens) if isinstance(tokens, dict) else {}
    if tokens.get(server) == token:
        return
    if token is None:
        tokens.pop(server, None)
    else:
        tokens[server] = token
    data[TOKENS] = tokens
    save_config(data)


def log_dir() -> Path:
    """Where the private server started by the client writes its log."""
    override = os.environ.get(CONFIG_ENV)
    return Path(override) if override else Path(platformdirs.user_log_dir("gamenight"))
