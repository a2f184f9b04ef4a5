"""The lobby: one server's sessions and rooms, and the dispatch of each request to the service it concerns.

Like `Room`, the lobby is sans-I/O: `hello`, `handle`, `disconnect`, `sweep` and `restore` return an `Outbox` of
records, messages and effects. It is an object the network layer creates and passes to each connection handler,
never a module global, so tests can run several side by side.

The lobby itself is thin: it wires the services (docs/architecture.md says who owns what) and carries out the
requests that touch a room. Each service is its own module, tested on its own:
- `Sessions` (server/sessions.py): hello, names and claims, resume tokens;
- `RoomDirectory` (server/directory.py): rooms by code, hosts, grace periods, restore after a restart;
- `Admission` (server/admission.py): the caps and per-address allowances;
- `Listing` (server/listing.py): the rooms listed, the counts, the batched `lobby` pushes;
- `Presence` and `Challenges` (server/presence.py, server/challenges.py): who is online, offers of games;
- `HistoryService` (server/history_service.py): finished games, leaderboards, player cards;
- `TournamentHost` (server/tournament_host.py): round robins and arenas;
- `Moderation` (server/moderation.py): the operator's admins, bans, mutes and their audit log.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import (
    PROTOCOL_VERSION,
    ROOMS_PAGE,
    Accept,
    AddAi,
    Analyse,
    CancelTournament,
    ChallengeRequest,
    Chat,
    CreateRoom,
    CreateTournament,
    Decline,
    Error,
    GetGame,
    GetTournament,
    Hello,
    Invite,
    Join,
    JoinTournament,
    Leaderboard,
    Leave,
    LeaveTournament,
    ListGames,
    ListPlayers,
    ListRooms,
    ListTournaments,
    LobbyUpdate,
    LobbyWatch,
    MakeMove,
    Message,
    Moderate,
    Players,
    Profile,
    RemoveAi,
    Sync,
    Welcome,
)
from gamenight.protocol.vocab import GameDescription
from gamenight.server.admission import Admission, LobbyLimits
from gamenight.server.challenges import Challenges
from gamenight.server.directory import RoomDirectory
from gamenight.server.games import GAMES
from gamenight.server.games.base import Game
from gamenight.server.history_service import History, HistoryService
from gamenight.server.listing import Listing
from gamenight.server.moderation import Moderation
from gamenight.server.outbox import Member
from gamenight.server.presence import Presence
from gamenight.server.rated import RatingBook
from gamenight.server.records import GameFinished, StoredRoom
from gamenight.server.review import Asker, ReviewService
from gamenight.server.room import Outbox, Refusal, Room
from gamenight.server.room_options import describe
from gamenight.server.room_requests import ROOM_ACTIONS, RoomRequests, players_of, reply
from gamenight.server.sessions import Client, Proof, Sessions
from gamenight.server.text import name_key
from gamenight.server.tournament_host import TournamentHost

SERVER_NAME = "gamenight/0.1"

Handler = Callable[[Client, Any, float], Outbox]


class Lobby:
    """All rooms and sessions of a server; routes each request to the service or room it concerns."""

    def __init__(
        self,
        *,
        ai_bots: dict[str, list[str]] | None = None,
        history: History | None = None,
        limits: LobbyLimits | None = None,
        reserved: tuple[str, ...] = (),
    ) -> None:
        self.limits = limits or LobbyLimits()
        self.ai_bots = ai_bots or {}  # bot name -> the games it plays
        self.games = [self._describe(game) for game in GAMES.values()]  # welcome.games: the same for everyone
        # every rating (server/rated.py), loaded at start-up; rooms rate through it
        self.ratings = RatingBook(pair_games_per_day=self.limits.rated_pair_games_per_day)
        self.sessions = Sessions(on_count=lambda: None)
        self.sessions.claims_per_ip_day = self.limits.claims_per_ip_day
        self.sessions.reserve(list(reserved))  # the operator's names (the AI's and bots' labels always are)
        self.directory = RoomDirectory(self.sessions, self.ratings.rate, self.tournament_of)
        self.directory.vetter = self.ratings.unrated_why  # a person's rated game against their own bot (rated.own_bot)
        self.ratings.owner = self._owner
        self.ratings.own_bot_by_address = bool(self.limits.own_bot_by_address)
        self.listing = Listing(self.directory, lambda: self.sessions.online)
        self.sessions.on_count = self.listing.counts_dirty
        self.admission = Admission(self.limits, self.sessions, self.directory)
        self.presence = Presence(self.sessions, self.directory, self.listing)
        self.room_requests = RoomRequests(self.directory, self.admission, self.ai_bots, self.after)
        self.challenges = Challenges(
            self.sessions, self.directory, self.admission, self.presence, self.room_requests.open_room
        )
        self.history = HistoryService(history, self.ratings)
        self.tournaments = TournamentHost(self)  # round robins and arenas (server/tournament_host.py)
        self.reviews = ReviewService(history)  # game review (issue 36, server/review.py)
        self.moderation = Moderation(self.sessions, self.directory, self.close, self.tournaments.call_off)  # issue 37
        self.sessions.on_forget = self.tournaments.forget_session
        self.challenges.invitation_gone = self.tournaments.invitation_gone
        self.rooms = self.directory.rooms  # the lobby's view of its services' main tables (the same dicts)
        self.clients = self.sessions.clients
        self.server_id = secrets.token_urlsafe(12)  # signed in every hello that proves a key (hello_nonce.server)
        self.nodes: list[str] = []  # in a cluster: the live nodes' addresses, sent in `welcome` (clients fail over)
        self.handlers = self._handlers()

    def _describe(self, game: Game[Any, Any]) -> GameDescription:
        """A game's `welcome.games` entry, with the named bots that play it."""
        return describe(game, tuple(sorted(b for b, games in self.ai_bots.items() if game.name in games)))

    # -- sessions ------------------------------------------------------------------------------------------------------
    def hello(self, msg: Hello, now: float, ip: str = "", proof: Proof | None = None) -> tuple[Client, Outbox]:
        """Greet a connection (from address `ip`; `proof`: what its hello's signature must sign): check the
        protocol, make or resume its session, reply `welcome`."""
        if msg.protocol != PROTOCOL_VERSION:
            raise Refusal(
                ErrorCode.UNSUPPORTED_PROTOCOL, f"this server speaks protocol {PROTOCOL_VERSION}, not {msg.protocol}"
            )
        self.moderation.admit(msg, ip)  # a banned name or address goes no further
        out = Outbox()
        if msg.resume is not None:
            client, token = self.sessions.resume(msg, ip), msg.resume
            self.listing.watch(client.session, False)  # each connection asks for lobby pushes itself
        else:
            client, token = self.sessions.open(msg, ip, out, proof, now)
        out.send({client.session}, self._welcome(client, token, msg.id))
        self.presence.changed(client.name)
        if msg.resume is not None:
            out.extend(self.reattach(client.session, now))
        return client, out

    def _welcome(self, client: Client, token: str, request_id: int | None) -> Welcome:
        """The welcome message for a (new or resumed) session."""
        return Welcome(
            protocol=PROTOCOL_VERSION,
            session=client.session,
            server=SERVER_NAME,
            games=self.games,
            token=token,
            rooms=self.listing.listing()[:ROOMS_PAGE],
            name=client.name,
            claimed=client.claimed,
            bot=client.bot,
            counts=self.listing.counts(),
            nodes=self.nodes,
            admin=self.moderation.is_admin(client),
            id=request_id,
        )

    def reattach(self, session: str, now: float) -> Outbox:
        """A person is back (here, or on any node of a cluster): hand them every seat they hold here, in full."""
        out = Outbox()
        client = self.clients.get(session)
        for code in sorted(client.rooms) if client else ():
            room = self.directory.at(code, now)
            if room is not None:
                out.extend(self.after(room, room.reconnect(session), now))
        return out

    def disconnect(self, session: str, now: float) -> Outbox:
        """A connection closed: spectating ends, seats are held, and empty rooms start their grace period."""
        out = Outbox()
        client = self.sessions.went_offline(session, now)
        if client is None:
            return out
        self.listing.watch(session, False)
        self.reviews.gone(session)
        self.challenges.drop(client, out, now)
        self.presence.changed(client.name)
        for code in sorted(client.rooms):
            room = self.directory.at(code, now)
            if room is None:
                continue
            out.extend(self.after(room, room.disconnect(session, now), now))
            if room.seat_of(session) is None:
                client.rooms.discard(code)
        return out

    # -- requests ------------------------------------------------------------------------------------------------------
    def handle(self, session: str, msg: Message, now: float) -> Outbox:
        """Carry out one request; a refusal becomes an `error` for the requester alone."""
        self.directory.now = now
        try:
            handler = self.handlers.get(type(msg))
            if handler is None:
                raise Refusal(ErrorCode.BAD_MESSAGE, f"{msg.type} is not a request a client can send")
            return handler(self.clients[session], msg, now)
        except Refusal as refusal:
            out = Outbox()
            error = Error(
                code=refusal.code,
                message=refusal.message,
                id=msg.id,
                room=getattr(msg, "room", None),
                retry_after_ms=refusal.retry_after_ms,
                until=refusal.until,
            )
            out.send({session}, error)
            return out

    def _handlers(self) -> dict[type[Message], Handler]:
        """The dispatch table: each request type a client may send, and who carries it out."""
        tournaments, challenges, rooms = self.tournaments, self.challenges, self.room_requests
        table: dict[type[Message], Handler] = {
            Hello: self._hello_again,
            ListRooms: lambda client, msg, now: reply(client, self.listing.page(msg)),
            LobbyWatch: self._watch,
            CreateRoom: rooms.create,
            Join: rooms.join,
            Leave: rooms.leave,
            MakeMove: rooms.move,
            Chat: self.moderation.unless_muted(rooms.chat),
            AddAi: rooms.add_ai,
            RemoveAi: rooms.remove_ai,
            Sync: rooms.sync,
            ListPlayers: lambda client, msg, now: reply(client, Players(players=self.presence.online(), id=msg.id)),
            ChallengeRequest: challenges.challenge,
            Invite: challenges.invite,
            Accept: self._accept,
            Decline: challenges.decline,
            CreateTournament: tournaments.create,
            JoinTournament: tournaments.join,
            LeaveTournament: tournaments.leave,
            CancelTournament: tournaments.cancel,
            GetTournament: lambda client, msg, now: tournaments.get(client, msg.tournament, msg.id),
            ListTournaments: lambda client, msg, now: reply(client, tournaments.listing(msg.id)),
            Analyse: lambda client, msg, now: self.reviews.request(Asker.of(client), msg, now),
            Moderate: self.moderation.moderate,
        }
        for request in (ListGames, GetGame, Leaderboard, Profile):
            table[request] = lambda client, msg, now: reply(client, self.history.answer(msg, client.token_hash))
        for action in ROOM_ACTIONS:
            table[action] = rooms.action
        return table

    @staticmethod
    def _hello_again(client: Client, msg: Hello, now: float) -> Outbox:
        """A second hello on one connection is refused."""
        raise Refusal(ErrorCode.BAD_MESSAGE, "hello was already received on this connection")

    def _watch(self, client: Client, msg: LobbyWatch, now: float) -> Outbox:
        """Start or stop the lobby pushes to this connection; the reply carries the counts."""
        self.listing.watch(client.session, msg.on)
        return reply(client, LobbyUpdate(counts=self.listing.counts(), watching=msg.on, id=msg.id))

    def _accept(self, client: Client, msg: Accept, now: float) -> Outbox:
        """Take a challenge (a new room, both seated), an invite (its seat) or an invitation (its tournament)."""
        challenge = self.challenges.offered(client, msg.challenge)
        if challenge.tournament is not None:
            return self.tournaments.accept(client, challenge, msg.id, now)
        room, out = self.challenges.accept(client, challenge, msg, now)
        return out if room is None else self.after(room, out, now)

    # -- time-driven work ----------------------------------------------------------------------------------------------
    def tick(self, code: str, now: float) -> Outbox:
        """A live room's clock fired."""
        room = self.directory.at(code, now)
        return self.after(room, room.tick(), now) if room else Outbox()

    def flag(self, code: str, now: float) -> Outbox:
        """A turn-based room's flag timer fired: the mover loses on time if their time is up."""
        room = self.directory.at(code, now)
        return self.after(room, room.flag(), now) if room else Outbox()

    def ai_moved(self, code: str, seat: int, seq: int, text: str, info: dict[str, Any], now: float) -> Outbox:
        """An AI answered; hand its move to its room (an answer the room no longer wants is dropped)."""
        room = self.directory.at(code, now)
        if room is None:
            return Outbox()
        try:
            return self.after(room, room.ai_moved(seat, seq, text, info), now)
        except Refusal:
            return Outbox()

    def sweep(self, now: float) -> Outbox:
        """Forfeit seats left too long, close rooms empty for their grace period, end offers nobody answered."""
        out = Outbox()
        self.challenges.sweep(now, out)
        self.sessions.sweep(now)
        self.admission.sweep(now)
        for code, room in list(self.rooms.items()):
            room.now = now
            out.extend(self.after(room, room.sweep(now), now))
            grace = self.directory.grace(room, code in self.tournaments.by_room)
            if room.empty_since is not None and now - room.empty_since >= grace:
                out.extend(self.close(code))
        return out.extend(self.tournaments.sweep(now))

    def close(self, code: str) -> Outbox:
        """Remove a room, forget it on disk, and tell the lobby it is gone."""
        room, out = self.directory.close(code)
        self._changed(room, out)
        return out

    def take_offline(self, code: str, spare: str | None = None) -> Outbox:
        """The room's records could not be stored: stop it in memory and tell its members (but `spare`)."""
        room, out = self.directory.take_offline(code, spare)
        if room is not None:
            self._changed(room, out)
        return out

    def drop_room(self, code: str) -> None:
        """Another node owns this room now: forget it here, writing nothing (its new owner goes on with it)."""
        if self.directory.drop(code) is not None:
            self.listing.dropped(code)

    def restore(self, stored: list[StoredRoom], now: float) -> Outbox:
        """Rebuild the rooms a previous run left open (after the tournaments are loaded: their games are rooms)."""
        return self.directory.restore(stored, now)

    def _owner(self, member: Member) -> tuple[str, str]:
        """A seated member's address and public key ("" for what is not known: a session restored after a restart
        has no address until it connects again; a guest has no key)."""
        client = self.sessions.clients.get(member.session)
        claim = self.sessions.claims.get(name_key(member.name)) if member.claimed else None
        return (client.ip if client is not None else "", claim.public_key if claim is not None else "")

    def tournament_of(self, code: str) -> str | None:
        """The tournament whose game room `code` plays, if any (`Room.tournament_of`)."""
        found = self.tournaments.by_room.get(code)
        return found[0] if found is not None else None

    # -- after a room changed ------------------------------------------------------------------------------------------
    def after(self, room: Room, out: Outbox, now: float, players: tuple[str | None, ...] | None = None) -> Outbox:
        """Bookkeeping after a room changed: its empty-since clock, the lobby's view of it, its tournament."""
        if room.occupied():
            room.empty_since = None
        elif room.empty_since is None:
            room.empty_since = now
        if out.changed:
            self._changed(room, out)
            out.changed = False
        for index, record in enumerate(out.records):
            if isinstance(record, GameFinished) and record.code == room.code and not record.token_hashes:
                hashes = players or players_of(room)
                out.records[index] = replace(record, private=room.private, token_hashes=hashes)
        if room.code in self.tournaments.by_room and room.result is not None:
            out.extend(self.tournaments.finished(room, room.result, now))  # a tournament game ended
        return out

    def _changed(self, room: Room, out: Outbox) -> None:
        """A room's summary changed: its members and the lobby's watchers hear of it, and so does presence."""
        self.listing.changed(room, out)
        self.presence.note_busy(room)
