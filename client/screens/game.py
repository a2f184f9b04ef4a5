"""The game screen: the board, the players and the move list, chat, and the room's controls.

The client state keeps the room's truth in a `RoomSession`; the app posts `ModelChanged` when it changed
and this screen redraws from it. What the user does (a `MoveChosen` from the board, a key, a button)
goes up as a request message (`Resign`, `Rematch`, `Leave`, ...); the board's moves bubble up as they are.
Spectators get the same screen without move input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Button, Footer, Header, Input, Label, RichLog, Static, TabbedContent, TabPane

from gamenight.client.bindings import refresh_keys
from gamenight.client.messages import (
    Abort,
    AddAi,
    CopyCode,
    LeaveRoom,
    ModelChanged,
    MoreTime,
    MoveChosen,
    OpenInvite,
    OpenReview,
    Premove,
    Rematch,
    RemoveAi,
    Resign,
    Ring,
    SendChat,
    Takeback,
    TakebackDecline,
)
from gamenight.client.model import RoomSession, describe_result, headline, status_text
from gamenight.client.plain import plain
from gamenight.client.review import REVIEWED_GAMES
from gamenight.client.screens.base import GameNightScreen
from gamenight.client.screens.dialogs import LOBBY, REMATCH, REVIEW, ConfirmScreen, GameOverScreen, HelpScreen
from gamenight.client.screens.ratings import ShowPlayerCard
from gamenight.client.state import ClientState, rating_changes_text
from gamenight.client.typed import Reading, Syntax, premove_due, read_move, read_premove
from gamenight.client.widgets import board_spec
from gamenight.client.widgets.board import Position, apply_delta, show_position
from gamenight.client.widgets.clock import ClockView
from gamenight.client.widgets.panel import ai_text, moves_heading, moves_text, players_text, terms_text, ticks_text
from gamenight.protocol.messages import Tick
from gamenight.protocol.vocab import Result, RoomStatus, SeatKind

# Which actions make sense in which room status, for whom; the footer and buttons follow this table.
HOST_ACTIONS = {"add_ai", "remove_ai", "invite"}
PLAYER_ACTIONS = {"rematch": RoomStatus.FINISHED, "resign": RoomStatus.PLAYING}
CONTROLS = ("add_ai", "remove_ai", "rematch", "resign", "leave")
MOVES_WIDTH = 30  # the move list's width before the first layout


class GameScreen(GameNightScreen):
    """One room: board, side panel, chat and controls."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "help", "Help"),
        Binding("question_mark", "help", show=False),
        Binding("t", "chat", "Chat"),
        Binding("slash", "type_move", "Type a move", key_display="/"),
        Binding("plus", "add_ai", "Add AI", key_display="+"),
        Binding("minus", "remove_ai", "Remove AI", key_display="-"),
        Binding("i", "invite", "Invite"),
        Binding("y", "copy_code", "Copy code"),
        Binding("r", "rematch", "Rematch"),
        Binding("x", "resign", "Resign"),
        Binding("u", "takeback", "Takeback"),
        Binding("n", "takeback_decline", "Decline takeback"),
        Binding("m", "moretime", "+15 s"),
        Binding("z", "abort", "Abort"),
        Binding("b", "leave", "Lobby"),
        Binding("p", "player_card", "Player cards"),
        Binding("escape", "escape", show=False),
    ]

    def __init__(self, model: ClientState, session: RoomSession) -> None:
        super().__init__(model)
        self.session = session
        self.board: Widget | None = None
        self.shown_seq: int | None = None  # the seq of the position the board shows (a state's or a tick's)
        self.logged = 0  # how many of the session's log lines the log shows
        self.card_turn = -1  # which seated player's card the `i` key showed last
        self.premove: str | None = None  # the move queued for my next turn (client/typed.py)
        self.low_time_rung = 0  # the game (`RoomSession.games_started`) whose low time rang the bell

    def compose(self) -> ComposeResult:
        """Header, board area, side panel (status, players, AI, moves, log, chat, controls), footer."""
        yield Header()
        with Horizontal(id="game-body"):
            with Vertical(id="board-column"):
                yield Container(id="board-area")
                with Horizontal(id="move-row"):
                    yield Input(placeholder="/ type a move", id="move-line", compact=True, max_length=40)
                    yield Static(id="move-hint")
            with Vertical(id="side"):
                yield Static(id="status")
                yield Static(id="players")
                yield Static(id="terms")
                yield ClockView(id="clocks")
                yield Static(id="ai-info")
                yield Label("Moves", classes="side-heading", id="moves-heading")
                with VerticalScroll(id="moves-box"):
                    yield Static(id="moves")
                with TabbedContent(id="log-tabs"):  # the room's events and its players' chat; spectators' chat apart
                    with TabPane("Room", id="room-tab"):
                        yield RichLog(id="log", wrap=True, markup=False, min_width=20)
                    with TabPane("Spectators", id="spectators-tab"):
                        yield RichLog(id="spectator-log", wrap=True, markup=False, min_width=20)
                yield Input(placeholder="chat: press t, type, Enter", id="chat", compact=True, max_length=300)
                with Horizontal(id="controls"):
                    yield Button("+AI", id="add_ai", compact=True)
                    yield Button("-AI", id="remove_ai", compact=True)
                    yield Button("Rematch", id="rematch", compact=True)
                    yield Button("Resign", id="resign", compact=True, variant="error")
                    yield Button("Lobby", id="leave", compact=True)
        yield Footer()

    async def on_mount(self) -> None:
        """Draw what the room holds so far."""
        await self.refresh_view()

    async def on_model_changed(self, event: ModelChanged) -> None:
        """Redraw what changed in this room: the board for a new state, the delta for a tick, the panel, the
        log; announce a result."""
        changes = event.changes
        if self.model.room is not self.session:
            return  # the room is being closed; this screen goes away
        if changes.board:
            await self.refresh_view()
        elif changes.room:
            self.refresh_panel()
        if changes.tick is not None:
            self.show_tick(changes.tick)
        if changes.log:
            self.show_log()
        if changes.result is not None:
            self.show_game_over(changes.result)

    def on_resize(self) -> None:
        """The move list's columns follow the panel's width."""
        self.refresh_panel()

    # -- drawing what the session holds --------------------------------------------------------------------
    async def refresh_view(self) -> None:
        """Redraw everything from the session: board, texts, controls, title."""
        session = self.session
        await self._ensure_board()
        self._premove_due()
        # A live board may have drawn ticks past this state: it is shown again only once a newer state came.
        if self.board is not None and session.state is not None and session.state.seq >= (self.shown_seq or 0):
            show_position(self.board, self._position())
            self.shown_seq = session.state.seq
        self.refresh_panel()
        self.show_log()

    def refresh_panel(self) -> None:
        """Redraw the side panel and the controls (not the board)."""
        session = self.session
        title = self.model.lobby.title(session.game) if session.game else "room"
        watching = "" if session.playing else " · watching"
        self.title = f"{title} · room {session.code}{watching}"
        self.query_one("#status", Static).update(plain(status_text(session), style="bold"))
        players = self.query_one("#players", Static)
        players.update(players_text(session, players.content_size.width or None))
        self.query_one("#terms", Static).update(terms_text(session))
        self._show_clocks()
        self.query_one("#ai-info", Static).update(ai_text(session))
        self.query_one("#moves-heading", Label).update(moves_heading(session))
        moves = self.query_one("#moves", Static)
        moves.update(moves_text(session, moves.content_size.width or MOVES_WIDTH))
        self.query_one("#moves-box", VerticalScroll).scroll_end(animate=False)
        for control in CONTROLS:
            self.query_one(f"#{control}", Button).display = bool(self.check_action(control, ()))
        self.query_one("#move-row", Horizontal).display = self._typing()
        refresh_keys(self)

    def _show_clocks(self) -> None:
        """The clocks of the state shown (hidden without a clock)."""
        session = self.session
        clock = session.state.clock if session.state is not None else None
        labels = [session.label(seat) for seat in range(len(clock.remaining_ms))] if clock is not None else []
        mine = session.seat if session.playing else None
        self.query_one("#clocks", ClockView).show(clock, labels, session.flagged(), mine)

    async def _ensure_board(self) -> None:
        """Mount the board for the room's game once the game is known."""
        if self.board is not None or not self.session.game:
            return
        self.board = board_spec(self.session.game).widget(id="board")
        await self.query_one("#board-area", Container).mount(self.board)
        self.board.focus()

    def _position(self) -> Position:
        """What the board should draw now."""
        session = self.session
        state = session.state
        assert state is not None
        return Position(
            view=state.view,
            legal=tuple(str(m) for m in state.legal) if session.my_turn else (),
            can_move=session.my_turn,
            last_move=state.last_move,
            seat=session.seat if session.playing else None,
            status=state.status,
            countdown_ms=session.countdown_ms,
            premove=self.premove,
        )

    def show_tick(self, tick: Tick) -> None:
        """A live game's tick: the arena redraws only what moved (a tick the board is past is skipped)."""
        self.query_one("#moves", Static).update(ticks_text(self.session))  # the panel is redrawn per state only
        if self.board is None or self.shown_seq is None or tick.seq != self.shown_seq + 1:
            return
        if apply_delta(self.board, tick.view):
            self.shown_seq = tick.seq

    def show_log(self) -> None:
        """Add the session's new log lines to the room's log (events and players' chat) or, said by a spectator, to
        the Spectators tab."""
        lines = self.session.log[self.logged :]
        log, spectators = self.query_one("#log", RichLog), self.query_one("#spectator-log", RichLog)
        for line in lines:
            (spectators if line.spectator else log).write(plain(line.text, style=line.style))
        self.logged += len(lines)

    def show_game_over(self, result: Result) -> None:
        """The result dialog, with a rematch button for players and a review button for reviewed games."""
        session = self.session
        reviewed = session.game in REVIEWED_GAMES
        detail = describe_result(result, session)
        if result.ratings:
            detail += "\n" + rating_changes_text(result)
        self.app.push_screen(
            GameOverScreen(headline(result, session), detail, session.playing, reviewed),
            self._after_game_over,
        )

    def _after_game_over(self, choice: str | None) -> None:
        """Carry out the game-over dialog's choice."""
        if choice == REMATCH:
            self.action_rematch()
        elif choice == LOBBY:
            self.post_message(LeaveRoom())
        elif choice == REVIEW:
            self.post_message(OpenReview(room=self.session.code))

    def on_clock_view_low_time(self, event: ClockView.LowTime) -> None:
        """Your clock went under 10 s: the bell, once a game."""
        event.stop()
        if self.session.playing and self.low_time_rung != self.session.games_started:
            self.low_time_rung = self.session.games_started
            self.post_message(Ring())

    # -- typed moves and the premove (client/typed.py) -----------------------------------------------------------
    def _typing(self) -> bool:
        """Moves may be typed: you hold a seat in a running turn-based game."""
        session = self.session
        return session.playing and session.status == RoomStatus.PLAYING and not session.live

    def _syntax(self) -> Syntax | None:
        """The game's check of a typed move's form."""
        return board_spec(self.session.game).syntax if self.session.game else None

    def _view(self) -> Mapping[str, Any]:
        """The view of the state shown."""
        return self.session.state.view if self.session.state is not None else {}

    def _reading(self, text: str) -> Reading:
        """What the move line's text means: a move now on your turn, else a premove."""
        session = self.session
        if session.my_turn and session.state is not None:
            legal = [str(m) for m in session.state.legal]
            return read_move(text, legal, self._view(), self._syntax())
        return read_premove(text, self._view(), self._syntax())

    @on(Input.Changed, "#move-line")
    def _move_typed(self, event: Input.Changed) -> None:
        """Say what the text typed so far would play, its completions, or what is wrong with it (with nothing
        typed, the premove if there is one)."""
        if not event.value.strip():
            self._hint(self._premove_line())
            return
        reading = self._reading(event.value)
        if self.session.my_turn or reading.problem is not None or reading.move is None:
            self._hint(plain(reading.hint()))
        else:
            self._hint(plain(f"Enter queues {reading.move} as your premove"))

    @on(Input.Submitted, "#move-line")
    def _move_entered(self, event: Input.Submitted) -> None:
        """Play the typed move (or queue it on the opponent's turn); a text that is no move is never sent."""
        event.stop()
        if not self._typing():
            return
        reading = self._reading(event.value)
        if reading.move is None:
            text = reading.problem or (
                f"{reading.text} could be {len(reading.candidates)} moves" if reading.text else ""
            )
            if text:
                self.notify(text, severity="warning", timeout=3)
            return
        event.input.value = ""
        if self.session.my_turn:
            self.post_message(MoveChosen(reading.move))
        else:
            self._queue(reading.move)

    def on_premove(self, event: Premove) -> None:
        """A board clicked on the opponent's turn: queue that move."""
        event.stop()
        if self._typing() and not self.session.my_turn:
            self._queue(event.text)

    def _queue(self, move: str) -> None:
        """Keep `move` for your next turn (it replaces an earlier premove) and show it."""
        self.premove = move
        self._hint(self._premove_line())
        self._redraw_board()

    def _premove_line(self) -> Text:
        """The premove, under the move line (empty without one)."""
        if self.premove is None:
            return Text("")
        return Text.assemble("Premove ", (self.premove, "bold"), " · sent on your turn if legal · Esc cancels")

    def _cancel_premove(self, note: str | None) -> None:
        """Forget the premove, saying why (Esc: cancelled; your turn: dropped)."""
        self.premove = None
        self._hint(Text(""))
        if note:
            self.notify(note, timeout=3)
        self._redraw_board()

    def _premove_due(self) -> None:
        """On a new state: your turn sends the premove if it is legal (else drops it, saying why); a game that no
        longer runs drops it."""
        premove = self.premove
        session = self.session
        if premove is None:
            return
        if not self._typing():
            self.premove = None
        elif session.my_turn and session.state is not None:
            self.premove = None
            due = premove_due(premove, [str(m) for m in session.state.legal], self._view())
            if due.move is not None:
                self._hint(Text(""))
                self.post_message(MoveChosen(due.move))
            else:
                self._hint(plain(due.problem or ""))
                self.notify(due.problem or "", severity="warning", timeout=4)

    def _hint(self, text: Text) -> None:
        """The line under the move line."""
        self.query_one("#move-hint", Static).update(text)

    def _redraw_board(self) -> None:
        """Show the state's position again (the premove changed)."""
        if self.board is not None and self.session.state is not None and not self.session.live:
            show_position(self.board, self._position())

    def action_type_move(self) -> None:
        """Put the cursor in the move line."""
        if self._typing():
            self.query_one("#move-line", Input).focus()

    def action_escape(self) -> None:
        """Esc cancels the premove, and goes back from the chat or move line to the board."""
        if self.premove is not None:
            self._cancel_premove("Premove cancelled")
        self.query_one("#move-line", Input).value = ""
        self.action_focus_board()

    # -- input ------------------------------------------------------------------------------------------------
    @on(Input.Submitted, "#chat")
    def _chat(self, event: Input.Submitted) -> None:
        """Send a chat line."""
        event.stop()
        text = event.value.strip()
        if text:
            self.post_message(SendChat(text))
        event.input.value = ""

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """The control buttons run the same actions as the keys."""
        event.stop()
        action = getattr(self, f"action_{event.button.id}", None)
        if action is not None:
            action()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Show only the controls that make sense now, for you."""
        session = self.session
        if action in HOST_ACTIONS:
            if not session.can_host():
                return False
            seats = session.summary.seats if session.summary else ()
            if action in ("add_ai", "invite"):
                return any(s.open for s in seats)
            return any(s.kind == SeatKind.AI for s in seats)
        if action in PLAYER_ACTIONS:
            return session.playing and session.status == PLAYER_ACTIONS[action]
        if action == "takeback":
            return session.can_take_back()
        if action == "takeback_decline":
            return session.can_decline_takeback()
        if action == "moretime":
            return session.can_moretime()
        if action == "abort":
            return session.can_abort()
        if action == "copy_code":
            return session.status == RoomStatus.WAITING and any(s.open for s in self._seats())
        return True

    def _seats(self) -> tuple[Any, ...]:
        """The room's seats as last summarised (none before the first summary)."""
        summary = self.session.summary
        return tuple(summary.seats) if summary is not None else ()

    def action_copy_code(self) -> None:
        """Copy the room's code for a friend (the app puts it on the clipboard and shows it)."""
        self.post_message(CopyCode())

    def action_player_card(self) -> None:
        """The card of the next seated player (each press the next one, starting with the opponent)."""
        session = self.session
        seats = session.summary.seats if session.summary else ()
        names = [s.name for s in seats if not s.open and s.name]
        if not names:
            self.notify("Nobody sits here yet", severity="warning")
            return
        mine = self.model.name
        order = [n for n in names if n != mine] + [n for n in names if n == mine]
        self.card_turn += 1
        self.post_message(ShowPlayerCard(order[self.card_turn % len(order)]))

    def action_help(self) -> None:
        """Show every key."""
        self.app.push_screen(HelpScreen())

    def action_chat(self) -> None:
        """Put the cursor in the chat line."""
        self.query_one("#chat", Input).focus()

    def action_focus_board(self) -> None:
        """Back from the chat line to the board."""
        if self.board is not None:
            self.board.focus()

    def action_add_ai(self) -> None:
        """Seat an AI in the first open seat."""
        if self.check_action("add_ai", ()):
            self.post_message(AddAi())

    def action_invite(self) -> None:
        """Offer an open seat to someone online who takes this game (a bot, say)."""
        if self.check_action("invite", ()):
            self.post_message(OpenInvite())

    def action_remove_ai(self) -> None:
        """Free the last AI seat."""
        if self.check_action("remove_ai", ()):
            self.post_message(RemoveAi())

    def action_rematch(self) -> None:
        """Ask for another game."""
        if self.check_action("rematch", ()):
            self.post_message(Rematch())

    def action_resign(self) -> None:
        """Resign, after a confirmation."""
        if self.check_action("resign", ()):
            self.app.push_screen(ConfirmScreen("Resign this game?", yes="Resign", no="Play on"), self._resign)

    def _resign(self, yes: bool | None) -> None:
        """Resign if confirmed."""
        if yes:
            self.post_message(Resign())

    def action_takeback(self) -> None:
        """Ask to take back your last move, or accept the opponent's request."""
        if self.check_action("takeback", ()):
            self.post_message(Takeback())

    def action_takeback_decline(self) -> None:
        """Turn down the opponent's takeback request."""
        if self.check_action("takeback_decline", ()):
            self.post_message(TakebackDecline())

    def action_moretime(self) -> None:
        """Give the opponent 15 seconds."""
        if self.check_action("moretime", ()):
            self.post_message(MoreTime())

    def action_abort(self) -> None:
        """Abort a game still in its opening (`RoomSession.can_abort`), after a confirmation."""
        if self.check_action("abort", ()):
            self.app.push_screen(ConfirmScreen("Abort this game? Nobody wins.", yes="Abort", no="Wait"), self._abort)

    def _abort(self, yes: bool | None) -> None:
        """Abort if confirmed."""
        if yes:
            self.post_message(Abort())

    def action_leave(self) -> None:
        """Back to the lobby; a seated player in a running game is asked first (leaving resigns it, or aborts a
        rated game in its opening: `RoomSession.leave_question`)."""
        if self.session.playing and self.session.status == RoomStatus.PLAYING:
            question = ConfirmScreen(self.session.leave_question(), yes="Leave", no="Stay")
            self.app.push_screen(question, self._leave)
        else:
            self.post_message(LeaveRoom())

    def _leave(self, yes: bool | None) -> None:
        """Leave if confirmed."""
        if yes:
            self.post_message(LeaveRoom())
