"""Cleaning of the free text people send: names and chat lines.

Control and format characters are stripped (they could redraw a terminal client's screen or reverse the
text around them), characters that draw nothing are dropped, combining marks are limited to MAX_MARKS per
letter (a stack of them draws over the lines around), and lengths are bounded, so what one client types can
never disturb what another one sees. Names are also NFKC-normalised, so "ａｌｉｃｅ" (fullwidth) or "alice" with
a ligature shows, and compares, as "alice". Look-alike letters of other scripts (Cyrillic "а") are not folded:
a name is not an identity (docs/security.md).
"""

from __future__ import annotations

import unicodedata

MAX_NAME = 24
MAX_CHAT = 300
MAX_MARKS = 2  # combining marks kept after one base character (enough for any language's accents)
SCAN_FACTOR = 4
"""Only the first SCAN_FACTOR x the kept length of a text is looked at: a 64 KiB line costs what a short one does."""

BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e\u17b4\u17b5")
"""Letters and symbols that draw nothing (Hangul fillers, the blank Braille pattern, Khmer inherent vowels)."""


def _printable(text: str) -> str:
    """Drop control, format and blank characters and excess combining marks; fold white space into one space."""
    kept: list[str] = []
    marks = MAX_MARKS  # no base character yet: a leading mark is dropped
    for ch in text:
        category = unicodedata.category(ch)
        if category.startswith("C") or ch in BLANKS:
            kept.append(" ")
            marks = MAX_MARKS
        elif category.startswith("M"):
            if marks < MAX_MARKS:
                kept.append(ch)
                marks += 1
        else:
            kept.append(ch)
            marks = 0 if not ch.isspace() else MAX_MARKS
    return " ".join("".join(kept).split())


def clean_name(name: str) -> str:
    """A display name: normalised (NFKC), printable, at most MAX_NAME characters, never empty."""
    normal = unicodedata.normalize("NFKC", name[: MAX_NAME * SCAN_FACTOR])
    return _printable(normal)[:MAX_NAME] or "player"


def clean_text(text: str) -> str:
    """A chat line: printable and at most MAX_CHAT characters."""
    return _printable(text[: MAX_CHAT * SCAN_FACTOR])[:MAX_CHAT]
