"""The side panel's texts: the players with their colours, the AI's figures, and the move list."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from gamenight.client.model import RoomSession, ai_info_text, numbered_moves
from gamenight.client.plain import plain
from gamenight.client.widgets import board_spec
from gamenight.protocol.vocab import RoomStatus, SeatKind, SeatSummary

TURN_MARK = "◀"
COLUMN_GAP = 2


def seat_chip(game: str, seat: int) -> Text:
    """A small swatch in a seat's colour, from the game's board (plain "[n]" for games without fixed colours).

    The colours are the players' colours on the board, fixed like the boards themselves so they read the
    same in dark and light themes."""
    chips = board_spec(game).chips
    if not chips or seat >= len(chips):
        return Text(f"[{seat + 1}]")
    glyph, colour, background = chips[seat]
    chip = Text()
    chip.append(glyph, style=f"bold {colour} on {background}")  # styled as a span, so appended text is not
    return chip


def players_text(session: RoomSession, width: int | None = None) -> Table | Text:
    """One row per seat: colour, label and who sits there (and their state), the score, whose turn. Given the
    panel's `width`, a name too long is cut so that the marks after it ("(you)") still show."""
    summary = session.summary
    if summary is None:
        return Text("…", style="dim")
    state = session.state
    scores = state.view.get("scores") if state is not None else None
    to_move = set(state.to_move) if state is not None and state.status == RoomStatus.PLAYING else set()
    alive = state.view.get("alive") if state is not None else None
    mine = session.seat if session.playing else None
    chips = [seat_chip(session.game, seat.seat) for seat in summary.seats]
    shown = [_score(scores, seat.seat) for seat in summary.seats]
    room = None
    if width is not None:  # the name column: what the chip, score and turn columns and the gaps leave
        room = width - max(c.cell_len for c in chips) - max(cell_len(s) for s in shown) - len(TURN_MARK) - 3
    rows = [
        (
            chip,
            seat_text(seat, seat.seat == mine, _crashed(alive, seat.seat), room, session.ratings.get(seat_name(seat))),
            score,
            TURN_MARK if seat.seat in to_move and len(to_move) == 1 else "",
        )
        for chip, score, seat in zip(chips, shown, summary.seats, strict=True)
    ]
    return seats_table(rows)


def time_control(options: Mapping[str, Any]) -> str:
    """A room's time control as players say it: "5+3", "30s+0", "1 day a move", or "no clock"."""
    days = options.get("days_per_move") or 0
    clock_s = options.get("clock_s") or 0
    if isinstance(days, int) and days > 0:
        return f"{days} day{'s' if days > 1 else ''} a move"
    if not isinstance(clock_s, int) or clock_s <= 0:
        return "no clock"
    increment = options.get("increment_s") or 0
    base = f"{clock_s // 60}" if clock_s % 60 == 0 else f"{clock_s}s"
    return f"{base}+{increment}"


def terms_text(session: RoomSession) -> Text:
    """The room's terms over the clocks: its time control and whether it is rated ("5+3 · Rated")."""
    if session.summary is None:
        return Text("")
    control = time_control(session.summary.options)
    return Text.assemble((control[:1].upper() + control[1:], "bold"), " · ", ("Rated" if session.rated else "Casual"))


def seat_name(seat: SeatSummary) -> str:
    """The name a seat's player card goes by: the player's, or "AI level 3"."""
    return seat.name or seat.who()


def seat_text(
    seat: SeatSummary, mine: bool, crashed: bool = False, width: int | None = None, rating: str | None = None
) -> Text:
    """A seat's label and occupant ("black: ann (you)"), and in a rated room the player's rating ("ann 1512"),
    with a second line when its player dropped. In `width` cells, a name too long is cut ("black: maximilia…
    (you)"): the marks after it always show."""
    text = Text()
    text.append(f"{seat.label}: ", style="bold")
    marks = Text()
    marks.append(f" {rating}" if rating else "", style="cyan")
    marks.append(" (you)" if mine else "", style="bold")
    if crashed:
        marks.append(" ✖", style="bold")
    who = Text(seat.who(), style="dim italic" if seat.open else "")
    if width is not None:
        who.truncate(max(1, width - text.cell_len - marks.cell_len), overflow="ellipsis")
    text.append_text(who)
    text.append_text(marks)
    if seat.kind in (SeatKind.HUMAN, SeatKind.BOT) and not seat.connected:
        # One short line each: the panel is narrow, and the name column is cut rather than wrapped.
        text.append("\n  disconnected" + ("\n  AI standing in" if seat.stand_in else ""), style="italic")
    return text


