"""The client's state as a reducer: `ClientState.apply(message)` takes one server message, updates the
lobby, your room and the history, and returns the `Changes` it made.

This is the only place that reads server messages. The app calls `apply` once per message, carries out
the effects the `Changes` ask for (notices, requests to send, a screen to open or close), and tells the
screens what changed; the screens redraw from this state. No Textual and no network here, so a recorded
message sequence drives it in tests exactly as a server would.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Literal

from gamenight.client.model import Lobby, LogLine, RoomSession, describe_event, read_result
from gamenight.client.presence import Offer, Presence
from gamenight.client.replay import HistoryEntry
from gamenight.protocol.errors import ErrorCode, ProtocolError
from gamenight.protocol.messages import (
    Analysis,
    AnalysisProgress,
    Batch,
    ChallengeGone,
    Error,
    Event,
    GameRecord,
    Games,
    Joined,
    Leaderboard,
    Leaders,
    Leave,
    Left,
    ListGames,
    ListPlayers,
    LobbyUpdate,
    Message,
    Moderated,
    Moved,
    PlayerCard,
    Profile,
    Queued,
    RoomInfo,
    Rooms,
    State,
    Sync,
    Tick,
    TournamentInfo,
    Tournaments,
    TournamentUpdate,
    Welcome,
    fold_tournament,
)
from gamenight.protocol.vocab import ChallengeEnd, EventKind, EventNote, Result, Role, RoomStatus, RoomSummary

Severity = Literal["information", "warning", "error"]
INFORMATION: Severity = "information"
WARNING: Severity = "warning"
ERROR: Severity = "error"


@dataclass(frozen=True, slots=True)
class Notice:
    """A short message for the user (a toast)."""

    text: str
    severity: Severity = INFORMATION
    title: str = ""
    timeout: float | None = None


@dataclass(slots=True)
class Changes:
    """What one server message changed, and what the app should do about it."""

    lobby: bool = False  # the games or the room list
    room: bool = False  # your room's summary, role or seat (the side panel)
    board: bool = False  # your room's full state (the board and the panel)
    tick: Tick | None = None  # a live game's delta, already checked to follow the state shown
    log: bool = False  # new lines in your room's log
    result: Result | None = None  # a game just ended in front of you: announce it
    entered: RoomSession | None = None  # you are in a new room: open its screen
    closed: bool = False  # your room is gone or you left it: back to the lobby
    history: bool = False  # the history list arrived
    record: GameRecord | None = None  # the finished game asked for arrived: open the replay
    review: Analysis | AnalysisProgress | Queued | None = None  # news of a game's review (the review screen)
    restore: bool | None = None  # a reconnect was welcomed (True: the session was resumed): get the room back
    token: str | None = None  # the resume token of a welcome, to keep for the next run
    welcomed: bool = False  # a (re)connection was welcomed: a watching lobby asks for its pushes again
    name_taken: str | None = None  # the server refused our name (claimed by another key): the free name it suggests
    players: bool = False  # who is online
    challenges: bool = False  # my pending challenges or the offers to me
    offered: Offer | None = None  # a challenge (or invite) offered to me: ask whether to accept
    offers_gone: list[str] = field(default_factory=list)  # offers to me that ended: close their dialogs
    ratings: bool = False  # a leaderboard page or a player card asked for arrived (or was refused)
    tournaments: bool = False  # the tournament list or a tournament's state arrived
    notices: list[Notice] = field(default_factory=list)
    requests: list[Message] = field(default_factory=list)  # to send, e.g. a sync after missed ticks
    bell: bool = False  # worth a sound: your move after the opponent's, a challenge to you, a tournament game

    def merge(self, later: Changes) -> None:
        """Add what a later message changed (the messages of one `batch`): flags add up, lists join, the later
        value wins. Two ticks in a row are no longer one delta to draw: the board is redrawn from the state."""
        ticks = self.tick is not None and later.tick is not None
        for spec in fields(self):
            mine, theirs = getattr(self, spec.name), getattr(later, spec.name)
            if isinstance(mine, bool) or isinstance(theirs, bool):
                setattr(self, spec.name, bool(mine) or bool(theirs))
            elif isinstance(mine, list):
                mine.extend(theirs)
            elif theirs is not None:
                setattr(self, spec.name, theirs)
        if ticks:
            self.tick, self.board = None, True


def your_move_came(room: RoomSession, waited: bool) -> bool:
    """True when it became your move because someone else moved (not at a game's start, not in a live game)."""
    state = room.state
    return waited and room.my_turn and not room.live and state is not None and bool(state.moves)


@dataclass(slots=True)
class History:
    """The finished games the history screen asked for, and the replay asked for."""

    asked: ListGames | None = None  # the filters of the list shown or being fetched
    request: int | None = None  # the id of that list_games request
    entries: list[HistoryEntry] = field(default_factory=list)
    loaded: bool = False
    replay_request: int | None = None  # the id of the get_game request whose reply opens the replay


@dataclass(slots=True)
class Ratings:
    """The leaderboard page and the player card asked for last (each request's reply, or why it was refused)."""

    board_asked: Leaderboard | None = None
    board_request: int | None = None
    board: Leaders | None = None
    board_error: str | None = None
    card_asked: Profile | None = None
    card_request: int | None = None
    card: PlayerCard | None = None
    card_error: str | None = None

    def waiting(self, request_id: int | None) -> bool:
        """True if `request_id` is the leaderboard or player card request still awaited."""
        return request_id is not None and request_id in (self.board_request, self.card_request)


@dataclass(slots=True)
class TournamentView:
    """The tournaments list and every tournament's latest state (replies and pushes), by id."""

    listed: Tournaments | None = None
    known: dict[str, TournamentInfo] = field(default_factory=dict)

    def fold(self, update: TournamentUpdate) -> bool:
        """A tournament's change, applied to the whole one known (True); one not known (never asked for, or its
        update does not follow what is known) is left alone: the screen asks for it whole when it opens."""
        info = self.known.get(update.tournament)
        if info is None:
            return False
        try:
            self.known[update.tournament] = fold_tournament(info, update)
        except ProtocolError:
            return False
        return True


class ClientState:
    """Everything the client knows, updated by the server's messages (one `apply` per message)."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name  # the player's name, as the lobby greets it and the history's "my games" asks
        self.session_id: str | None = None
        self.admin = False  # the latest welcome says we are one of the server's admins (the TUI shows its tools)
        self.resumed = False  # the latest welcome continued the session of the token sent
        self.lobby = Lobby()
        self.room: RoomSession | None = None
        self.hosted: set[str] = set()  # rooms this session created (and so may seat AIs in)
        self.history = History()
        self.presence = Presence()
        self.ratings = Ratings()
        self.tournaments = TournamentView()
        self.seat_cards: dict[int, str] = {}  # request id -> the player of my room whose card (rating) it asks

    # -- the reducer ------------------------------------------------------------------------------------
    def apply(self, message: Message, *, quiet: bool = False, resumed: bool = False) -> Changes:
        """Apply one server message; `quiet` marks an error reply its requester handles, `resumed` a welcome
        that continued the session of the token sent."""
        changes = Changes()
        if isinstance(message, Batch):  # a spectator's room traffic of one window: its messages in order
            for inner in message.messages:
                changes.merge(self.apply(inner, quiet=quiet, resumed=resumed))
            return changes
        if self._presence(message, changes):
            return changes
        if not self._room_message(message, changes) and not self._lobby_message(message, resumed, changes):
            self._reply(message, quiet, changes)
        if changes.result is not None and changes.result.ratings:
            changes.notices.append(Notice(rating_changes_text(changes.result), title="Ratings", timeout=10))
        return changes

    def _room_message(self, message: Message, changes: Changes) -> bool:
        """A message about the room I am in (or one I saw): True when `message` was one."""
        match message:
            case RoomInfo():
                self._room_info(message.summary, changes)
            case Joined():
                self._joined(message, changes)
            case Left():
                if self.room is not None and self.room.code == message.room:
                    self.leave_room(changes)
            case State():
                self._state(message, changes)
            case Moved():
                self._moved(message, changes)
            case Tick():
                self._tick(message, changes)
            case Event():
                self._event(message, changes)
            case _:
                return False
        return True

    def _lobby_message(self, message: Message, resumed: bool, changes: Changes) -> bool:
        """The welcome, the listing, history, reviews, tournaments, an admin's reply: True when `message` was one."""
        match message:
            case Welcome():
                self._welcome(message, resumed, changes)
            case Rooms():
                self.lobby.add_page(message.rooms, message.offset, message.total)
                changes.lobby = True
            case LobbyUpdate():
                if message.id is None:
                    self.lobby.apply_update(message)
                    changes.players = self.presence.update(message.players) or changes.players
                else:  # the reply to lobby_watch: only the counts
                    self.lobby.set_counts(message.counts)
                changes.lobby = True
            case Games():
                self._games(message, changes)
            case GameRecord():
                if message.id is not None and message.id == self.history.replay_request:
                    self.history.replay_request = None
                    changes.record = message
            case Analysis() | AnalysisProgress() | Queued():
                changes.review = message
            case Tournaments():
                self.tournaments.listed = message
                changes.tournaments = True
            case TournamentInfo():
                self.tournaments.known[message.tournament] = message
                changes.tournaments = True
            case TournamentUpdate():
                changes.tournaments = self.tournaments.fold(message)
            case Moderated():
                changes.notices.append(Notice(moderated_text(message), title="Admin", timeout=6))
            case _:
                return False
        return True

    def _reply(self, message: Message, quiet: bool, changes: Changes) -> None:
        """Ratings and player cards (mine, or for my room's seats), and the errors nobody else took."""
        match message:
            case PlayerCard() | Error() if message.id is not None and message.id in self.seat_cards:
                self._seat_card(message, changes)
            case Leaders() | PlayerCard():
                self._rated_reply(message, changes)
            case Error() if self.ratings.waiting(message.id):
                self._rated_reply(message, changes)
            case Error() if message.code == ErrorCode.NAME_TAKEN:
                changes.name_taken = message.suggestion or ""
            case Error():
                if not quiet:
                    changes.notices.append(Notice(message.message, ERROR, title=message.code.replace("_", " ")))

    def _welcome(self, msg: Welcome, resumed: bool, changes: Changes) -> None:
        """A (re)connection was welcomed: fresh games and rooms; after a reconnect, get the room back."""
        previous, self.session_id = self.session_id, msg.session
        self.admin = msg.admin
        if msg.name and msg.name != self.name:
            asked, self.name = self.name, msg.name
            why = f"the name {asked!r} belongs to someone else here" if asked else "the server chose it"
            changes.notices.append(Notice(f"You play as {msg.name!r}: {why}", timeout=8))
        self.resumed = resumed
        if not resumed:
            self.presence.lost_connection()  # a new session: the server forgot the old one's challenges
        if self.room is None:
            changes.requests.append(ListPlayers())  # presence is pushed only to the lobby: catch up on it
        changes.token = msg.token
        changes.welcomed = True
        self.lobby.set_games(msg.games)
        self.lobby.counts = None
        self.lobby.set_counts(msg.counts)
        self.lobby.set_rooms(msg.rooms)
        self.lobby.page_pending = False
        changes.lobby = True
        if self.room is not None:
            self.room.description = self.lobby.games.get(self.room.game, self.room.description)
        if previous is not None and self.room is not None:
            resumed_here = msg.session == previous
            if not resumed_here:
                self.room.host = False  # host rights belong to the old session
            changes.restore = resumed_here

    def _presence(self, message: Message, changes: Changes) -> bool:
        """Presence and challenge messages (and the refusals of a challenge): True when `message` was one."""
        hosted = (
            message.room
            if isinstance(message, ChallengeGone)
            and message.why == ChallengeEnd.ACCEPTED
            and message.challenge in self.presence.pending
            else None
        )
        change = self.presence.apply(message)
        if change is None:
            return False
        if hosted is not None:  # my challenge made this room (or my invite filled it): I am its host
            self.hosted.add(hosted)
            if self.room is not None and self.room.code == hosted:
                self.room.host, changes.room = True, True
        changes.players, changes.challenges = change.players, change.challenges
        changes.offered, changes.offers_gone = change.offered, change.gone
        changes.bell = changes.bell or change.offered is not None
        changes.notices.extend(Notice(text, timeout=6) for text in change.notices)
        if isinstance(message, Error):
            changes.notices.append(Notice(message.message, ERROR, title=message.code.replace("_", " ")))
        return True

    def _room_info(self, summary: RoomSummary, changes: Changes) -> None:
        """A room appeared, changed or closed."""
        self.lobby.update(summary)
        changes.lobby = True
        room = self.room
        if room is None or room.code != summary.room:
            return
        if summary.status == RoomStatus.CLOSED:
            changes.notices.append(Notice(f"Room {summary.room} was closed", WARNING))
            self.leave_room(changes)
            return
        room.summary = summary
        changes.room = True
        changes.board = changes.board or room.state is None
        self._ask_ratings(room, changes)

    def _joined(self, msg: Joined, changes: Changes) -> None:
        """You sat down or started watching (or the server told you your seat again)."""
        room = self.room
        if room is not None and room.code == msg.room:
            # A resume or a rematch's rotation tells us our seat again: take the server's word for it.
            room.role, room.seat = msg.role, msg.seat
            changes.room = changes.board = True
            return
        if room is not None and msg.id is None and msg.tournament is None:
            # A resumed session holding seats in several rooms: stay in this one, point at the other.
            changes.notices.append(Notice(f"You also hold a seat in room {msg.room}", timeout=6))
            return
        if room is not None:  # asked for, or a tournament's next game (its clock runs): straight into it
            self.leave_room(changes)
            changes.closed = False
        summary = self.lobby.rooms.get(msg.room)
        host = msg.room in self.hosted or (self.resumed and summary is not None and summary.host == self.name)
        game = summary.game if summary is not None else msg.game  # a private room has no summary here yet
        room = RoomSession(msg.room, msg.role, msg.seat, host=host, description=self.lobby.games.get(game))
        room.summary = summary
        self.room = room
        self._ask_ratings(room, changes)
        if msg.tournament is None and msg.id is None and msg.role == Role.PLAYER and self.resumed:
            room.reopening = True  # its state, which follows, says whether the game is still on (`_reopened`)
            return
        changes.entered = room
        if msg.tournament is not None:
            text = f"Your game in tournament {msg.tournament} starts: room {msg.room}"
            changes.notices.append(Notice(text, timeout=6))
            changes.bell = True

    def _reopened(self, room: RoomSession, status: RoomStatus, changes: Changes) -> None:
        """The first state of a seat the resumed session held on launch: an unfinished game opens again; a finished
        one is left (you had closed gamenight over its result), and you stay in the lobby."""
        room.reopening = False
        if status != RoomStatus.FINISHED:
            changes.entered = room
            changes.notices.append(Notice(f"Welcome back: you are in room {room.code} again", timeout=4))
            return
        changes.requests.append(Leave(room=room.code))
        changes.notices.append(Notice(f"Your game in room {room.code} had ended; you left its seat", timeout=6))
        self.leave_room(changes)

    def _state(self, msg: State, changes: Changes) -> None:
        """A full snapshot of the room's game."""
        room = self.room
        if room is None or room.code != msg.room:
            return
        if room.reopening:
            self._reopened(room, msg.status, changes)
            if self.room is None:
                return
        replayed, before, waited = room.syncing, room.status, not room.my_turn
        if room.description is None:
            room.description = self.lobby.games.get(msg.game)
        room.apply_state(msg)
        changes.board = changes.room = True
        changes.bell = changes.bell or your_move_came(room, waited)
        self._notes(msg.room, msg.seq, msg.events, changes)
        if replayed and msg.status == RoomStatus.FINISHED and before in (RoomStatus.PLAYING, RoomStatus.PAUSED):
            # The game ended while we were away: the state after a sync is its only news of the end.
            changes.result = msg.result

    def _moved(self, msg: Moved, changes: Changes) -> None:
        """A turn-based move: folded into the full state; a gap in seq means moves were missed, so sync."""
        room = self.room
        if room is None or room.code != msg.room or room.state is None:
            return
        waited = not room.my_turn
        if room.apply_moved(msg):
            changes.board = changes.room = True
            changes.bell = changes.bell or your_move_came(room, waited)
            self._notes(msg.room, msg.seq, msg.events, changes)
        else:
            self._resync(room, msg.seq, changes)

    def _notes(self, code: str, seq: int, notes: Iterable[EventNote], changes: Changes) -> None:
        """The events carried inside a state, move or tick: logged and acted on like standalone ones."""
        for note in notes:
            self._event(Event(room=code, kind=note.kind, seq=seq, data=note.data), changes)

    def _resync(self, room: RoomSession, seq: int, changes: Changes) -> None:
        """A message skipped ahead of the state held: ask for the full state (once until it arrives)."""
        if seq > room.seq and not room.syncing:
            room.syncing = True
            changes.requests.append(Sync(room=room.code, seq=room.seq))

    def _tick(self, msg: Tick, changes: Changes) -> None:
        """A live game's delta; a gap in seq means ticks were missed, so ask for the full state."""
        room = self.room
        if room is None or room.code != msg.room or room.state is None:
            return
        if room.apply_tick(msg):
            changes.tick = msg
            self._notes(msg.room, msg.seq, msg.events, changes)
        else:
            self._resync(room, msg.seq, changes)

    def _event(self, msg: Event, changes: Changes) -> None:
        """Something happened in the room: log it, and react to passes and the end of the game."""
        room = self.room
        if room is None or room.code != msg.room or not room.apply_event(msg):
            return
        text = describe_event(msg, room)
        if text:
            spectator = msg.kind == EventKind.CHAT and msg.data.get("seat") is None
            style = "bold" if msg.kind == EventKind.GAME_OVER else "dim" if msg.data.get("earlier") else ""
            room.log.append(LogLine(text, style, spectator))
            changes.log = True
        if msg.kind == EventKind.PASS and text:
            changes.notices.append(Notice(text, timeout=4))
        if msg.kind == EventKind.GAME_OVER and not room.syncing:
            changes.result = read_result(msg.data)
            changes.room = True
        elif msg.kind in (EventKind.MOVE, EventKind.JOINED, EventKind.LEFT, EventKind.TAKEBACK):
            changes.room = True
        if not room.syncing:
            self._offer_notice(msg, room, text, changes)

    @staticmethod
    def _offer_notice(msg: Event, room: RoomSession, text: str | None, changes: Changes) -> None:
        """A takeback I may answer, or my rematch request still waiting for others: say so."""
        if msg.kind == EventKind.TAKEBACK and room.can_decline_takeback():
            changes.notices.append(Notice(f"{text}: u accepts, n declines", timeout=8))
        if msg.kind == EventKind.REMATCH and room.playing and msg.data.get("seat") == room.seat:
            waiting = room.rematch_waits_for(msg.data.get("votes"))
            if waiting:  # else the rematch starts at once (against the AI, or everyone had asked): nothing to say
                who = " and ".join(waiting) + (" agrees" if len(waiting) == 1 else " agree")
                changes.notices.append(Notice(f"Rematch asked for; it starts when {who}", timeout=4))

    def _games(self, msg: Games, changes: Changes) -> None:
        """The finished games the history asked for (an older list than the one asked for last is dropped)."""
        history = self.history
        if msg.id is None or msg.id != history.request:
            return
        history.entries = [HistoryEntry.from_wire(g) for g in msg.games if isinstance(g, dict)]
        history.loaded = True
        changes.history = True

    # -- what the app records about its own requests ---------------------------------------------------
    def leave_room(self, changes: Changes | None = None) -> Changes:
        """Forget the room (you left it, or it closed)."""
        changes = changes if changes is not None else Changes()
        room, self.room = self.room, None
        if room is not None:
            summary = self.lobby.rooms.get(room.code)
            if summary is not None and summary.private:
                self.lobby.rooms.pop(room.code)  # its updates stop now that we are not a member
            changes.closed = changes.lobby = True
        return changes

    def created(self, summary: RoomSummary) -> None:
        """A room this session created (it is the host)."""
        self.hosted.add(summary.room)
        self.lobby.rooms[summary.room] = summary

    def asked_history(self, request: ListGames, request_id: int | None) -> None:
        """A history list was asked for; only its reply will be shown."""
        self.history.asked, self.history.request, self.history.loaded = request, request_id, False

    # -- ratings --------------------------------------------------------------------------------------------
    def asked_ratings(self, request: Leaderboard | Profile, request_id: int | None) -> None:
        """A leaderboard page or a player card was asked for; only the reply to the latest is shown."""
        if isinstance(request, Leaderboard):
            self.ratings.board_asked, self.ratings.board_request = request, request_id
            self.ratings.board, self.ratings.board_error = None, None
        else:
            self.ratings.card_asked, self.ratings.card_request = request, request_id
            self.ratings.card, self.ratings.card_error = None, None

    def _ask_ratings(self, room: RoomSession, changes: Changes) -> None:
        """A rated room's players: ask for the card of each one not asked for yet (their ratings in the panel)."""
        for name in room.unasked_ratings():
            room.ratings_asked.add(name)
            changes.requests.append(Profile(name=name))

    def asked_seat_card(self, request_id: int | None, name: str) -> None:
        """The card of a player of my room was asked for (`_ask_ratings`); its reply gives their rating."""
        if request_id is not None:
            self.seat_cards[request_id] = name

    def _seat_card(self, reply: PlayerCard | Error, changes: Changes) -> None:
        """The card of a player of my room: their rating in the room's pool ("unrated" for a player with no rated
        game, whose card the server refuses), never a notice."""
        name = self.seat_cards.pop(reply.id or 0)
        room = self.room
        if room is None or name not in room.ratings_asked:
            return  # asked in a room since left
        pool = room.rating_pool()
        ratings = reply.ratings if isinstance(reply, PlayerCard) else []
        rating = next((r for r in ratings if r.pool == pool), None)
        room.ratings[name] = rating_text(rating.rating, rating.provisional) if rating is not None else "unrated"
        changes.room = True

    def _rated_reply(self, message: Leaders | PlayerCard | Error, changes: Changes) -> None:
        """The reply to a leaderboard or profile request (a reply to an older request is dropped)."""
        ratings = self.ratings
        if message.id is None:
            return
        if message.id == ratings.board_request:
            ratings.board_request = None
            if isinstance(message, Leaders):
                ratings.board = message
            elif isinstance(message, Error):
                ratings.board_error = message.message
            changes.ratings = True
        elif message.id == ratings.card_request:
            ratings.card_request = None
            if isinstance(message, PlayerCard):
                ratings.card = message
            elif isinstance(message, Error):
                ratings.card_error = message.message
            changes.ratings = True

    def asked_replay(self, request_id: int | None) -> None:
        """A finished game was asked for; its reply opens the replay."""
        self.history.replay_request = request_id

    def syncing(self) -> Sync | None:
        """After a reconnect: the sync that asks for what the room missed (its replayed events are expected)."""
        if self.room is None:
            return None
        self.room.syncing = True
        return Sync(room=self.room.code, seq=self.room.seq)


def rating_text(rating: float, provisional: bool) -> str:
    """A rating as people read it: whole points, "?" while provisional (e.g. "1662?")."""
    return f"{rating:.0f}" + ("?" if provisional else "")


def rating_changes_text(result: Result) -> str:
    """A rated game's changes in one line, e.g. "alice 1500 → 1338? (-162) · bob 1500 → 1662? (+162)"."""
    return " · ".join(
        f"{c.name} {c.before:.0f} → {rating_text(c.after, c.provisional)} ({c.after - c.before:+.0f})"
        for c in result.ratings
    )


def moderated_text(done: Moderated) -> str:
    """The admin's confirmation of an action (it is in the server's audit log), e.g. "ban eve: done, until ..."."""
    text = f"{done.action.replace('_', ' ')} {done.target}: done"
    if done.until is not None:
        text += f", until {time.strftime('%Y-%m-%d %H:%M', time.localtime(done.until))}"
    return text
