"""The side panel's texts: the players with their colours, the AI's figures, and the move list."""

from __future__ import annotations

from rich.text import Text

from client.model import PLAYING, RoomSession, ai_info_text, numbered_moves

# Each seat's chip: (glyph, colour, background). These are the players' colours on the board,
# fixed like the boards themselves so they read the same in dark and light themes.
SEAT_CHIPS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "othello": ((" ● ", "#0b0b0b", "#2e7d46"), (" ● ", "#f4f4f4", "#2e7d46")),
    "pentago": ((" ● ", "#0b0b0b", "#8c2f26"), (" ● ", "#f4f4f4", "#8c2f26")),
    "tron": (("   ", "#000000", "#1fb5d6"), ("   ", "#000000", "#f08c24"),
             ("   ", "#000000", "#6cc04a"), ("   ", "#000000", "#d04fc4")),
}
TURN_MARK = " ◀"
COLUMN_GAP = 2


def seat_chip(game: str, seat: int) -> Text:
    """A small swatch in a seat's colour (plain "[n]" for games without fixed colours)."""
    chips = SEAT_CHIPS.get(game)
    if not chips or seat >= len(chips):
        return Text(f"[{seat + 1}]")
    glyph, colour, background = chips[seat]
    chip = Text()
    chip.append(glyph, style=f"bold {colour} on {background}")  # styled as a span, so appended text is not
    return chip


def players_text(session: RoomSession) -> Text:
    """One line per seat: colour, label, who sits there, AI level or connection, score, whose turn."""
    summary = session.summary
    if summary is None:
        return Text("…", style="dim")
    state = session.state
    scores = state.view.get("scores") if state is not None else None
    to_move = set(state.to_move) if state is not None and state.status == PLAYING else set()
    alive = state.view.get("alive") if state is not None else None
    lines = []
    for seat in summary.seats:
        line = seat_chip(session.game, seat.seat)
        line.append(f" {seat.label}: ", style="bold")
        line.append(seat.who(), style="dim italic" if seat.open else "")
        if session.playing and seat.seat == session.seat:
            line.append(" (you)", style="bold")
        if not seat.open and seat.kind == "human" and not seat.connected:
            line.append(" (away)", style="italic")
        if isinstance(alive, list) and seat.seat < len(alive) and not alive[seat.seat] and state is not None:
            line.append(" ✖", style="bold")
        if isinstance(scores, list) and seat.seat < len(scores):
            line.append(f"  {scores[seat.seat]}", style="bold")
        if seat.seat in to_move and len(to_move) == 1:
            line.append(TURN_MARK, style="bold")
        lines.append(line)
    return Text("\n").join(lines)


def ai_text(session: RoomSession) -> Text:
    """The last AI move's search figures, e.g. "white AI: depth 6 · 12,345 nodes"."""
    seat = session.last_ai_seat
    if seat is None or seat not in session.ai_info:
        return Text("")
    return Text.assemble((f"{session.label(seat)} AI: ", "bold"), ai_info_text(session.ai_info[seat]))


def moves_text(session: RoomSession, width: int) -> Text:
    """The game's moves in its notation, numbered, in as many aligned columns as `width` allows."""
    moves = session.state.moves if session.state is not None else []
    if not moves:
        return Text("no moves yet", style="dim italic")
    items = numbered_moves(str(m) for m in moves)
    cell = max(len(item) for item in items) + COLUMN_GAP
    per_line = max(1, (width + COLUMN_GAP) // cell)
    lines = ["".join(item.ljust(cell) for item in items[i:i + per_line]).rstrip()
             for i in range(0, len(items), per_line)]
    return Text("\n".join(lines))
