"""The side panel's player lines: the score in its own aligned column, and a dropped player's state."""

from __future__ import annotations

from rich.console import Console

from gamenight.client.model import RoomSession
from gamenight.client.widgets.panel import moves_columns, moves_line_of, players_text
from gamenight.protocol.messages import State
from gamenight.protocol.vocab import Role, RoomStatus, RoomSummary

WIDTH = 32  # the side panel's inner width


def _render(renderable, width: int = WIDTH) -> list[str]:
    """The lines a renderable draws at this width, as plain text."""
    console = Console(width=width, color_system=None, record=True)
    console.print(renderable)
    return console.export_text().rstrip("\n").split("\n")


def _session(seats: list[dict], scores: list[int] | None) -> RoomSession:
    """My session (seat 0) in an Othello room with these seats and disc counts."""
    session = RoomSession("K7QXM", Role.PLAYER, 0)
    session.summary = RoomSummary.from_plain(
        {"room": "K7QXM", "game": "othello", "options": {}, "status": "playing", "seats": seats}
    )
    session.state = State(
        room="K7QXM",
        seq=3,
        game="othello",
        status=RoomStatus.PLAYING,
        view={"scores": scores},
        to_move=[1],
        legal=[],
        moves=[],
    )
    return session


def _seat(seat: int, label: str, name: str, kind: str = "human", **more) -> dict:
    """One seat of a room summary."""
    return {"seat": seat, "label": label, "kind": kind, "name": name, "connected": True, **more}


def test_scores_have_their_own_aligned_column():
    """ "AI level 3" with 4 discs reads "AI level 3 ... 4", never "AI level 34"; scores line up on the right."""
    session = _session([_seat(0, "black", "ann"), _seat(1, "white", "AI level 3", kind="ai", level=3)], [12, 4])
    lines = _render(players_text(session))
    assert "AI level 34" not in lines[1] and "AI level 3 " in lines[1]
    assert lines[0].rstrip().endswith("12") and lines[1].rstrip().endswith("4 ◀")
    assert lines[0].index("12") + 1 == lines[1].index("4")  # right-aligned: the units line up


def test_long_names_are_cut_not_wrapped_into_the_score():
    """A 24-character name is shortened with an ellipsis; the score keeps its column."""
    session = _session([_seat(0, "black", "a" * 24), _seat(1, "white", "bob")], [30, 7])
    lines = _render(players_text(session))
    assert len(lines) == 2 and "…" in lines[0] and lines[0].rstrip().endswith("30")


def test_dropped_player_shows_disconnected_and_the_stand_in():
    """A dropped human reads "disconnected"; with an AI playing for them, "AI standing in"."""
    waiting = _session([_seat(0, "black", "ann"), _seat(1, "white", "bob", connected=False)], [2, 2])
    assert "disconnected" in _render(players_text(waiting))[2]
    covered = _session(
        [_seat(0, "black", "ann"), _seat(1, "white", "bob", connected=False, stand_in="AI level 3")], [2, 2]
    )
    assert [line.strip() for line in _render(players_text(covered))[2:]] == ["disconnected", "AI standing in"]
    back = _session([_seat(0, "black", "ann"), _seat(1, "white", "bob")], [2, 2])
    assert len(_render(players_text(back))) == 2


def test_move_columns_highlight_the_current_move():
    """The replay's move list marks the shown move and knows which line holds it."""
    moves = ["f5", "d6", "c3", "d3", "c4", "f4", "f6"]
    text = moves_columns(moves, width=28, current=5)
    assert text.plain.split("\n") == ["1. f5  2. d6  3. c3  4. d3", "5. c4  6. f4  7. f6"]
    marked = [text.plain[span.start : span.end] for span in text.spans if "reverse" in str(span.style)]
    assert marked == ["5. c4"]
    assert moves_line_of(moves, 28, 5) == 1 and moves_line_of(moves, 28, 4) == 0