def seats_table(rows: list[tuple[Text, Text, str, str]]) -> Table:
    """The players' rows with the scores in their own right-aligned column (names are cut, never wrapped)."""
    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(no_wrap=True)
    table.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    table.add_column(justify="right", no_wrap=True, style="bold")
    table.add_column(no_wrap=True, width=len(TURN_MARK))
    for chip, who, score, turn in rows:
        table.add_row(chip, who, plain(score), Text(turn, style="bold"))  # a score is whatever the view holds
    return table


def _score(scores: object, seat: int) -> str:
    """A seat's score as shown, or "" for games without scores."""
    return str(scores[seat]) if isinstance(scores, list) and seat < len(scores) else ""


def _crashed(alive: object, seat: int) -> bool:
    """True when a live game's view says this rider has crashed."""
    return isinstance(alive, list) and seat < len(alive) and not alive[seat]


def ai_text(session: RoomSession) -> Text:
    """The last AI move's search figures, e.g. "white AI: depth 6 · 12,345 nodes"."""
    seat = session.last_ai_seat
    if seat is None or seat not in session.ai_info:
        return Text("")
    return Text.assemble((f"{session.label(seat)} AI: ", "bold"), ai_info_text(session.ai_info[seat]))


def moves_text(session: RoomSession, width: int) -> Text:
    """The game's moves in its notation, numbered, in as many aligned columns as `width` allows; for a live game,
    whose riders all move on every tick, the tick it is at instead (`ticks_text`)."""
    if session.live:
        return ticks_text(session)
    moves = session.state.moves if session.state is not None else []
    return moves_columns([str(m) for m in moves], width)


def moves_heading(session: RoomSession) -> str:
    """The heading over the move list: "Ticks" for a live game."""
    return "Ticks" if session.live else "Moves"


def ticks_text(session: RoomSession) -> Text:
    """A live game's tick ("tick 57"), and where its moves are: the replay steps through them."""
    tick = session.state.view.get("tick") if session.state is not None else None
    text = Text(f"tick {tick}" if isinstance(tick, int) and tick > 0 else "not started yet", style="bold")
    text.append("\nevery rider moves on each tick; a replay (h in the lobby) steps through them", style="dim italic")
    return text


def moves_columns(moves: list[str], width: int, current: int | None = None) -> Text:
    """Numbered moves in aligned columns; move number `current` (1-based) is highlighted."""
    if not moves:
        return Text("no moves yet", style="dim italic")
    items = numbered_moves(moves)
    cell, per_line = _layout(items, width)
    text = Text()
    for index, item in enumerate(items):
        if index and index % per_line == 0:
            text.append("\n")
        last_in_line = index % per_line == per_line - 1 or index == len(items) - 1
        shown = item if last_in_line else item.ljust(cell)
        if index + 1 == current:
            text.append(item, style="reverse bold")
            text.append(shown[len(item) :])
        else:
            text.append(shown)
    return text


def moves_line_of(moves: list[str], width: int, current: int) -> int:
    """The line of `moves_columns` that shows move number `current`, for scrolling it into view."""
    items = numbered_moves(moves)
    if not items or current < 1:
        return 0
    return (current - 1) // _layout(items, width)[1]


def _layout(items: list[str], width: int) -> tuple[int, int]:
    """(cell width, items per line) of the move columns."""
    cell = max(len(item) for item in items) + COLUMN_GAP
    return cell, max(1, (width + COLUMN_GAP) // cell)
