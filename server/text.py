"""Cleaning of the free text people send: names and chat lines.

Control characters are stripped (they could redraw a terminal client's screen) and lengths bounded,
so what one client types can never disturb what another one sees.
"""

from __future__ import annotations

import unicodedata

MAX_NAME = 24
MAX_CHAT = 300


def _printable(text: str) -> str:
    """Drop control and formatting characters, fold runs of white space into one space."""
    kept = "".join(ch if not unicodedata.category(ch).startswith("C") else " " for ch in text)
    return " ".join(kept.split())


SCAN_FACTOR = 4
"""Only the first SCAN_FACTOR x the kept length of a text is looked at: a 64 KiB line costs what a short one does."""


def clean_name(name: str) -> str:
    """A display name: printable, at most MAX_NAME characters, never empty."""
    return _printable(name[: MAX_NAME * SCAN_FACTOR])[:MAX_NAME] or "player"


def clean_text(text: str) -> str:
    """A chat line: printable and at most MAX_CHAT characters."""
    return _printable(text[: MAX_CHAT * SCAN_FACTOR])[:MAX_CHAT]
