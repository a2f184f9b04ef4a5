"""The Textual app: it owns the connection and the client state, and turns the screens' requests into
protocol messages.

A server message takes one path: the connection posts it as a `ServerMessage`; `on_server_message`
applies it to the `ClientState` (the reducer, `client.state`), which returns the `Changes`; the app
carries out what they ask (notices, a sync to send, the game screen to open or close, the replay to
show) and posts one `ModelChanged` to each screen, which redraws from the state. No server message can
crash the app: a failure is logged and shown as a notice.

Screens post requests up (`client.messages`: `MoveChosen`, `Resign`, `CreateRoom`, `JoinRoom`, ...); the
handlers below send them. Multi-step requests (create a room, sit down, seat the AIs) run as workers
that await each reply. With a `session_key`, the resume token of each welcome is saved under that key,
and the next run sends it in its first hello: the server then gives back every seat, and the game
screen opens at once.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from pathlib import PurePath
from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.worker import Worker

from gamenight.client import messages as ui
from gamenight.client.config import remember_name, remember_token, saved_token, sound_on
from gamenight.client.connection import REPLACED, NotConnected
from gamenight.client.link import Connect, ConnectionChanged, ServerLink, ServerMessage, open_connection
from gamenight.client.model import DEFAULT_AI_LEVEL, RoomPlan, quick_game_plan
from gamenight.client.presence import Ask, offer_text
from gamenight.client.replay import Replay
from gamenight.client.review import REVIEWED_GAMES, Review, review_of
from gamenight.client.screens.challenge import InvitePlan, InviteScreen, OfferScreen
from gamenight.client.screens.dialogs import NameScreen
from gamenight.client.screens.game import GameScreen
from gamenight.client.screens.history import HistoryScreen, ReplayScreen
from gamenight.client.screens.lobby import LobbyScreen
from gamenight.client.screens.ratings import (
    AskRatings,
    LeaderboardScreen,
    PlayerCardScreen,
    ShowLeaderboard,
    ShowPlayerCard,
)
from gamenight.client.screens.review import ReviewScreen, review_screen
from gamenight.client.screens.tournaments import (
    OpenTournament,
    ReplayTournamentGame,
    SendTournament,
    ShowTournaments,
    TournamentScreen,
    TournamentsScreen,
)
from gamenight.client.state import Changes, ClientState
from gamenight.client.widgets import board_spec
from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import (
    Abort,
    Accept,
    AddAi,
    Analyse,
    ChallengeRequest,
    Chat,
    CreateRoom,
    CreateTournament,
    Decline,
    Error,
    GameRecord,
    Games,
    GetGame,
    Invite,
    Join,
    Joined,
    Leave,
    ListGames,
    ListPlayers,
    ListRooms,
    LobbyWatch,
    MakeMove,
    Message,
    Moderate,
    MoreTime,
    Players,
    Profile,
    Rematch,
    RemoveAi,
    Resign,
    RoomInfo,
    Takeback,
    TakebackDecline,
    TournamentInfo,
)
from gamenight.protocol.vocab import Role

log = logging.getLogger("gamenight.client")

SEAT_LOST = (ErrorCode.SEAT_TAKEN, ErrorCode.ROOM_FULL, ErrorCode.NOT_ALLOWED)
OFFLINE = "Not connected — waiting for the server to come back"


class GameNightApp(App[None]):
    """gamenight's terminal client."""

    TITLE = "gamenight"
    CSS_PATH: ClassVar[list[str | PurePath]] = ["gamenight.tcss", "boards.tcss"]
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+c", "quit", "Quit", show=False, priority=True)]

    def __init__(
        self,
        url: str | None,
        name: str | None,
        *,
        save_name: bool = True,
        session_key: str | None = None,
        connect: Connect = open_connection,
        quiet: bool = False,
    ) -> None:
        super().__init__()
        self.url = url
        self.sound = not quiet and sound_on()  # the terminal bell on your move, a challenge, low time, ...
        self.save_name = save_name
        self.session_key = session_key  # where the resume token is saved ("local", or the URL); None: nowhere
        self.connect = connect
        self.connection: ServerLink | None = None
        self.model = ClientState(name)
        self.lobby_screen = LobbyScreen(self.model)
        self.welcomed = False  # the current connection was welcomed (lobby requests wait for it)
        self.lobby_watch: bool | None = None  # the lobby_watch last sent on the current connection

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Show a toast as plain text, whatever `markup` says: toasts carry names, reasons and the server's
        messages, never markup of ours (client/plain.py). Every toast of every screen and widget comes here."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    # -- start-up -------------------------------------------------------------------------------------
    def on_mount(self) -> None:
        """Show the lobby, then ask for a name (first start) or connect at once."""
        self.sub_title = "offline" if self.url is None else f"connecting to {self.url}"
        self.push_screen(self.lobby_screen)
        if self.model.name:
            self.start_connection()
        else:
            self.push_screen(NameScreen(), self._named)

    def _named(self, name: str | None) -> None:
        """The first-start dialog gave a name: remember it and connect."""
        self.model.name = name or "player"
        if self.save_name:
            remember_name(self.model.name)
        self.lobby_screen.refresh_rooms()
        self.start_connection()

    def _renamed(self, name: str | None) -> None:
        """The server refused our name and the player chose another: remember it and connect again under it."""
        self.connection = None  # the refused connection has stopped
        self._named(name)

    def start_connection(self) -> None:
        """Open the connection (a worker that reconnects by itself); nothing when offline."""
        if self.url is None or self.connection is not None:
            return
        token = saved_token(self.session_key) if self.session_key else None
        self.connection = self.connect(self.url, self.model.name or "player", self.post_message, token)
        self.run_worker(self.connection.run(), name="connection", exit_on_error=False)

    async def on_unmount(self) -> None:
        """Close the connection when the app ends."""
        if self.connection is not None:
            await self.connection.close()

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        """Show the connection's state in every screen's header."""
        self.sub_title = event.status.describe()
        self.welcomed, self.lobby_watch = False, None  # a new connection (or none): its welcome comes first
        if event.status.state == REPLACED:
            self.notify(
                "This session was opened in another gamenight window; this one is now offline",
                severity="warning",
                timeout=10,
            )

    # -- messages from the server ---------------------------------------------------------------------------
    async def on_server_message(self, event: ServerMessage) -> None:
        """Handle one server message; a failure here is logged and shown, never fatal."""
        try:
            await self.receive(event.message, quiet=event.quiet)
        except Exception:
            log.exception("could not handle a %s message", event.message.type)
            self.notify(f"Could not handle a {event.message.type!r} message from the server", severity="warning")

    async def receive(self, message: Message, quiet: bool = False) -> Changes:
        """Apply a server message to the state, carry out what it asks, and tell the screens."""
        resumed = self.connection is not None and self.connection.resumed
        changes = self.model.apply(message, quiet=quiet, resumed=resumed)
        await self._tell_screens(changes)
        return changes

    async def _carry_out(self, changes: Changes) -> None:
        """The effects of a change that belong to the app: saved token, notices, requests, screens."""
        if changes.token and self.session_key:
            remember_token(self.session_key, changes.token)
        if changes.welcomed:
            self.welcomed = True
            self._ask_reviews_again()
        if changes.bell:
            self.ring()
        for notice in changes.notices:
            self.notify(notice.text, title=notice.title, severity=notice.severity, timeout=notice.timeout)
        if self.connection is not None:  # offline, the state's own requests (a sync, list_players) wait
            for request in changes.requests:
                sent = self._send(request)
                if isinstance(request, Profile):  # a player of my room: their rating (ClientState._ask_ratings)
                    self.model.asked_seat_card(sent, request.name)
        if changes.closed:
            self._back_to_lobby()
        if changes.entered is not None:
            self._pop_game_screens()
            await self.push_screen(GameScreen(self.model, changes.entered))
        if changes.record is not None:
            await self._open_replay(changes.record)
        if changes.restore is not None:
            self._start(self._restore_room(resumed=changes.restore))
        for gone in changes.offers_gone:
            self._close_offer(gone)
        if changes.offered is not None:
            offer = changes.offered
            text = offer_text(offer, self.model.lobby.games)
            await self.push_screen(OfferScreen(offer, text), lambda accept: self._answer(offer.id, accept))
        if changes.name_taken is not None:
            taken = self.model.name
            await self.push_screen(NameScreen(taken, changes.name_taken or None), self._renamed)

    def ring(self) -> None:
        """The terminal bell, unless the player asked for quiet (`--quiet`, or `"sound": false` in the config)."""
        if self.sound:
            self.bell()

    def on_ring(self, _: ui.Ring) -> None:
        """A screen asks for the bell (your clock's low time)."""
        self.ring()

    def on_copy_code(self, _: ui.CopyCode) -> None:
        """My room's code to the clipboard (OSC 52: the terminal's, or in the web front door the browser's), and in a
        toast too, for terminals that do not let programs copy."""
        if self.model.room is not None:
            code = self.model.room.code  # the server's code (letters and digits); `notify` shows it as plain text
            self.copy_to_clipboard(code)
            self.notify(f"Room code {code} copied: a friend joins with o and the code", timeout=8)

    def _close_offer(self, challenge: str) -> None:
        """An offer to me ended: close its dialog (at once, or when the screens above it close)."""
        for screen in self.screen_stack:
            if isinstance(screen, OfferScreen) and screen.offer.id == challenge:
                screen.withdraw()

    def _answer(self, challenge: str, accept: bool | None) -> None:
        """The offer dialog closed: accept or decline (nothing when it closed because the offer ended)."""
        if accept is None:
            return
        self.model.presence.answering(challenge)
        self._send(Accept(challenge=challenge) if accept else Decline(challenge=challenge))

    def _pop_game_screens(self) -> None:
        """Close every screen above the lobby (a room's screen and its dialogs)."""
        while len(self.screen_stack) > 1 and self.screen is not self.lobby_screen:
            self.pop_screen()

    def _back_to_lobby(self) -> None:
        """The room is gone: back to the lobby (which, shown again, asks for its pushes and the first page)."""
        self._pop_game_screens()
        if self.connection is not None and self.connection.connected:
            self._send(ListPlayers())  # presence is pushed only to the lobby's watchers: catch up on it

    async def _open_replay(self, record: GameRecord) -> None:
        """Show the replay viewer on a finished game's record."""
        game = str(record.record.get("game", ""))
        replay = Replay(record.record, record.frames, self.model.lobby.games.get(game), board_spec(game).fold)
        await self.push_screen(ReplayScreen(self.model, replay))

    # -- requests --------------------------------------------------------------------------------------------
    def _send(self, msg: Message) -> int | None:
        """Send a request; if there is no connection, say so instead."""
        if self.connection is None:
            self.notify("Not connected to a server", severity="error")
            return None
        try:
            return self.connection.send(msg)
        except NotConnected:
            self.notify(OFFLINE, severity="error")
            return None

    def _start(self, flow: Awaitable[None]) -> Worker[None]:
        """Run a multi-step request flow as a worker; a lost connection ends it with a notice."""
        return self.run_worker(self._guarded(flow), group="requests", exit_on_error=False)

    async def _guarded(self, flow: Awaitable[None]) -> None:
        """Await a flow, turning connection trouble into a notification."""
        try:
            await flow
        except NotConnected:
            self.notify(OFFLINE, severity="error")
        except TimeoutError:
            self.notify("The server did not answer in time", severity="error")

    async def _request(self, msg: Message, quiet: bool = False) -> Message:
        """Send a request and wait for its reply."""
        if self.connection is None:
            raise NotConnected("offline")
        return await self.connection.request(msg, quiet=quiet)

    async def _create_room(self, plan: RoomPlan) -> None:
        """The create flow: create_room, then my join, then each add_ai."""
        reply = await self._request(CreateRoom(game=plan.game, options=dict(plan.options), private=plan.private))
        if not isinstance(reply, RoomInfo):
            return
        self.model.created(reply.summary)
        for request in plan.follow_up(reply.room):
            if isinstance(request, Join):
                if not isinstance(await self._request(request), Joined):
                    return
            else:
                self._send(request)

    async def _join_room(self, code: str, role: Role) -> None:
        """The join flow, with the fall-back to watching."""
        reply = await self._request(Join(room=code, role=role), quiet=role == Role.PLAYER)
        if isinstance(reply, Error) and role == Role.PLAYER:
            if reply.code in SEAT_LOST:
                self.notify(f"{reply.message} — watching instead", severity="warning")
                await self._request(Join(room=code, role=Role.SPECTATOR))
            else:
                self.notify(reply.message, title=reply.code.replace("_", " "), severity="error")

    async def _restore_room(self, resumed: bool) -> None:
        """After a reconnect: a resumed player gets the seat back from the server (`joined` and the
        state follow the welcome); anyone else sits down again (or watches) and asks for what was missed."""
        room = self.model.room
        if room is None or (resumed and room.playing):
            return
        reply = await self._request(Join(room=room.code, role=room.role, seat=room.seat), quiet=True)
        if isinstance(reply, Error) and reply.code == ErrorCode.UNKNOWN_ROOM:
            self.notify(f"Room {room.code} is gone", severity="warning")
            await self._tell_screens(self.model.leave_room())
            return
        if isinstance(reply, Error):
            self.notify("Your seat could not be restored; you are watching", severity="warning")
            await self._request(Join(room=room.code, role=Role.SPECTATOR))
        sync = self.model.syncing()
        if sync is not None:
            self._send(sync)

    async def _tell_screens(self, changes: Changes) -> None:
        """Carry out what a change asks of the app, then tell every screen (each redraws what concerns it)."""
        await self._carry_out(changes)
        for screen in self.screen_stack:
            screen.post_message(ui.ModelChanged(changes))

    # -- what the screens ask for ------------------------------------------------------------------------------
    def on_quick_game(self, event: ui.QuickGame) -> None:
        """New game against the AI: the quick menu's choice (by default Othello, you as black, AI level 3)."""
        self._start(self._create_room(event.plan or quick_game_plan()))

    def on_create_room(self, event: ui.CreateRoom) -> None:
        """Create a room from a plan, then sit down (or watch) and seat its AIs."""
        self._start(self._create_room(event.plan))

    def on_join_room(self, event: ui.JoinRoom) -> None:
        """Sit down in (or watch) a room; a player who finds no free seat watches instead."""
        self._start(self._join_room(event.code, event.role))

    def on_refresh_rooms(self, _: ui.RefreshRooms) -> None:
        """Ask for the room list again."""
        self._send(ListRooms())

    def on_watch_lobby(self, event: ui.WatchLobby) -> None:
        """The lobby is shown (pushes on, and a fresh first page) or hidden (pushes off); nothing while offline:
        the welcome of the next connection makes the lobby ask again."""
        if self.connection is None or not self.connection.connected or not self.welcomed:
            return
        if event.on == self.lobby_watch:
            return  # asked already on this connection
        self.lobby_watch = event.on
        self._send(LobbyWatch(on=event.on))
        if event.on:
            self._send(ListRooms())

    def on_more_rooms(self, _: ui.MoreRooms) -> None:
        """Ask for the next page of the room list (once at a time)."""
        lobby = self.model.lobby
        if lobby.page_pending or not lobby.has_more:
            return
        if self._send(ListRooms(offset=lobby.next_offset)) is not None:
            lobby.page_pending = True

    def on_refresh_players(self, _: ui.RefreshPlayers) -> None:
        """Ask who is online again."""
        self._send(ListPlayers())

    def on_challenge(self, event: ui.Challenge) -> None:
        """Challenge an online player; the reply (challenge_sent or a refusal) reaches the state."""
        request = ChallengeRequest(to=event.to, game=event.game, options=dict(event.options), seat=event.seat)
        self.model.presence.asking(self._send(request), Ask(event.to, event.game))

    def on_moderate(self, event: ui.Moderate) -> None:
        """An admin's action; its reply (`moderated`, once in the audit log, or a refusal) reaches the state."""
        request = Moderate(
            action=event.action,
            reason=event.reason,
            target=event.target,
            room=event.room,
            duration_s=event.duration_s,
            since=event.since,
            until=event.until,
        )
        self._send(request)

    def on_withdraw(self, event: ui.Withdraw) -> None:
        """Take back a challenge of mine (`decline` of my own challenge)."""
        self._send(Decline(challenge=event.challenge))

    def on_open_invite(self, _: ui.OpenInvite) -> None:
        """Ask who is online now, then offer the choice of a seat and a player."""
        self._start(self._invite_flow())

    async def _invite_flow(self) -> None:
        """The invite dialog over a fresh online list (presence is not pushed to people in a room)."""
        room = self.model.room
        if room is None or room.summary is None:
            return
        reply = await self._request(ListPlayers())
        if not isinstance(reply, Players):
            return
        me, game = self.model.name, room.game
        takers = [p for p in reply.players if p.online and game in p.games and p.name != me]
        seats = [(f"{room.label(s.seat)} (seat {s.seat + 1})", s.seat) for s in room.summary.seats if s.open]
        if not seats:
            self.notify("No open seat to offer", severity="warning")
        elif not takers:
            title = self.model.lobby.title(room.game)
            self.notify(f"Nobody online takes invites for {title} right now", severity="warning")
        else:
            await self.push_screen(InviteScreen(seats, takers), self._invite_chosen)

    def _invite_chosen(self, plan: InvitePlan | None) -> None:
        """The invite dialog closed: offer the seat."""
        room = self.model.room
        if plan is not None and room is not None:
            self.on_invite(ui.Invite(plan.seat, plan.to))

    def on_invite(self, event: ui.Invite) -> None:
        """Offer an open seat of my room to an online player."""
        room = self.model.room
        if room is not None:
            request = Invite(room=room.code, seat=event.seat, to=event.to)
            self.model.presence.asking(self._send(request), Ask(event.to, room.game, room.code))

    def on_open_history(self, _: ui.OpenHistory) -> None:
        """Show the history of finished games (it asks for its list once shown)."""
        if self.connection is None or not self.connection.connected:
            self.notify("Not connected to a server yet", severity="warning")
            return
        self.push_screen(HistoryScreen(self.model))

    def on_load_history(self, event: ui.LoadHistory) -> None:
        """Ask for a list of finished games; its reply fills the history."""
        self.model.asked_history(event.request, self._send(event.request))

    # -- ratings (client/screens/ratings.py) -------------------------------------------------------------------
    def on_show_leaderboard(self, _: ShowLeaderboard) -> None:
        """Show the leaderboards (the screen asks for its first page once shown)."""
        if self.connection is None or not self.connection.connected:
            self.notify("Not connected to a server yet", severity="warning")
            return
        self.push_screen(LeaderboardScreen(self.model))

    def on_show_player_card(self, event: ShowPlayerCard) -> None:
        """Show a player's card (it asks for the card once shown)."""
        if self.connection is None or not self.connection.connected:
            self.notify("Not connected to a server yet", severity="warning")
            return
        self.push_screen(PlayerCardScreen(self.model, event.name))

    def on_ask_ratings(self, event: AskRatings) -> None:
        """Send a leaderboard or profile request; its reply fills the client state's ratings."""
        self.model.asked_ratings(event.request, self._send(event.request))

    # -- tournaments (client/screens/tournaments.py) ---------------------------------------------------------------
    def on_show_tournaments(self, _: ShowTournaments) -> None:
        """Show the tournaments list (it asks for the list once shown)."""
        if self.connection is None or not self.connection.connected:
            self.notify("Not connected to a server yet", severity="warning")
            return
        self.push_screen(TournamentsScreen(self.model))

    def on_open_tournament(self, event: OpenTournament) -> None:
        """Show one tournament (it asks for it, and its pushes follow)."""
        self.push_screen(TournamentScreen(self.model, event.tournament))

    def on_send_tournament(self, event: SendTournament) -> None:
        """Send a tournament request; a new tournament's reply opens its screen."""
        if isinstance(event.request, CreateTournament):
            self._start(self._host_tournament(event.request))
        else:
            self._send(event.request)

    def on_replay_tournament_game(self, event: ReplayTournamentGame) -> None:
        """Find a tournament game in the history and open its replay."""
        self._start(self._replay_tournament_game(event.room, event.players))

    async def _replay_tournament_game(self, room: str, players: tuple[str, ...]) -> None:
        """The newest finished game of `room` with these players, replayed (the reply opens the viewer)."""
        reply = await self._request(ListGames(room=room, limit=5))
        if not isinstance(reply, Games):
            return
        for entry in reply.games:
            names = tuple(str(p.get("name")) for p in entry.get("players", []) if isinstance(p, dict))
            if names == players:
                self.model.asked_replay(self._send(GetGame(game_id=int(entry["game_id"]))))
                return
        self.notify("That game is not in the history", severity="warning")

    async def _host_tournament(self, request: CreateTournament) -> None:
        """Host a tournament and open its screen (a refusal is shown as a notice by the reply itself)."""
        reply = await self._request(request)
        if not isinstance(reply, TournamentInfo):
            return
        playing = self.model.room is not None and self.model.room.code in {g.get("room") for g in reply.games}
        if not playing:  # seated in its first game already: the game screen stays in front
            await self.push_screen(TournamentScreen(self.model, reply.tournament))

    def on_open_replay(self, event: ui.OpenReplay) -> None:
        """Ask for one finished game; its reply opens the replay viewer."""
        self.model.asked_replay(self._send(GetGame(game_id=event.game_id)))

    # -- game review (client/screens/review.py, issue 36) ------------------------------------------------------------
    def on_open_review(self, event: ui.OpenReview) -> None:
        """Fetch a finished game, open the review screen on it and ask for its analysis."""
        self._start(self._open_review(event.game_id, event.room))

    async def _open_review(self, game_id: int | None, room: str | None) -> None:
        """The review flow: the game's id (the room's latest game, when opened from the game-over dialog), its
        record, the screen, then `analyse` (the analysis, or its progress, reaches the screen as it comes)."""
        if game_id is None:
            listed = await self._request(ListGames(room=room, limit=1))
            if not isinstance(listed, Games) or not listed.games:
                self.notify("That game is not in the history", severity="warning")
                return
            game_id = int(listed.games[0]["game_id"])
        reply = await self._request(GetGame(game_id=game_id))
        if not isinstance(reply, GameRecord):
            return  # the refusal was shown as a notice
        game = str(reply.record.get("game", ""))
        if game not in REVIEWED_GAMES:
            self.notify(f"{self.model.lobby.title(game)} games are not reviewed", severity="warning")
            return
        replay = Replay(reply.record, reply.frames, self.model.lobby.games.get(game), board_spec(game).fold)
        review = review_of(replay)
        await self.push_screen(review_screen(self.model, review), lambda _: self._review_closed(review))
        self._send(Analyse(game_id=game_id))

    def _ask_reviews_again(self) -> None:
        """A (re)connection was welcomed: a dropped connection stopped waiting for its analyses on the server, so
        each review screen still waiting asks again (a finished analysis comes back at once from the store)."""
        for screen in self.screen_stack:
            if isinstance(screen, ReviewScreen) and not screen.review.analysed:
                self._send(Analyse(game_id=screen.review.game_id))

    def _review_closed(self, review: Review) -> None:
        """The review screen closed: if its analysis has not come, the server may stop making it for us."""
        if not review.analysed and self.connection is not None and self.connection.connected:
            self._send(Analyse(game_id=review.game_id, cancel=True))

    def on_move_chosen(self, event: ui.MoveChosen) -> None:
        """Play a move; turn-based moves carry the seq they were made on, so stale clicks are refused."""
        room = self.model.room
        if room is None or room.state is None:
            return
        self._send(MakeMove(room=room.code, move=event.text, seq=None if room.live else room.seq))

    def on_send_chat(self, event: ui.SendChat) -> None:
        """Say something in the room."""
        if self.model.room is not None:
            self._send(Chat(room=self.model.room.code, text=event.text))

    def on_add_ai(self, event: ui.AddAi) -> None:
        """Seat an AI in the first open seat."""
        if self.model.room is not None:
            self._send(AddAi(room=self.model.room.code, level=event.level or DEFAULT_AI_LEVEL))

    def on_remove_ai(self, _: ui.RemoveAi) -> None:
        """Free the last seat an AI holds."""
        room = self.model.room
        seats = room.ai_seats() if room is not None else []
        if room is not None and seats:
            self._send(RemoveAi(room=room.code, seat=seats[-1]))

    def on_rematch(self, _: ui.Rematch) -> None:
        """Offer (or accept) a rematch (the server's `rematch` event says whether it waits for others: a notice)."""
        if self.model.room is not None:
            self._send(Rematch(room=self.model.room.code))

    def on_resign(self, _: ui.Resign) -> None:
        """Concede the game."""
        if self.model.room is not None:
            self._send(Resign(room=self.model.room.code))

    def on_more_time(self, _: ui.MoreTime) -> None:
        """Give the opponent 15 seconds."""
        if self.model.room is not None:
            self._send(MoreTime(room=self.model.room.code))

    def on_takeback(self, _: ui.Takeback) -> None:
        """Ask for a takeback, or accept the opponent's."""
        if self.model.room is not None:
            self._send(Takeback(room=self.model.room.code))

    def on_takeback_decline(self, _: ui.TakebackDecline) -> None:
        """Turn down the opponent's takeback request."""
        if self.model.room is not None:
            self._send(TakebackDecline(room=self.model.room.code))

    def on_abort(self, _: ui.Abort) -> None:
        """Abort the game (the server takes it while every side has not made its first two moves)."""
        if self.model.room is not None:
            self._send(Abort(room=self.model.room.code))

    def on_leave_room(self, _: ui.LeaveRoom) -> None:
        """Leave the room (the reply takes us back to the lobby)."""
        if self.model.room is not None:
            self._send(Leave(room=self.model.room.code))


def run_app(url: str, name: str | None, **options: Any) -> int:
    """Run the client until the user quits (options: `session_key`, ...); the exit status for the shell."""
    GameNightApp(url, name, **options).run()
    return 0
