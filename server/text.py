"""Cleaning of the free text people send: names and chat lines.

Control and format characters are stripped (they could redraw a terminal client's screen or reverse the
text around them), characters that draw nothing are dropped, combining marks are limited to MAX_MARKS per
letter (a stack of them draws over the lines around), and lengths are bounded, so what one client types can
never disturb what another one sees. Names are also NFKC-normalised, so "ａｌｉｃｅ" (fullwidth) or "alice" with
a ligature shows as "alice".

Names are compared by `name_key` (claims, guests' free names): the display name folded further so that names a
reader cannot tell apart share one key (the rule is in docs/protocol.md, "Names"). The key is never shown.
"""

from __future__ import annotations

import unicodedata
from importlib.resources import files

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


# Letters of other scripts that draw like a Latin letter, by case (applied before casefolding, so Greek "Η" folds
# to "h" while its lowercase "η" folds to "n"). Not Unicode's whole confusables table: the letters of the Latin,
# Greek and Cyrillic alphabets that look the same in common terminal fonts.
LOOKALIKES = str.maketrans(
    {
        # Cyrillic capitals and small letters
        **dict(zip("АВЕЅІЈКМНОРСТУХԚԜҺӀ", "ABESIJKMHOPCTYXQWHI", strict=True)),
        **dict(zip("аеѕіјорсухԁԛԝһӏ", "aesijopcyxdqwhl", strict=True)),
        # Greek capitals and small letters
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX", strict=True)),
        **dict(zip("αικνορυχγη", "aikvopuxyn", strict=True)),
    }
)


def _confusables() -> dict[int, str]:
    """server/confusables.txt as a translation table: each look-alike letter of any script (UTS #39's data, and the
    Latin small capitals) to the ASCII letter or digit it passes for."""
    table: dict[int, str] = {}
    for line in files("gamenight.server").joinpath("confusables.txt").read_text(encoding="utf-8").splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) >= 2 and fields[0].strip():
            table[int(fields[0], 16)] = chr(int(fields[1], 16))
    return table


CONFUSABLES = _confusables()
# After casefolding: digits and signs that pass for letters, and the letters that pass for each other ("I"/"l").
FOLDS = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l", "5": "s", "$": "s", "@": "a"})
PAIRS = (("rn", "m"), ("vv", "w"))  # two letters that draw like one


def name_key(name: str) -> str:
    """The form names are compared in: equal keys mean a reader could take one name for the other.

    The display name (`clean_name`) is decomposed and its combining marks dropped ("é" is "e"), other scripts'
    look-alike letters become the Latin one (LOOKALIKES by case, then CONFUSABLES: "ı", "ɪ", "ᴀ", Lisu "ꓡ" ...),
    the text is casefolded, 0/1/i/5 and a few signs fold to o/l/l/s, "rn" to "m" and "vv" to "w", and spaces and
    punctuation go ("al.ice" is "alice"). A name of nothing but punctuation keys as its casefolded self.
    """
    decomposed = unicodedata.normalize("NFKD", clean_name(name))
    bare = "".join(ch for ch in decomposed if not unicodedata.category(ch).startswith("M"))
    folded = bare.translate(LOOKALIKES).translate(CONFUSABLES).casefold().translate(FOLDS)
    for pair, single in PAIRS:
        folded = folded.replace(pair, single)
    key = "".join(ch for ch in folded if unicodedata.category(ch)[0] not in "ZP")
    return key or folded


def clean_text(text: str) -> str:
    """A chat line: printable and at most MAX_CHAT characters."""
    return _printable(text[: MAX_CHAT * SCAN_FACTOR])[:MAX_CHAT]
