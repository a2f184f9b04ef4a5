"""Typed moves: what a line of text in the move line means against the legal moves, and the premove.

A typed move is matched against the legal moves the server sent, in the notation the move list shows
("f5", "c3 tr cw", "d"), case and spacing aside. An exact match is the move; a prefix that only one legal
move starts with is that move; a prefix several start with lists them (Pentago's "c3" has eight turns);
anything else is refused with the reason, and nothing is sent. A board module may say why a text is no
move of its game at all (`BoardSpec.syntax`: "z9 is not a square of this board"); without one, or for a
well-formed move the position does not allow, the reason is that it is not legal now.

A premove is one move typed (or clicked) while the opponent is to move. It is checked for its form only,
since the position it will meet is not known yet; when your turn comes it is resolved like a typed move
and sent if legal, else dropped with the reason. Nothing here loads Textual.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Syntax = Callable[[str, Mapping[str, Any]], str | None]
"""A game's check of a typed move's form on a board (its view): why the text is no move of the game, or None."""

SHOWN_CANDIDATES = 8  # candidates listed in the hint; more are counted


def normalize(text: str) -> str:
    """A typed move as the server writes moves: lower case, words one space apart."""
    return " ".join(text.lower().split())


@dataclass(frozen=True, slots=True)
class Reading:
    """What a typed text means now: the move it names, the legal moves it may still become, or why neither."""

    text: str
    move: str | None = None
    candidates: tuple[str, ...] = field(default_factory=tuple)
    problem: str | None = None

    def hint(self) -> str:
        """One line for under the move line: the move Enter sends, the completions, or the problem."""
        if self.problem is not None:
            return self.problem
        if self.move is not None:
            return f"Enter plays {self.move}"
        if not self.candidates:
            return ""
        shown = ", ".join(self.candidates[:SHOWN_CANDIDATES])
        more = len(self.candidates) - SHOWN_CANDIDATES
        return f"{len(self.candidates)} moves: {shown}" + (f" and {more} more" if more > 0 else "")


def read_move(text: str, legal: Sequence[str], view: Mapping[str, Any], syntax: Syntax | None = None) -> Reading:
    """What `text` names among the `legal` moves: the move, the candidates it is a prefix of, or the problem."""
    typed = normalize(text)
    if not typed:
        return Reading(typed)
    if typed in legal:
        return Reading(typed, move=typed)
    candidates = tuple(move for move in legal if move.startswith(typed))
    if len(candidates) == 1:
        return Reading(typed, move=candidates[0])
    if candidates:
        return Reading(typed, candidates=candidates)
    problem = syntax(typed, view) if syntax is not None else None
    return Reading(typed, problem=problem or f"{typed} is not a legal move now")


def read_premove(text: str, view: Mapping[str, Any], syntax: Syntax | None = None) -> Reading:
    """A move typed out of turn: kept as typed if its form is right (the position it meets is not known yet)."""
    typed = normalize(text)
    problem = syntax(typed, view) if typed and syntax is not None else None
    return Reading(typed, problem=problem) if problem else Reading(typed, move=typed or None)


def premove_due(premove: str, legal: Sequence[str], view: Mapping[str, Any]) -> Reading:
    """The premove when your turn comes: the legal move it names, or why it is dropped."""
    reading = read_move(premove, legal, view)
    if reading.move is not None:
        return reading
    if reading.candidates:
        return Reading(
            reading.text, problem=f"Premove {reading.text} dropped: it could be {len(reading.candidates)} moves"
        )
    return Reading(reading.text, problem=f"Premove {reading.text} dropped: not a legal move now")
