"""The client's small remembered settings (the player's name), kept as JSON in the user's config directory.

`GAMENIGHT_CONFIG_DIR` overrides the directory, so tests and portable installs never touch the real one.
A missing or damaged file reads as empty settings: losing a remembered name is better than not starting.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import platformdirs

CONFIG_ENV = "GAMENIGHT_CONFIG_DIR"
CONFIG_FILE = "config.json"
MAX_NAME = 24  # the server cuts names to this length too


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


def save_config(data: dict[str, Any]) -> None:
    """Write the settings atomically (a crash mid-write leaves the old file intact)."""
    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / (CONFIG_FILE + ".tmp")
    temporary.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    temporary.replace(folder / CONFIG_FILE)


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
    data["name"] = clean_name(name)
    save_config(data)
    return data["name"]


def log_dir() -> Path:
    """Where the private server started by the client writes its log."""
    override = os.environ.get(CONFIG_ENV)
    return Path(override) if override else Path(platformdirs.user_log_dir("gamenight"))
