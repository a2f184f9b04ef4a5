"""The Textual app: it owns the connection and the client's model, and routes server messages to screens.

Every server message arrives here as a `ServerMessage` and is handled in one place (`dispatch`):
the lobby and the room are updated, then the screen showing them is told to redraw. No server message
can crash the app: errors become notifications, unknown or unexpected messages are logged and dropped.
Multi-step requests (create a room, sit down, seat the AIs) run as workers that await each reply.
With a `session_key`, the resume token of each welcome is saved under that key, and the next run sends
it in its first hello: the server then gives back every seat, and the game screen opens at once.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from pathlib import PurePath
from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.worker import Worker

from gamenight.client.config import remember_name, remember_token, saved_token
from gamenight.client.connection import REPLACED, Connection, ConnectionChanged, NotConnected, ServerMessage
from gamenight.client.model import (
    CLOSED,
    DEFAULT_AI_LEVEL,
    FINISHED,
    PAUSED,
    PLAYER,
    PLAYING,
    SPECTATOR,
    Lobby,
    RoomPlan,
    RoomSession,
    RoomSummary,
    describe_event,
    quick_game_plan,
)
from gamenight.client.screens.dialogs import NameScreen
from gamenight.client.screens.game import GameScreen
from gamenight.client.screens.lobby import LobbyScreen
from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import (
    AddAi,
    Chat,
    CreateRoom,
    Error,
    Event,
    Join,
    Joined,
    Leave,
    Left,
    ListRooms,
    MakeMove,
    Message,
    Rematch,
    RemoveAi,
    Resign,
    RoomInfo,
    Rooms,
    State,
    Sync,
    Tick,
    Welcome,
)
from gamenight.protocol.vocab import Result

log = logging.getLogger("gamenight.client")

SEAT_LOST = (ErrorCode.SEAT_TAKEN, ErrorCode.ROOM_FULL, ErrorCode.NOT_ALLOWED)


class GameNightApp(App[None]):
    """gamenight's terminal client."""

    TITLE = "gamenight"
    CSS_PATH: ClassVar[list[str | PurePath]] = ["gamenight.tcss", "boards.tcss"]
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+c", "quit", "Quit", show=False, priority=True)]

    def __init__(self, url: str | None, name: str | None, *, save_name: bool = True,
                 session_key: str | None = None) -> None:
        super().__init__()
        self.url = url
        self.player_name = name
        self.save_name = save_name
        self.session_key = session_key  # where the resume token is saved ("local", or the URL); None: nowhere
        self.connection: Connection | None = None
        self.lobby = Lobby()
        self.room: RoomSession | None = None
        self.hosted: set[str] = set()  # rooms this session created (and so may seat AIs in)
        self.session_id: str | None = None
        self.lobby_screen = LobbyScreen()

    # -- start-up -------------------------------------------------------------------------------------
    def on_mount(self) -> None:
        """Show the lobby, then ask for a name (first start) or connect at once."""
        self.sub_title = "offline" if self.url is None else f"connecting to {self.url}"
        self.push_screen(self.lobby_screen)
        if self.player_name:
            self.start_connection()
        else:
            self.push_screen(NameScreen(), self._named)

    def _named(self, name: str | None) -> None:
        """The first-start dialog gave a name: remember it and connect."""
        self.player_name = name or "player"
        if self.save_name:
            remember_name(self.player_name)
        self.lobby_screen.refresh_rooms()
        self.start_connection()

    def start_connection(self) -> None:
        """Open the connection (a worker that reconnects by itself); nothing when offline."""
        if self.url is None or self.connection is not None:
            return
        token = saved_token(self.session_key) if self.session_key else None
        self.connection = Connection(self.url, self.player_name or "player", self.post_message, token=token)
        self.run_worker(self.connection.run(), name="connection", exit_on_error=False)

    async def on_unmount(self) -> None:
        """Close the connection when the app ends."""
        if self.connection is not None:
            await self.connection.close()

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        """Show the connection's state in every screen's header."""
        self.sub_title = event.status.describe()
        if event.status.state == REPLACED:
            self.notify("This session was opened in another gamenight window; this one is now offline",
                        severity="warning", timeout=10)

    # -- messages from the server ---------------------------------------------------------------------------
    async def on_server_message(self, event: ServerMessage) -> None:
        """Handle one server message; a failure here is logged and shown, never fatal."""
        try:
            await self.dispatch(event.message, quiet=event.quiet)
        except Exception:
            log.exception("could not handle a %s message", event.message.type)
            self.notify(f"Could not handle a {event.message.type!r} message from the server", severity="warning")

    async def dispatch(self, msg: Message, quiet: bool = False) -> None:
        """Route a server message to the model and the screens."""
        match msg:
            case Welcome():
                self._welcome(msg)
            case Rooms():
                self.lobby.set_rooms(msg.rooms)
                self.lobby_screen.refresh_rooms()
            case RoomInfo():
                await self._room_info(msg)
            case Joined():
                await self._joined(msg)
            case Left():
                if self.room is not None and self.room.code == msg.room:
                    self._close_room()
            case State():
                await self._state(msg)
            case Tick():
                self._tick(msg)
            case Event():
                await self._event(msg)
            case Error():
                if not quiet:
                    self.notify(msg.message, title=msg.code.replace("_", " "), severity="error")
            case _:
                log.info("ignoring a %s message", msg.type)

    def _welcome(self, msg: Welcome) -> None:
        """A (re)connection was welcomed: fresh games and rooms; after a reconnect, get the room back."""
        previous, self.session_id = self.session_id, msg.session
        if self.session_key and msg.token:
            remember_token(self.session_key, msg.token)
        self.lobby.set_games(msg.games)
        self.lobby.set_rooms(msg.rooms)
        self.lobby_screen.refresh_rooms()
        if previous is not None and self.room is not None:
            self._start(self._restore_room(resumed=msg.session == previous))

    async def _room_info(self, msg: RoomInfo) -> None:
        """A room appeared, changed or closed."""
        summary = self.lobby.update(msg)
        self.lobby_screen.refresh_rooms()
        room = self.room
        if room is None or room.code != msg.room:
            return
        if summary.status == CLOSED:
            self.notify(f"Room {msg.room} was closed", severity="warning")
            self._close_room()
            return
        room.summary = summary
        await self._redraw_room(full=room.state is None)

    async def _joined(self, msg: Joined) -> None:
        """You sat down or started watching (or the server told you your seat again)."""
        room = self.room
        if room is not None and room.code == msg.room:
            # A resume or a rematch's rotation tells us our seat again: take the server's word for it.
            room.role, room.seat = msg.role, msg.seat
            await self._redraw_room(full=True)
            return
        if room is not None and msg.id is None:
            # A resumed session holding seats in several rooms: stay in this one, point at the other.
            self.notify(f"You also hold a seat in room {msg.room}", timeout=6)
            return
        if room is not None:
            self._close_room()
        summary = self.lobby.rooms.get(msg.room)
        room = RoomSession(msg.room, msg.role, msg.seat, host=msg.room in self.hosted or self._hosts(summary),
                           games=self.lobby.games)
        room.summary = summary
        self.room = room
        if msg.id is None and msg.role == PLAYER and self.connection is not None and self.connection.resumed:
            self.notify(f"Welcome back: you are in room {msg.room} again", timeout=4)
        await self.push_screen(GameScreen(room))

    def _hosts(self, summary: RoomSummary | None) -> bool:
        """After a resume, whether the room's host is this (same) session: the server names the host."""
        resumed = self.connection is not None and self.connection.resumed
        return resumed and summary is not None and summary.host == self.player_name

    async def _state(self, msg: State) -> None:
        """A full snapshot of the room's game."""
        room = self.room
        if room is None or room.code != msg.room:
            return
        replayed, before = room.syncing, room.status
        room.apply_state(msg)
        if replayed and msg.status == FINISHED and before in (PLAYING, PAUSED):
            # The game ended while we were away: its game_over event came in the replay, unannounced.
            self._announce_result(msg)
        await self._redraw_room(full=True)

    def _tick(self, msg: Tick) -> None:
        """A live game's delta; a gap in seq means ticks were missed, so ask for the full state."""
        room = self.room
        if room is None or room.code != msg.room or room.state is None:
            return
        if room.apply_tick(msg.seq):
            screen = self._game_screen()
            if screen is not None:
                screen.apply_tick(msg)
        elif msg.seq > room.seq and not room.syncing:
            room.syncing = True
            self._send(Sync(room=room.code, seq=room.seq))

    async def _event(self, msg: Event) -> None:
        """Something happened in the room: log it, and react to passes and the end of the game."""
        room = self.room
        if room is None or room.code != msg.room or not room.apply_event(msg):
            return
        screen = self._game_screen()
        text = describe_event(msg, room)
        if msg.kind == "chat":
            text = f"{msg.data.get('name', '?')}: {msg.data.get('text', '')}"
        if screen is None:
            return
        if text:
            screen.add_log(text, "bold" if msg.kind == "game_over" else "")
        if msg.kind == "pass" and text:
            self.notify(text, timeout=4)
        if msg.kind == "game_over" and not room.syncing:
            screen.refresh_panel()
            screen.show_game_over(Result.from_plain(msg.data))
        elif msg.kind in ("move", "joined", "left"):
            screen.refresh_panel()

    def _announce_result(self, state: State) -> None:
        """Show the result dialog for a game whose end arrived as a state."""
        screen = self._game_screen()
        if screen is not None and state.result is not None:
            screen.show_game_over(state.result)

    # -- the room's screen ----------------------------------------------------------------------------------
    def _game_screen(self) -> GameScreen | None:
        """The game screen on the stack, if any (a dialog may be on top of it)."""
        return next((s for s in self.screen_stack if isinstance(s, GameScreen)), None)

    async def _redraw_room(self, full: bool) -> None:
        """Tell the game screen the room changed."""
        screen = self._game_screen()
        if screen is None:
            return
        if full:
            await screen.refresh_view()
        else:
            screen.refresh_panel()

    def _close_room(self) -> None:
        """Forget the room and go back to the lobby."""
        room, self.room = self.room, None
        if room is not None:
            summary = self.lobby.rooms.get(room.code)
            if summary is not None and summary.private:
                self.lobby.rooms.pop(room.code)  # its updates stop now that we are not a member
        while len(self.screen_stack) > 1 and self.screen is not self.lobby_screen:
            self.pop_screen()
        self.lobby_screen.refresh_rooms()
        if self.connection is not None:
            self.refresh_rooms()  # room pushes stop while we sit in a room; catch up on the lobby

    # -- requests --------------------------------------------------------------------------------------------
    def _send(self, msg: Message) -> int | None:
        """Send a request; if there is no connection, say so instead."""
        if self.connection is None:
            self.notify("Not connected to a server", severity="error")
            return None
        try:
            return self.connection.send(msg)
        except NotConnected:
            self.notify("Not connected — waiting for the server to come back", severity="error")
            return None

    def _start(self, flow: Awaitable[None]) -> Worker[None]:
        """Run a multi-step request flow as a worker; a lost connection ends it with a notice."""
        return self.run_worker(self._guarded(flow), group="requests", exit_on_error=False)

    async def _guarded(self, flow: Awaitable[None]) -> None:
        """Await a flow, turning connection trouble into a notification."""
        try:
            await flow
        except NotConnected:
            self.notify("Not connected — waiting for the server to come back", severity="error")
        except TimeoutError:
            self.notify("The server did not answer in time", severity="error")

    async def _request(self, msg: Message, quiet: bool = False) -> Message:
        """Send a request and wait for its reply."""
        if self.connection is None:
            raise NotConnected("offline")
        return await self.connection.request(msg, quiet=quiet)

    async def ask(self, msg: Message) -> Message | None:
        """A request for a screen (the history, a replay): its reply, or None (and a notice) if none came."""
        try:
            return await self._request(msg)
        except NotConnected:
            self.notify("Not connected — waiting for the server to come back", severity="error")
        except TimeoutError:
            self.notify("The server did not answer in time", severity="error")
        return None

    def quick_game(self) -> None:
        """New game against the AI: default Othello, you as black, AI level 3 as white."""
        self.create_room(quick_game_plan())

    def create_room(self, plan: RoomPlan) -> None:
        """Create a room from a plan, then sit down (or watch) and seat its AIs."""
        self._start(self._create_room(plan))

    async def _create_room(self, plan: RoomPlan) -> None:
        """The create flow: create_room, then my join, then each add_ai."""
        reply = await self._request(CreateRoom(game=plan.game, options=dict(plan.options), private=plan.private))
        if not isinstance(reply, RoomInfo):
            return
        self.hosted.add(reply.room)
        self.lobby.rooms[reply.room] = reply.summary
        for request in plan.follow_up(reply.room):
            if isinstance(request, Join):
                if not isinstance(await self._request(request), Joined):
                    return
            else:
                self._send(request)

    def join_room(self, code: str, role: str) -> None:
        """Sit down in (or watch) a room; a player who finds no free seat watches instead."""
        self._start(self._join_room(code, role))

    async def _join_room(self, code: str, role: str) -> None:
        """The join flow, with the fall-back to watching."""
        reply = await self._request(Join(room=code, role=role), quiet=role == PLAYER)
        if isinstance(reply, Error) and role == PLAYER:
            if reply.code in SEAT_LOST:
                self.notify(f"{reply.message} — watching instead", severity="warning")
                await self._request(Join(room=code, role=SPECTATOR))
            else:
                self.notify(reply.message, title=reply.code.replace("_", " "), severity="error")

    async def _restore_room(self, resumed: bool) -> None:
        """After a reconnect: a resumed player gets the seat back from the server (`joined` and the
        state follow the welcome); anyone else sits down again (or watches) and asks for what was missed."""
        room = self.room
        if room is None or (resumed and room.playing):
            return
        if not resumed:
            room.host = False  # host rights belong to the old session
        reply = await self._request(Join(room=room.code, role=room.role, seat=room.seat), quiet=True)
        if isinstance(reply, Error) and reply.code == ErrorCode.UNKNOWN_ROOM:
            self.notify(f"Room {room.code} is gone", severity="warning")
            self._close_room()
            return
        if isinstance(reply, Error):
            self.notify("Your seat could not be restored; you are watching", severity="warning")
            await self._request(Join(room=room.code, role=SPECTATOR))
        room.syncing = True
        self._send(Sync(room=room.code, seq=room.seq))

    def refresh_rooms(self) -> None:
        """Ask for the room list again."""
        self._send(ListRooms())

    def leave_room(self) -> None:
        """Leave the room (the reply takes us back to the lobby)."""
        if self.room is not None:
            self._send(Leave(room=self.room.code))

    def send_move(self, text: str) -> None:
        """Play a move; turn-based moves carry the seq they were made on, so stale clicks are refused."""
        room = self.room
        if room is None or room.state is None:
            return
        simultaneous = self.lobby.games.get(room.game)
        live = simultaneous.simultaneous if simultaneous else room.state.next_tick_ms is not None
        self._send(MakeMove(room=room.code, move=text, seq=None if live else room.seq))

    def send_chat(self, text: str) -> None:
        """Say something in the room."""
        if self.room is not None:
            self._send(Chat(room=self.room.code, text=text))

    def add_ai(self, level: int = DEFAULT_AI_LEVEL) -> None:
        """Seat an AI in the first open seat."""
        if self.room is not None:
            self._send(AddAi(room=self.room.code, level=level))

    def remove_ai(self) -> None:
        """Free the last seat an AI holds."""
        room = self.room
        if room is None or room.summary is None:
            return
        seats = [s.seat for s in room.summary.seats if s.kind == "ai"]
        if seats:
            self._send(RemoveAi(room=room.code, seat=seats[-1]))

    def rematch(self) -> None:
        """Offer (or accept) a rematch."""
        if self.room is not None and self._send(Rematch(room=self.room.code)) is not None:
            self.notify("Rematch asked for; it starts when every player agrees", timeout=3)

    def resign(self) -> None:
        """Concede the game."""
        if self.room is not None:
            self._send(Resign(room=self.room.code))


def run_app(url: str, name: str | None, **options: Any) -> int:
    """Run the client until the user quits (options: `session_key`, ...); the exit status for the shell."""
    GameNightApp(url, name, **options).run()
    return 0
