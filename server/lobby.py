"""The lobby: every session and every room of one server, and the dispatch of requests to them.

Like `Room`, the lobby is sans-I/O: `hello`, `handle`, `disconnect`, `sweep` and `restore` return an
`Outbox` of records, messages and effects. It is an object the network layer creates and passes to
each connection handler, never a module global, so tests can run several side by side.

A person is known by the hash of their resume token: a connection that says `hello {resume: token}`
takes over the session (and every seat) of the one that received that token, even across a restart.

A name is claimed by the first hello that uses it with a `key`; later hellos need the same key for it. Claims
are kept in memory by their comparison key (`text.name_key`) and stored through `NameClaimed` records, so a
claim is on disk before its welcome is sent. A hello without a key is a guest's: it plays under a free name.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import (
    MAX_ROOMS_PAGE,
    PROTOCOL_VERSION,
    ROOMS_PAGE,
    Abort,
    Accept,
    AddAi,
    Analyse,
    CancelTournament,
    Challenged,
    ChallengeGone,
    ChallengeRequest,
    ChallengeSent,
    Chat,
    CreateRoom,
    CreateTournament,
    Decline,
    Error,
    GameRecord,
    Games,
    GetGame,
    GetTournament,
    Hello,
    Invite,
    Join,
    JoinTournament,
    Leaderboard,
    Leaders,
    Leave,
    LeaveTournament,
    Left,
    ListGames,
    ListPlayers,
    ListRooms,
    ListTournaments,
    LobbyUpdate,
    LobbyWatch,
    MakeMove,
    Message,
    MoreTime,
    Player,
    PlayerCard,
    Players,
    Profile,
    Rematch,
    RemoveAi,
    Resign,
    RoomInfo,
    Rooms,
    Sync,
    Takeback,
    TakebackDecline,
    Welcome,
)
from gamenight.protocol.vocab import (
    ChallengeEnd,
    GameDescription,
    LeaderEntry,
    LobbyCounts,
    PlayerInfo,
    PoolRating,
    Role,
    RoomStatus,
    RoomSummary,
)
from gamenight.server.games import GAMES
from gamenight.server.games.base import BadOptions, Game
from gamenight.server.rated import RatingBook, player_key, pools
from gamenight.server.records import (
    MAX_LEADERBOARD_LIMIT,
    MAX_LEADERBOARD_OFFSET,
    GameFinished,
    NameClaimed,
    RoomClosed,
    StoredRating,
    StoredRoom,
)
from gamenight.server.review import Asker, ReviewService
from gamenight.server.room import RUNNING, AiSpec, Member, Outbox, Refusal, Room
from gamenight.server.room_options import describe, split_and_validate
from gamenight.server.text import MAX_NAME, clean_name, clean_text, name_key
from gamenight.server.tournament_host import TournamentHost

SERVER_NAME = "gamenight/0.1"
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no I/1 or O/0 to misread
CODE_LENGTH = 5
REPLAY_CACHE = 64  # finished games whose replay frames are kept
CHAT_BURST_S = 2.0  # a room's chat allowance holds this many seconds of its rate
EMPTY_ROOM_GRACE_S = 60.0  # a room nobody is in closes after this long...
EMPTY_AI_ROOM_GRACE_S = 5.0  # ...and an all-AI room nobody watches after this
HELD_GAME_GRACE_S = 24 * 3600.0  # ...unless players hold seats in an unfinished game
PROMPT_CLOSE_S = 10.0  # ...and a room with nothing to wait for (see `_awaited`) closes after this
SESSION_GRACE_S = 60.0  # a dropped session holding no seat (a host, a spectator) may resume this long
MAX_BATCH_ROOMS = 200  # room changes in one `lobby` push (the rest go in the next one)
LISTING_ORDER = {RoomStatus.WAITING: 0, RoomStatus.PLAYING: 1, RoomStatus.PAUSED: 1, RoomStatus.FINISHED: 2}
"""The listing shows joinable (waiting) rooms first, then games in progress, then finished ones; by age within."""
AI_LEVELS = range(1, 6)
KEY_LENGTHS = range(16, 129)  # a claim key's length: long enough not to be guessed, short enough to hash cheaply
SUGGESTIONS = 999  # numbered variants tried for a free name before a random one
MAX_PLAYERS_LISTED = 200  # entries in a `players` reply
MAX_REASON = 200  # characters of a decline's reason
MAX_LIST_GAMES = 200  # entries a `list_games` may ask for (`limit` 1-200; anything else is refused)
UNAVAILABLE_TEXT = "the server cannot store this room's game (its disk is full or read-only); it is stopped"


class History(Protocol):
    """Where finished games are read from (the store: SQLite or PostgreSQL, server/store.py `StoreBackend`)."""

    def list_games(
        self, player: str | None, game: str | None, limit: int, viewer: str | None, room: str | None = None
    ) -> list[dict[str, Any]]: ...

    def get_game(self, game_id: int, viewer: str | None) -> dict[str, Any] | None: ...

    def leaderboard(self, pool: str, offset: int, limit: int) -> tuple[int, list[dict[str, Any]]]: ...

    def profile(self, player: str, viewer: str | None) -> tuple[list[StoredRating], list[dict[str, Any]]]: ...

    def analysis(self, game_id: int) -> dict[str, Any] | None: ...


@dataclass(slots=True)
class Client:
    """One person: their session id, name, token hash and rooms; kept while they hold a seat, even offline."""

    session: str
    name: str
    token_hash: str
    rooms: set[str] = field(default_factory=set)
    connected: bool = True
    ip: str = ""  # the address of its latest connection ("" for sessions restored from disk)
    claimed: bool = False  # the name is claimed by this person's key
    bot: bool = False  # a program playing (hello `bot: true`, or a name claimed as a bot)
    accepts: tuple[str, ...] = ()  # the games it takes challenges for (hello `accepts`)
    remote: bool = False  # connected to another node of a cluster, which forwards its requests (server/cluster)
    offline_since: float | None = None  # when its last connection dropped (None while connected)

    @property
    def member(self) -> Member:
        """How rooms know this person."""
        return Member(self.session, self.name, self.token_hash, self.bot, self.claimed)


def hash_token(token: str) -> str:
    """The stored form of a resume token (tokens themselves are never stored or logged)."""
    return hashlib.sha256(token.encode()).hexdigest()


def session_of(token_hash: str) -> str:
    """The session id of a resume token (by its stored hash): the same after a restart, and no help in guessing
    the token (it is a hash of the token's hash)."""
    return hashlib.sha256(b"session:" + token_hash.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class LobbyLimits:
    """Caps that keep one person (or one address) from taking the whole server; 0 means no cap."""

    rooms_per_player: int = 20  # open rooms one person (resume token) hosts
    rooms_per_ip: int = 20  # open rooms hosted from one address, over all its sessions
    public_rooms: int = 300  # open public rooms in all (the lobby lists them; `welcome` carries the first page)
    spectators_per_room: int = 50
    player_chat_per_s: float = 5.0  # chat lines per second a room relays from its players, together
    spectator_chat_per_s: float = 2.0  # ... and from its spectators, together (players keep their share)
    ai_rooms_per_ip: int = 2  # unfinished all-AI rooms (exhibitions) hosted from one address
    code_guesses_per_min: float = 6.0  # joins by a code that is not a public room, per address (hit or miss)
    code_guess_burst: int = 10  # ... of which this many at once
    challenges_per_player: int = 3  # pending challenges (and invites) one session has made
    challenges_per_ip: int = 10  # ... and all the sessions of one address together
    challenges_received: int = 10  # pending challenges (and invites) waiting for one person's answer, from anyone
    challenges_per_ip_to_player: int = 2  # ... of which from one address (so one address cannot fill them all)
    challenges_per_min: float = 20.0  # challenges and invites sent from one address a minute (10 at once)
    challenge_burst: int = 10
    tournaments_per_player: int = 3  # open tournaments (waiting or running) one claimed name hosts
    tournaments_per_ip: int = 5  # ... and hosted from one address, whatever the names
    rated_pair_games_per_day: int = 10  # rated games a day between the same two players that change ratings
    challenge_s: float = 60.0  # a challenge nobody answers is gone after this long
    invitation_s: float = 60.0  # ... and a tournament's invitation (the tournament waits for the answers to start)


@dataclass(slots=True)
class Challenge:
    """A pending offer of a game from one session to a named person's connected sessions.

    A challenge makes a new room when accepted; an invite (`room` set) offers `seat` of an existing room; an
    invitation (`tournament` set) enters the target into a tournament (server/tournament_host.py), whose host's
    session is the sender. `seat` is the challenger's own seat for a challenge, the offered seat for an invite.
    """

    id: str
    sender: str  # the challenger's session
    targets: set[str]  # the target's connected sessions (any of them may answer)
    to: str  # the target's name
    game: str
    options: dict[str, Any]  # game and room options together, validated
    seat: int
    expires: float
    room: str | None = None
    tournament: str | None = None

    @property
    def target_seat(self) -> int:
        """The seat the target takes: the invite's seat, or the first one the challenger does not sit in."""
        if self.room is not None:
            return self.seat
        return 1 if self.seat == 0 else 0


class Allowance:
    """A token bucket on the lobby's clock: `rate` per second, at most `capacity` (default: CHAT_BURST_S seconds)."""

    __slots__ = ("capacity", "rate", "stamp", "tokens")

    def __init__(self, rate: float, now: float, capacity: float | None = None) -> None:
        self.rate, self.capacity = rate, max(1.0, rate * CHAT_BURST_S if capacity is None else capacity)
        self.tokens, self.stamp = self.capacity, now

    def take(self, now: float) -> bool:
        """Spend one token if there is one."""
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def retry_after_ms(self) -> int:
        """Milliseconds from the last `take` until the allowance holds a token again (what a refusal says to wait)."""
        return max(1, math.ceil((1 - self.tokens) / self.rate * 1000)) if self.rate > 0 else 1000


class Lobby:
    """All rooms and sessions of a server; routes each request to the room it concerns."""

    def __init__(
        self,
        *,
        ai_bots: dict[str, list[str]] | None = None,
        history: History | None = None,
        limits: LobbyLimits | None = None,
    ) -> None:
        self.rooms: dict[str, Room] = {}
        self.clients: dict[str, Client] = {}  # by session, connected or holding seats
        self.by_token: dict[str, Client] = {}  # by token hash
        self.ai_bots = ai_bots or {}  # bot name -> the games it plays
        self.games = [self._describe(game) for game in GAMES.values()]  # welcome.games: the same for everyone
        self.history = history
        self.limits = limits or LobbyLimits()
        self.hosts: dict[str, tuple[str, str]] = {}  # room code -> (host's token hash, host's address)
        self.played: set[str] = set()  # rooms where a person made a move: only they keep the long grace
        self.chat: dict[tuple[str, bool], Allowance] = {}  # (room, from players?) -> its chat allowance
        self.replays: OrderedDict[int, list[dict[str, Any]]] = OrderedDict()  # game id -> frames, latest last
        self.guesses: dict[str, Allowance] = {}  # address -> its allowance of joins by a private or unknown code
        self.challenge_pace: dict[str, Allowance] = {}  # address -> its allowance of challenges and invites sent
        self.offline: set[str] = set()  # rooms taken offline because their records could not be stored
        self.skipped: list[tuple[str, str]] = []  # (code, why) of stored rooms that could not be restored
        self.claims: dict[str, NameClaimed] = {}  # name key -> its claim (loaded at start-up, then kept current)
        self.challenges: dict[str, Challenge] = {}  # pending challenges and invites by id
        self.now = 0.0  # the time of what is being handled; rooms are stamped with it when they are looked up
        # The lobby listing (docs/protocol.md "Lobby (version 2)"): who watches it, what changed since the last
        # `lobby` push, and caches rebuilt only after a change (every welcome shows the first page and counts).
        self.watchers: set[str] = set()  # sessions that asked for lobby pushes (`lobby_watch`)
        self.lobby_changes: dict[str, None] = {}  # codes of public rooms changed since the last push, in order
        self.counts_changed = False  # the lobby's counts changed since the last push
        self.online = 0  # sessions connected
        self._summaries: dict[str, RoomSummary] = {}  # room code -> its summary, until the room changes
        self._busy: dict[str, frozenset[str]] = {}  # room code -> the names seated there while its game runs
        self._listing: list[RoomSummary] | None = None
        self._by_game: dict[str, dict[str, int]] | None = None  # listed rooms by game and status
        # every rating (server/rated.py), loaded at start-up; rooms rate through it
        self.ratings = RatingBook(pair_games_per_day=self.limits.rated_pair_games_per_day)
        self.pools = pools(GAMES.values())  # the leaderboards: each game, and "<game>-ffa" for 3-4 seats
        self.tournaments = TournamentHost(self)  # round robins and arenas (server/tournament_host.py)
        self.reviews = ReviewService(history)  # game review (issue 36, server/review.py)
        # In a cluster (server/cluster): rooms other nodes own, as their directory entries list them; the codes of
        # this node's rooms changed since the node last published them (None: not in a cluster); and whether a
        # code is in use anywhere in the cluster (new codes avoid those too).
        self.remote: dict[str, RoomSummary] = {}
        self.cluster_changes: dict[str, None] | None = None
        self.code_taken: Callable[[str], bool] | None = None
        # In a cluster: a code reserved for the next room (leased and routable before anyone hears of the room).
        self.take_code: Callable[[], str | None] | None = None
        self.remote_hosts: dict[str, tuple[str, str]] = {}  # other nodes' rooms -> (host token hash, host address)
        self.online_elsewhere = 0  # in a cluster: sessions connected to the other nodes (from their heartbeats)
        self.nodes: list[str] = []  # in a cluster: the live nodes' addresses, sent in `welcome` (clients fail over)
        self.challenge_tag = ""  # in a cluster: the prefix of this node's challenge ids (an answer finds its node)

    # -- sessions --------------------------------------------------------------------------------------
    def hello(self, msg: Hello, now: float, ip: str = "") -> tuple[Client, Outbox]:
        """Greet a connection (from address `ip`): check the protocol, make or resume its session, reply `welcome`."""
        if msg.protocol != PROTOCOL_VERSION:
            raise Refusal(
                ErrorCode.UNSUPPORTED_PROTOCOL, f"this server speaks protocol {PROTOCOL_VERSION}, not {msg.protocol}"
            )
        if msg.resume is not None:
            return self._resume(msg, now, ip)
        accepts = self._accepts(msg)
        out = Outbox()
        name, claimed, bot = self._identity(msg, out)
        token = secrets.token_urlsafe(24)
        token_hash = hash_token(token)
        client = Client(session_of(token_hash), name, token_hash, ip=ip, claimed=claimed, bot=bot)
        client.accepts = accepts
        self.clients[client.session] = client
        self.by_token[client.token_hash] = client
        self._online(+1)
        out.send({client.session}, self._welcome(client, token, msg.id))
        self._push_player(client.name, out, client.session)
        return client, out

    @staticmethod
    def _accepts(msg: Hello) -> tuple[str, ...]:
        """The games a hello's `accepts` names, checked against the games this server has (deduplicated, sorted)."""
        if len(msg.accepts) > len(GAMES) * 4:
            raise Refusal(ErrorCode.BAD_OPTIONS, "accepts lists too many games")
        unknown = [g for g in msg.accepts if g not in GAMES]
        if unknown:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"accepts names unknown game {unknown[0][:40]!r}")
        return tuple(sorted(set(msg.accepts)))

    def load_claims(self, claims: list[NameClaimed]) -> None:
        """Take the claimed names a previous run stored (at start-up, before any hello)."""
        for claim in claims:
            self.claims[claim.name_key] = claim

    def _identity(self, msg: Hello, out: Outbox) -> tuple[str, bool, bool]:
        """The name a new session plays under, whether its key holds that name's claim, and whether it is a bot.

        With a key: the claim's owner gets the claimed name (a bot's claim keeps it a bot), a name nobody claimed
        is claimed now (the record goes into `out`), and any other key is refused with `name_taken` and a free
        name to use instead. Without a key: a guest, under the name asked for unless it is claimed, else a free
        numbered variant of it.
        """
        name = clean_name(msg.name)
        key = name_key(name)
        claim = self.claims.get(key)
        if msg.key is None:
            return (name if claim is None else self._free_name(name)), False, msg.bot
        if len(msg.key) not in KEY_LENGTHS:
            raise Refusal(ErrorCode.BAD_MESSAGE, f"a key has {KEY_LENGTHS.start} to {KEY_LENGTHS.stop - 1} characters")
        key_hash = hash_token(msg.key)
        if claim is None:
            claim = self.claims[key] = NameClaimed(key, name, key_hash, msg.bot)
            out.records.append(claim)
            return name, True, msg.bot
        if not hmac.compare_digest(claim.key_hash, key_hash):
            suggestion = self._free_name(name)
            raise Refusal(
                ErrorCode.NAME_TAKEN,
                f"the name {claim.name!r} is claimed with another key; {suggestion!r} is free",
                suggestion=suggestion,
            )
        if msg.bot and not claim.bot:  # once a bot, always a bot: the claim remembers it
            claim = self.claims[key] = replace(claim, bot=True)
            out.records.append(claim)
        return claim.name, True, claim.bot

    def _free_name(self, name: str) -> str:
        """A name like `name` that nobody has claimed: the name with the first free number after it."""
        for number in range(2, SUGGESTIONS + 2):
            suffix = str(number)
            candidate = clean_name(name[: MAX_NAME - len(suffix)] + suffix)
            if name_key(candidate) not in self.claims:
                return candidate
        while True:  # a thousand numbered variants claimed: a random one (bounded in practice by the claims)
            candidate = clean_name(name[: MAX_NAME - 7] + secrets.token_hex(3) + "7")
            if name_key(candidate) not in self.claims:
                return candidate

    def claim_lost(self, claim: NameClaimed) -> None:
        """A claim's record could not be stored: forget it (nobody was told it was made)."""
        if self.claims.get(claim.name_key) is claim:
            del self.claims[claim.name_key]

    def _welcome(self, client: Client, token: str, request_id: int | None) -> Welcome:
        """The welcome message for a (new or resumed) session."""
        return Welcome(
            protocol=PROTOCOL_VERSION,
            session=client.session,
            server=SERVER_NAME,
            games=self.games,
            token=token,
            rooms=self.listing()[:ROOMS_PAGE],
            name=client.name,
            claimed=client.claimed,
            bot=client.bot,
            counts=self.counts(),
            nodes=self.nodes,
            id=request_id,
        )

    def _describe(self, game: Game[Any, Any]) -> GameDescription:
        """A game's `welcome.games` entry, with the named bots that play it."""
        return describe(game, tuple(sorted(b for b, games in self.ai_bots.items() if game.name in games)))

    def _resume(self, msg: Hello, now: float, ip: str) -> tuple[Client, Outbox]:
        """Give a returning person their session back, with every seat they held."""
        assert msg.resume is not None
        wanted = hash_token(msg.resume)
        client = self.by_token.get(wanted)
        # The dict lookup finds a candidate; the constant-time compare is what vouches for it.
        if client is None or not hmac.compare_digest(client.token_hash, wanted):
            raise Refusal(ErrorCode.BAD_TOKEN, "that resume token is unknown here (expired, or another server)")
        accepts = self._accepts(msg)
        if not client.connected:
            self._online(+1)
        self.watchers.discard(client.session)  # each connection asks for lobby pushes itself
        client.connected, client.ip, client.accepts, client.offline_since = True, ip, accepts, None
        out = Outbox()
        out.send({client.session}, self._welcome(client, msg.resume, msg.id))
        self._push_player(client.name, out, client.session)
        for code in sorted(client.rooms):
            room = self._at(self.rooms.get(code), now)
            if room is not None:
                out.extend(self._after(room, room.reconnect(client.session), now))
        return client, out

    def disconnect(self, session: str, now: float) -> Outbox:
        """A connection closed: spectating ends, seats are held, and empty rooms start their grace period."""
        out = Outbox()
        client = self.clients.get(session)
        if client is None:
            return out
        if client.connected and not client.remote:
            self._online(-1)
        client.connected = client.remote = False
        self.watchers.discard(session)
        self.reviews.gone(session)
        self._drop_challenges(client, out, now)
        self._push_player(client.name, out)
        for code in sorted(client.rooms):
            room = self._at(self.rooms.get(code), now)
            if room is None:
                continue
            out.extend(self._after(room, room.disconnect(session, now), now))
            if room.seat_of(session) is None:
                client.rooms.discard(code)
        client.offline_since = now  # forgotten by `sweep` after SESSION_GRACE_S if it holds no seat by then
        return out

    def _forget(self, client: Client) -> None:
        """Drop a person who is gone and holds nothing (nor watches any tournament any more)."""
        self.clients.pop(client.session, None)
        self.by_token.pop(client.token_hash, None)
        self.tournaments.forget_session(client.session)

    # -- requests -----------------------------------------------------------------------------------------
    def handle(self, session: str, msg: Message, now: float) -> Outbox:
        """Carry out one request; a refusal becomes an `error` for the requester alone."""
        self.now = now
        try:
            return self._dispatch(self.clients[session], msg, now)
        except Refusal as refusal:
            out = Outbox()
            error = Error(
                code=refusal.code,
                message=refusal.message,
                id=msg.id,
                room=getattr(msg, "room", None),
                retry_after_ms=refusal.retry_after_ms,
            )
            out.send({session}, error)
            return out

    def _dispatch(self, client: Client, msg: Message, now: float) -> Outbox:
        """Route a request by its type."""
        match msg:
            case Hello():
                raise Refusal(ErrorCode.BAD_MESSAGE, "hello was already received on this connection")
            case ListRooms():
                return _reply(client, self._rooms_page(msg))
            case LobbyWatch():
                if msg.on:
                    self.watchers.add(client.session)
                else:
                    self.watchers.discard(client.session)
                return _reply(client, LobbyUpdate(counts=self.counts(), watching=msg.on, id=msg.id))
            case CreateRoom():
                return self._create(client, msg, now)
            case Join():
                return self._join(client, msg, now)
            case Leave():
                room = self._room(msg.room, client)
                players = self._players(room)  # a game the leaver resigns by leaving is still theirs to see
                out = room.leave(client.session)
                client.rooms.discard(room.code)
                out.send({client.session}, Left(room=room.code, id=msg.id))
                return self._after(room, out, now, players)
            case MakeMove():
                room = self._room(msg.room, client)
                out = room.move(client.session, msg.move, msg.seq, msg.id)
                self.played.add(room.code)
                return self._after(room, out, now)
            case Chat():
                room = self._room(msg.room, client)
                if not room.is_member(client.session):  # checked before any work on the text
                    raise Refusal(ErrorCode.NOT_IN_ROOM, f"you are not in room {room.code}")
                self._chat_allowed(room, client, now)
                return room.chat(client.session, client.name, clean_text(msg.text))
            case Resign():
                room = self._room(msg.room, client)
                return self._after(room, room.resign(client.session), now)
            case Rematch():
                room = self._room(msg.room, client)
                return self._after(room, room.rematch(client.session), now)
            case MoreTime():
                room = self._room(msg.room, client)
                return self._after(room, room.moretime(client.session), now)
            case Takeback():
                room = self._room(msg.room, client)
                return self._after(room, room.takeback(client.session), now)
            case TakebackDecline():
                room = self._room(msg.room, client)
                return self._after(room, room.takeback_decline(client.session), now)
            case Abort():
                room = self._room(msg.room, client)
                return self._after(room, room.abort(client.session), now)
            case AddAi():
                room = self._room(msg.room, client)
                self._may_add_ai(room, client)
                out = room.add_ai(client.session, msg.seat, self._ai_spec(msg, room))
                return self._after(room, _reply(client, room.info(msg.id)).extend(out), now)
            case RemoveAi():
                room = self._room(msg.room, client)
                out = room.remove_ai(client.session, msg.seat)
                return self._after(room, _reply(client, room.info(msg.id)).extend(out), now)
            case Sync():
                return self._sync(client, msg)
            case ListPlayers():
                return _reply(client, Players(players=self._players_online(), id=msg.id))
            case ChallengeRequest():
                return self._challenge(client, msg, now)
            case Invite():
                return self._invite(client, msg, now)
            case Accept():
                return self._accept(client, msg, now)
            case Decline():
                return self._decline(client, msg, now)
            case ListGames() | GetGame() | Leaderboard() | Profile():
                return _reply(client, self.history_answer(msg, client.token_hash))
            case Analyse():
                return self.reviews.request(Asker.of(client), msg, now)
            case CreateTournament():
                return self.tournaments.create(client, msg, now)
            case JoinTournament():
                return self.tournaments.join(client, msg, now)
            case LeaveTournament():
                return self.tournaments.leave(client, msg, now)
            case CancelTournament():
                return self.tournaments.cancel(client, msg, now)
            case GetTournament():
                return self.tournaments.get(client, msg.tournament, msg.id)
            case ListTournaments():
                return _reply(client, self.tournaments.listing(msg.id))
        raise Refusal(ErrorCode.BAD_MESSAGE, f"{msg.type} is not a request a client can send")

    def _room(self, code: str, client: Client | None = None) -> Room:
        """The room with this code (case-insensitive), or an unknown_room (or unavailable) refusal.

        With `client`, a private room that person is not in (nor hosts) is refused exactly as a code that does
        not exist, so no request but `join` (rate-limited per address) tells whether a private code is in use.
        """
        room = self._at(self.rooms.get(code.strip().upper()), self.now)
        if room is not None and client is not None and room.private and not self._inside(room, client):
            room = None
        if room is None:
            if code.strip().upper() in self.offline:
                raise Refusal(ErrorCode.UNAVAILABLE, UNAVAILABLE_TEXT)
            raise Refusal(ErrorCode.UNKNOWN_ROOM, f"there is no room {code[:16]!r}")
        return room

    @staticmethod
    def _at(room: Room | None, now: float) -> Room | None:
        """`room`, stamped with the time of what it is about to handle (rooms never read the clock)."""
        if room is not None:
            room.now = now
        return room

    @staticmethod
    def _inside(room: Room, client: Client) -> bool:
        """True if the person sits in, watches or hosts the room."""
        return room.is_member(client.session) or room.host == client.session

    def _guess_allowed(self, client: Client, code: str, now: float) -> None:
        """Joins by a code that is not a listed public room spend the address's guess allowance, hit or miss.

        When it is spent the join is refused with `rate_limited` before the code is looked up, so guessing
        codes gives no answer faster than `code_guesses_per_min` (docs/security.md has the arithmetic).
        """
        room = self.rooms.get(code.strip().upper())
        if room is not None and (not room.private or self._inside(room, client)):
            return
        per_s, burst = self.limits.code_guesses_per_min / 60, self.limits.code_guess_burst
        self._spend(self.guesses, client.ip, per_s, burst, now, "too many room codes tried from your address")

    def history_answer(self, msg: ListGames | GetGame | Leaderboard | Profile, viewer: str) -> Message:
        """The answer to a history request from the person whose token hash is `viewer` (Refusal if none).

        Reads only the store and the replay cache, so it runs wherever the store can be read: here, or in the
        server's history worker (server/history_worker.py), a process with a lobby of its own for this alone.
        """
        match msg:
            case ListGames():
                if not 1 <= msg.limit <= MAX_LIST_GAMES:
                    raise Refusal(ErrorCode.BAD_MESSAGE, f"limit must be 1 to {MAX_LIST_GAMES}")
                games = self._history().list_games(msg.player, msg.game, msg.limit, viewer, msg.room)
                return Games(games=games, id=msg.id)
            case GetGame():
                record = self._history().get_game(msg.game_id, viewer)
                if record is None:
                    raise Refusal(ErrorCode.UNKNOWN_GAME, f"there is no finished game {msg.game_id}")
                return GameRecord(record=record, frames=self._frames(record), id=msg.id)
            case Leaderboard():
                return self._leaderboard(msg)
            case Profile():
                return self._profile(viewer, msg)

    def _frames(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """A finished game's replay frames, from the cache if it was replayed lately (a game never changes)."""
        key = record["game_id"]
        frames = self.replays.get(key)
        if frames is None:
            frames = self.replays[key] = replay_frames(record)
            while len(self.replays) > REPLAY_CACHE:
                self.replays.popitem(last=False)
        else:
            self.replays.move_to_end(key)
        return frames

    def _history(self) -> History:
        """The finished-games store, or a refusal if this server keeps none."""
        if self.history is None:
            raise Refusal(ErrorCode.NOT_ALLOWED, "this server keeps no game history")
        return self.history

    def _create(self, client: Client, msg: CreateRoom, now: float) -> Outbox:
        """Open a new room with validated options; the creator is its host."""
        room, out = self._open_room(client, msg.game, msg.options, msg.private, now)
        out.send({client.session}, room.info(msg.id))
        return self._after(room, out, now)

    @staticmethod
    def _validated(game_name: str, options: dict[str, Any]) -> tuple[Game[Any, Any], dict[str, Any], dict[str, Any]]:
        """A game and its options checked as create_room checks them: (game, game options, room options)."""
        game = GAMES.get(game_name)
        if game is None:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"unknown game {game_name[:40]!r}; try one of {', '.join(GAMES)}")
        try:
            game_options, room_options = split_and_validate(game, options)
        except BadOptions as exc:
            raise Refusal(ErrorCode.BAD_OPTIONS, str(exc)) from None
        return game, game_options, room_options

    def _open_room(
        self, client: Client, game_name: str, options: dict[str, Any], private: bool, now: float
    ) -> tuple[Room, Outbox]:
        """Make a room hosted by `client` (the caps and option checks of create_room); its record is in the outbox."""
        game, game_options, room_options = self._validated(game_name, options)
        self._may_host(client, private)
        self._may_rate(client, room_options)
        room = Room(self._new_code(), game, game_options, room_options, client.session, client.name, private)
        room.rater = self.ratings.rate
        room.empty_since = room.now = now
        self.rooms[room.code] = room
        self.hosts[room.code] = (client.token_hash, client.ip)
        out = Outbox(changed=True)
        out.records.append(replace(room.saved(), host_token_hash=client.token_hash))
        return room, out

    def _join(self, client: Client, msg: Join, now: float) -> Outbox:
        """Take a seat or watch; a refused join leaves the person's rooms as they were."""
        self._guess_allowed(client, msg.room, now)
        room = self._room(msg.room)
        cap = self.limits.spectators_per_room
        if msg.role == Role.SPECTATOR and cap and len(room.spectators) >= cap and not room.is_member(client.session):
            raise Refusal(ErrorCode.TOO_MANY, f"room {room.code} has its {cap} spectators already")
        out = room.join(client.member, msg.role, msg.seat, msg.id)
        client.rooms.add(room.code)
        return self._after(room, out, now)

    def _new_code(self) -> str:
        """A fresh room code that no open room uses (in a cluster, one the node reserved, while it has one)."""
        if self.take_code is not None:
            code = self.take_code()
            if code is not None and code not in self.rooms and code not in self.offline:
                return code
        while True:
            code = self._random_code()
            if code not in self.rooms and code not in self.offline and not (self.code_taken and self.code_taken(code)):
                return code

    @staticmethod
    def _random_code() -> str:
        """A room code drawn at random."""
        return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))

    def _may_host(self, client: Client, private: bool) -> None:
        """Refuse a new room past the caps: per person, per address, and public rooms in all."""
        limits = self.limits
        hosts = [*self.hosts.values(), *self.remote_hosts.values()]  # (in a cluster, every node's rooms)
        mine = sum(1 for token_hash, _ in hosts if token_hash == client.token_hash)
        if limits.rooms_per_player and mine >= limits.rooms_per_player:
            raise Refusal(ErrorCode.TOO_MANY, f"you host {mine} open rooms; close one first")
        if limits.rooms_per_ip and client.ip:
            here = sum(1 for _, ip in hosts if ip == client.ip)
            if here >= limits.rooms_per_ip:
                raise Refusal(ErrorCode.TOO_MANY, f"your address hosts {here} open rooms; close one first")
        if not private and limits.public_rooms:
            public = sum(1 for room in self.rooms.values() if not room.private) + len(self.remote)
            if public >= limits.public_rooms:
                raise Refusal(ErrorCode.TOO_MANY, "the server has all the public rooms it lists; open a private one")

    def _may_add_ai(self, room: Room, client: Client) -> None:
        """Refuse the AI that would make one more all-AI room for an address that runs its share of them."""
        cap = self.limits.ai_rooms_per_ip
        if not cap or sum(1 for s in room.seats if s.free) != 1 or any(s.holder is not None for s in room.seats):
            return
        host_ip = self.hosts.get(room.code, ("", client.ip))[1] or client.ip
        running = sum(
            1
            for code, other in self.rooms.items()
            if other is not room
            and other.status != RoomStatus.FINISHED
            and all(s.ai is not None for s in other.seats)
            and self.hosts.get(code, ("", ""))[1] == host_ip
        )
        if running >= cap:
            raise Refusal(ErrorCode.TOO_MANY, f"your address runs {running} all-AI games; let one finish first")

    def _chat_allowed(self, room: Room, client: Client, now: float) -> None:
        """Each room relays a bounded number of lines per second: players share one allowance, spectators another."""
        player = room.seat_of(client.session) is not None
        key = (room.code, player)
        allowance = self.chat.get(key)
        if allowance is None:
            rate = self.limits.player_chat_per_s if player else self.limits.spectator_chat_per_s
            allowance = self.chat[key] = Allowance(rate, now)
        if not allowance.take(now):
            raise Refusal(
                ErrorCode.RATE_LIMITED,
                f"room {room.code} is chatting too fast; wait a moment",
                retry_after_ms=allowance.retry_after_ms(),
            )

    def _ai_spec(self, msg: AddAi, room: Room) -> AiSpec:
        """Check an add_ai request's level or bot name (the bot must play this room's game)."""
        if (msg.level is None) == (msg.bot is None):
            raise Refusal(ErrorCode.BAD_OPTIONS, "give exactly one of 'level' (1-5) or 'bot'")
        if msg.level is not None and msg.level not in AI_LEVELS:
            raise Refusal(ErrorCode.BAD_OPTIONS, "AI level must be 1 (easy) to 5 (max)")
        if msg.bot is not None and room.game.name not in self.ai_bots.get(msg.bot, ()):
            names = ", ".join(sorted(b for b, g in self.ai_bots.items() if room.game.name in g)) or "none"
            raise Refusal(ErrorCode.BAD_OPTIONS, f"no bot {msg.bot[:40]!r} plays {room.game.name}; bots: {names}")
        return AiSpec(level=msg.level, bot=msg.bot)

    def _sync(self, client: Client, msg: Sync) -> Outbox:
        """Resend a member the room's current state in full (its `room` summary while no game exists yet)."""
        room = self._room(msg.room, client)
        if not room.is_member(client.session):
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you are not in room {room.code}")
        out = Outbox()
        if room.state is None:
            out.send({client.session}, room.info(msg.id))
        else:
            out.send({client.session}, room.snapshot(viewer=client.session, request_id=msg.id))
        return out

    # -- presence and challenges --------------------------------------------------------------------------------
    def _info(self, name: str) -> PlayerInfo:
        """One person as `players` shows them: every connected session under exactly this name, together."""
        sessions = [c for c in self.clients.values() if c.connected and c.name == name]
        playing = {
            code
            for c in sessions
            for code in c.rooms
            if (room := self.rooms.get(code)) is not None
            and room.status in RUNNING
            and room.seat_of(c.session) is not None
        }
        return PlayerInfo(
            name=name,
            bot=any(c.bot for c in sessions),
            claimed=any(c.claimed for c in sessions),
            games=tuple(sorted({g for c in sessions for g in c.accepts})),
            playing=len(playing),
            online=bool(sessions),
        )

    def _players_online(self) -> list[PlayerInfo]:
        """The `players` list: one entry per name online, bots first, then by name; at most MAX_PLAYERS_LISTED."""
        names = sorted(
            {(not c.bot, name_key(c.name), c.name) for c in self.clients.values() if c.connected},
        )
        seen: list[str] = []
        for _, _, name in names:
            if name not in seen:
                seen.append(name)
            if len(seen) >= MAX_PLAYERS_LISTED:
                break
        return [self._info(name) for name in seen]

    def _push_player(self, name: str, out: Outbox, skip: str | None = None) -> None:
        """Tell everyone watching the lobby (`lobby_watch`) how `name` looks now (`online` false once gone)."""
        browsing = self.watchers - {skip} if skip is not None else self.watchers
        if browsing:
            out.send(browsing, Player.of(self._info(name)))

    def _targets(self, to: str, sender: Client) -> tuple[str, set[str]]:
        """The target's name and connected sessions: a claimed name by its key, a guest only by its exact name."""
        key = name_key(clean_name(to)) if to.strip() else ""
        claim = self.claims.get(key)
        online = [c for c in self.clients.values() if c.connected]
        if claim is not None:
            found = [c for c in online if c.claimed and c.name == claim.name]
        else:
            found = [c for c in online if c.name == to and not c.claimed]
        if not found:
            raise Refusal(ErrorCode.UNKNOWN_PLAYER, f"nobody is online as {to[:MAX_NAME]!r}")
        if any(c.session == sender.session or c.token_hash == sender.token_hash for c in found) or (
            sender.claimed and claim is not None and sender.name == claim.name
        ):
            raise Refusal(ErrorCode.NOT_ALLOWED, "you cannot challenge yourself")
        return found[0].name, {c.session for c in found}

    def _may_challenge(
        self, client: Client, game: str, options: dict[str, Any], to: str, targets: set[str], now: float
    ) -> None:
        """Refuse a challenge past a pending cap, for a game the target does not take challenges for, rated for a
        guest (who could not sit down in it: its room would be left open with the challenger alone), or sent
        faster than its address's allowance."""
        self._pending_caps(client, to, bot=all(self.clients[s].bot for s in targets))
        self._takes(game, to, targets)
        if options.get("rated") and not any(self.clients[s].claimed for s in targets):
            raise Refusal(ErrorCode.NOT_ALLOWED, f"{to} is a guest: rated games are for claimed players")
        self._pace_challenges(client, now)

    def _pending_caps(self, client: Client, to: str, bot: bool) -> None:
        """Refuse one more waiting challenge from this session, from its address, to `to` from its address (unless
        `to` is a bot, which answers by program and may take several games from one person), or to `to` from
        anyone (`too_many`; tournament invitations are bounded by the tournament caps instead)."""
        pending = [ch for ch in self.challenges.values() if ch.tournament is None]
        to_them = [ch for ch in pending if ch.to == to]
        limits = self.limits
        caps = (
            (limits.challenges_per_player, [ch for ch in pending if ch.sender == client.session], "you have"),
            (limits.challenges_per_ip, self._sent_from(client.ip, pending), "your address has"),
            (
                0 if bot else limits.challenges_per_ip_to_player,
                self._sent_from(client.ip, to_them),
                f"to {to}, you have",
            ),
            (limits.challenges_received, to_them, f"{to} has"),
        )
        for cap, waiting, who in caps:
            if cap and len(waiting) >= cap:
                raise Refusal(ErrorCode.TOO_MANY, f"{who} {len(waiting)} challenges waiting for an answer; wait")

    def _sent_from(self, ip: str, challenges: list[Challenge]) -> list[Challenge]:
        """The challenges of `challenges` sent by a session connected from `ip`."""
        return [ch for ch in challenges if (sender := self.clients.get(ch.sender)) is not None and sender.ip == ip]

    def _pace_challenges(self, client: Client, now: float) -> None:
        """Refuse a challenge or invite past its address's allowance (`challenges_per_min`), saying when to retry."""
        per_s, burst = self.limits.challenges_per_min / 60, self.limits.challenge_burst
        self._spend(self.challenge_pace, client.ip, per_s, burst, now, "too many challenges sent from your address")

    @staticmethod
    def _spend(allowances: dict[str, Allowance], ip: str, per_s: float, burst: int, now: float, why: str) -> None:
        """Take one from the address's allowance in `allowances` (made full on first use; `per_s` 0: no limit), or
        refuse `rate_limited`, saying when to retry (`sweep` forgets allowances that are full again)."""
        if not per_s:
            return
        allowance = allowances.get(ip)
        if allowance is None:
            allowance = allowances[ip] = Allowance(per_s, now, burst)
        if not allowance.take(now):
            raise Refusal(ErrorCode.RATE_LIMITED, f"{why}; wait a moment", retry_after_ms=allowance.retry_after_ms())

    def _takes(self, game: str, to: str, targets: set[str]) -> None:
        """Refuse an offer of a game the target does not take challenges for."""
        if not any(game in self.clients[s].accepts for s in targets):
            raise Refusal(ErrorCode.NOT_ALLOWED, f"{to} does not take challenges for {game[:40]}")

    def invitees(self, host: Client, name: str, game: str) -> tuple[str, set[str]]:
        """The name and connected sessions a tournament's host may invite as `name` (server/tournament_host.py):
        online, not the host, taking challenges for the game; else the refusal a challenge would get."""
        to, targets = self._targets(name, host)
        self._takes(game, to, targets)
        return to, targets

    def _offer(self, client: Client, challenge: Challenge, request_id: int | None) -> Outbox:
        """Keep a new challenge and tell both sides: the reply to the challenger, the push to the target."""
        self.challenges[challenge.id] = challenge
        expires_ms = round(self.limits.challenge_s * 1000)
        out = Outbox()
        out.send(
            {client.session},
            ChallengeSent(challenge=challenge.id, to=challenge.to, expires_ms=expires_ms, id=request_id),
        )
        out.send(
            challenge.targets,
            Challenged(
                challenge=challenge.id,
                sender=self._info(client.name),
                game=challenge.game,
                options=challenge.options,
                seat=challenge.target_seat,
                expires_ms=expires_ms,
                room=challenge.room,
            ),
        )
        return out

    def _challenge(self, client: Client, msg: ChallengeRequest, now: float) -> Outbox:
        """Offer a named online player a new game; nothing reaches the target unless every check passes."""
        game, game_options, room_options = self._validated(msg.game, msg.options)
        seats = game.seat_count(game_options)
        if not 0 <= msg.seat < seats:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"seat must be 0..{seats - 1}")
        to, targets = self._targets(msg.to, client)
        options = {**game_options, **room_options}
        self._may_challenge(client, game.name, options, to, targets, now)
        challenge = Challenge(
            self.challenge_tag + secrets.token_hex(6),
            client.session,
            targets,
            to,
            game.name,
            options,
            msg.seat,
            now + self.limits.challenge_s,
        )
        return self._offer(client, challenge, msg.id)

    def _invite(self, client: Client, msg: Invite, now: float) -> Outbox:
        """The host offers an open seat of a room whose game has not started to a named online player."""
        room = self._room(msg.room, client)
        if room.host != client.session:
            raise Refusal(ErrorCode.NOT_ALLOWED, "only the host can invite")
        if room.status != RoomStatus.WAITING:
            raise Refusal(ErrorCode.NOT_ALLOWED, "the game has already started")
        if not 0 <= msg.seat < len(room.seats):
            raise Refusal(ErrorCode.BAD_MESSAGE, f"seat must be 0..{len(room.seats) - 1}")
        if not room.seats[msg.seat].free:
            raise Refusal(ErrorCode.SEAT_TAKEN, f"seat {msg.seat} is taken")
        to, targets = self._targets(msg.to, client)
        summary = room.summary()
        self._may_challenge(client, room.game.name, dict(summary.options), to, targets, now)
        challenge = Challenge(
            self.challenge_tag + secrets.token_hex(6),
            client.session,
            targets,
            to,
            room.game.name,
            dict(summary.options),
            msg.seat,
            now + self.limits.challenge_s,
            room=room.code,
        )
        return self._offer(client, challenge, msg.id)

    def _offered(self, client: Client, challenge_id: str) -> Challenge:
        """The pending challenge with this id offered to `client`, or an unknown_challenge refusal."""
        challenge = self.challenges.get(challenge_id)
        if challenge is None or client.session not in challenge.targets:
            raise Refusal(ErrorCode.UNKNOWN_CHALLENGE, f"no challenge {challenge_id[:20]!r} is waiting for you")
        return challenge

    def _accept(self, client: Client, msg: Accept, now: float) -> Outbox:
        """Take a challenge: a new room with both seated (the game starts), the invite's seat, or the invitation's
        tournament."""
        challenge = self._offered(client, msg.challenge)
        if challenge.tournament is not None:
            return self.tournaments.accept(client, challenge, msg.id, now)
        sender = self.clients.get(challenge.sender)
        if sender is None or not sender.connected:  # cannot happen: a challenger leaving ends its challenges
            self.challenges.pop(challenge.id, None)
            raise Refusal(ErrorCode.UNKNOWN_CHALLENGE, "the challenger has left")
        if challenge.room is not None:
            room = self._room(challenge.room)
            out = room.join(client.member, Role.PLAYER, challenge.seat, msg.id)
            client.rooms.add(room.code)
        else:
            try:
                room, out = self._open_room(sender, challenge.game, challenge.options, True, now)
            except Refusal as refusal:
                return self._unopened(challenge, client, refusal, msg.id)
            out.extend(room.join(sender.member, Role.PLAYER, challenge.seat, None))
            sender.rooms.add(room.code)
            out.extend(room.join(client.member, Role.PLAYER, challenge.target_seat, msg.id))
            client.rooms.add(room.code)
        del self.challenges[challenge.id]
        gone = ChallengeGone(challenge=challenge.id, why=ChallengeEnd.ACCEPTED, room=room.code)
        out.send({challenge.sender} | challenge.targets - {client.session}, gone)
        return self._after(room, out, now)

    def _unopened(self, challenge: Challenge, client: Client, refusal: Refusal, request_id: int | None) -> Outbox:
        """An accepted challenge whose room cannot be opened (the challenger hosts all the rooms it may, the server
        lists all it can): it could not be accepted later either, so it ends now. The accepter gets the refusal as
        the reply to its `accept`, the challenger the same error; both sides get `challenge_gone` declined, the
        reason saying why the game could not start."""
        del self.challenges[challenge.id]
        out = Outbox()
        out.send({client.session}, Error(code=refusal.code, message=refusal.message, id=request_id))
        out.send(
            {challenge.sender},
            Error(code=refusal.code, message=f"your challenge to {challenge.to} could not start: {refusal.message}"),
        )
        reason = f"the game could not start: {refusal.message}"[:MAX_REASON]
        gone = ChallengeGone(challenge=challenge.id, why=ChallengeEnd.DECLINED, reason=reason)
        out.send({challenge.sender} | challenge.targets, gone)
        return out

    def _decline(self, client: Client, msg: Decline, now: float) -> Outbox:
        """Turn down a challenge offered to you (the challenger is told), or withdraw your own."""
        challenge = self.challenges.get(msg.challenge)
        if challenge is not None and challenge.sender == client.session:
            why = ChallengeEnd.WITHDRAWN
        else:
            challenge = self._offered(client, msg.challenge)
            why = ChallengeEnd.DECLINED
        del self.challenges[challenge.id]
        reason = clean_text(msg.reason)[:MAX_REASON] if msg.reason else None
        out = Outbox()
        gone = ChallengeGone(challenge=challenge.id, why=why, reason=reason)
        out.send(self._connected({challenge.sender} - {client.session}), gone)
        out.send({client.session}, replace(gone, id=msg.id))
        out.send(challenge.targets - {client.session}, gone)
        if challenge.tournament is not None:
            out.extend(self.tournaments.invitation_gone(challenge, now))
        return out

    def _connected(self, sessions: set[str]) -> set[str]:
        """Those of `sessions` connected now (a tournament's host may be gone while its invitations stand)."""
        return {s for s in sessions if (c := self.clients.get(s)) is not None and c.connected}

    def _end_challenge(self, challenge: Challenge, why: ChallengeEnd, out: Outbox, now: float) -> None:
        """Drop a challenge and tell both sides' remaining connections (and its tournament, for an invitation)."""
        self.challenges.pop(challenge.id, None)
        gone = ChallengeGone(challenge=challenge.id, why=why)
        out.send(self._connected({challenge.sender} | challenge.targets), gone)
        if challenge.tournament is not None:
            out.extend(self.tournaments.invitation_gone(challenge, now))

    def withdraw(self, challenge: Challenge, out: Outbox, now: float) -> None:
        """End a challenge on its sender's behalf (`withdrawn`), as a tournament's host cancelling does."""
        self._end_challenge(challenge, ChallengeEnd.WITHDRAWN, out, now)

    def _drop_challenges(self, client: Client, out: Outbox, now: float) -> None:
        """A connection closed: its challenges end, and so do those only it could answer (a tournament's
        invitations stand when its host goes: the tournament does not need the host)."""
        for challenge in list(self.challenges.values()):
            if challenge.sender == client.session and challenge.tournament is None:
                self._end_challenge(challenge, ChallengeEnd.LEFT, out, now)
            elif client.session in challenge.targets:
                challenge.targets.discard(client.session)
                if not challenge.targets:
                    self._end_challenge(challenge, ChallengeEnd.LEFT, out, now)

    # -- time-driven work -------------------------------------------------------------------------------------
    def tick(self, code: str, now: float) -> Outbox:
        """A live room's clock fired."""
        room = self._at(self.rooms.get(code), now)
        return self._after(room, room.tick(), now) if room else Outbox()

    def flag(self, code: str, now: float) -> Outbox:
        """A turn-based room's flag timer fired: the mover loses on time if their time is up."""
        room = self._at(self.rooms.get(code), now)
        return self._after(room, room.flag(), now) if room else Outbox()

    def record_lag(self, session: str, rtt_ms: float) -> None:
        """A ping round trip measured on `session`'s connection, for the lag compensation of its seats."""
        client = self.clients.get(session)
        for code in sorted(client.rooms) if client else ():
            room = self.rooms.get(code)
            if room is not None:
                room.note_lag(session, rtt_ms)

    def clocked_sessions(self) -> set[str]:
        """Connected sessions seated in a room whose clock runs (their lag is measured)."""
        return {
            seat.holder.session
            for room in self.rooms.values()
            if room.clocked()
            for seat in room.seats
            if seat.holder is not None and seat.connected
        }

    def ai_moved(self, code: str, seat: int, seq: int, text: str, info: dict[str, Any], now: float) -> Outbox:
        """An AI answered; hand its move to its room (an answer the room no longer wants is dropped)."""
        room = self._at(self.rooms.get(code), now)
        if room is None:
            return Outbox()
        try:
            return self._after(room, room.ai_moved(seat, seq, text, info), now)
        except Refusal:
            return Outbox()

    def sweep(self, now: float) -> Outbox:
        """Forfeit seats left too long, and close rooms that have had nobody in them for their grace period."""
        out = Outbox()
        for challenge in list(self.challenges.values()):
            if now >= challenge.expires:
                self._end_challenge(challenge, ChallengeEnd.EXPIRED, out, now)
        for client in list(self.clients.values()):
            gone = client.offline_since
            if not client.connected and not client.rooms and gone is not None and now - gone >= SESSION_GRACE_S:
                self._forget(client)  # its token resumed nothing in time
        for allowances in (self.guesses, self.challenge_pace):
            for ip, allowance in list(allowances.items()):
                if allowance.tokens + (now - allowance.stamp) * allowance.rate >= allowance.capacity:
                    del allowances[ip]  # full again: forgetting it changes nothing
        for code, room in list(self.rooms.items()):
            room.now = now
            out.extend(self._after(room, room.sweep(now), now))
            if room.empty_since is not None and now - room.empty_since >= self._grace(room):
                out.extend(self._close(code))
        return out.extend(self.tournaments.sweep(now))

    def _grace(self, room: Room) -> float:
        """How long an empty room stays open: long while players hold seats in an unfinished game they played.

        A game nobody has made a move in (rooms opened and sat in only to hold them) gets the short grace, and
        an all-AI room nobody watches an even shorter one: its searches use the AI workers others wait for.
        A room with nothing to wait for (no held seat of an unfinished game, its host gone) closes promptly.
        """
        if room.code in self.tournaments.by_room:
            return HELD_GAME_GRACE_S  # a tournament game is played out, watched or not
        if all(s.ai is not None for s in room.seats):
            return min(EMPTY_AI_ROOM_GRACE_S, EMPTY_ROOM_GRACE_S)  # an exhibition nobody watches stops soon
        if not self._awaited(room):
            return PROMPT_CLOSE_S
        held = room.status in RUNNING and room.code in self.played and any(s.holder is not None for s in room.seats)
        return HELD_GAME_GRACE_S if held else EMPTY_ROOM_GRACE_S

    def _awaited(self, room: Room) -> bool:
        """True if an empty room has something to wait for: its host still connected (about to sit down or to
        invite someone), or people holding seats in its unfinished game (they may resume)."""
        host = self.clients.get(room.host)
        if host is not None and host.connected:
            return True
        return room.status != RoomStatus.FINISHED and any(s.holder is not None for s in room.seats)

    def _close(self, code: str) -> Outbox:
        """Remove a room, forget it on disk, and tell the lobby it is gone."""
        room = self.rooms.pop(code)
        self._forget_room(code)
        room.close()
        out = Outbox()
        out.records.append(RoomClosed(code))
        for seat in room.seats:
            client = self.clients.get(seat.session or "")
            if client is not None:
                client.rooms.discard(code)
                if not client.connected and not client.rooms:
                    self._forget(client)
        self._push_summary(room, out)
        return out

    def take_offline(self, code: str, spare: str | None = None) -> Outbox:
        """The room's records could not be stored: stop it in memory and tell its members (but `spare`).

        Nothing of what it decided since its last stored record was shown to anyone; after a restart it comes
        back as it is on disk. Until then every request for it is refused with `unavailable`.
        """
        room = self.rooms.pop(code, None)
        out = Outbox()
        if room is None:
            return out
        self.offline.add(code)
        self._forget_room(code)
        audience = room.audience()
        room.close()
        for session in audience | {s.session for s in room.seats if s.session} | room.spectators:
            client = self.clients.get(session)
            if client is not None:
                client.rooms.discard(code)
                if not client.connected and not client.rooms:
                    self._forget(client)
        out.send(audience - {spare}, Error(code=ErrorCode.UNAVAILABLE, message=UNAVAILABLE_TEXT, room=code))
        self._push_summary(room, out)
        return out

    def _forget_room(self, code: str) -> None:
        """Drop what the lobby keeps about a room that closed."""
        self.hosts.pop(code, None)
        self.played.discard(code)
        self.chat.pop((code, True), None)
        self.chat.pop((code, False), None)

    # -- a cluster of nodes (server/cluster) ----------------------------------------------------------------------
    def remote_room(self, code: str, summary: RoomSummary | None) -> None:
        """Another node's listed room appeared, changed (`summary`) or left the listing (None)."""
        if summary is None:
            if self.remote.pop(code, None) is None:
                return
        else:
            self.remote[code] = summary
        self._listing = self._by_game = None
        self.lobby_changes[code] = None

    def attach(
        self,
        session: str,
        name: str,
        token_hash: str,
        bot: bool,
        claimed: bool,
        ip: str,
        accepts: tuple[str, ...] | None = None,
    ) -> Client:
        """A person connected to another node (present in the cluster, or sending requests for this node's rooms):
        their session here, marked remote (counted online at their own node, not here)."""
        client = self.clients.get(session)
        if client is None:
            client = Client(session, name, token_hash, ip=ip, claimed=claimed, bot=bot, remote=True)
            client.accepts = tuple(a for a in accepts or () if a in GAMES)
            self.clients[session] = client
            self.by_token[token_hash] = client
            return client
        if client.connected and not client.remote:
            self._online(-1)  # it was connected here; now it is at another node
        client.connected, client.remote, client.ip = True, True, ip
        client.bot = client.bot or bot
        if accepts is not None:
            client.accepts = tuple(a for a in accepts if a in GAMES)
        return client

    def adopt(self, token_hash: str, name: str, claimed: bool, bot: bool) -> None:
        """A resume token another node of the cluster gave out: known here from now on (the resume then goes on
        as for a token of this node; the seats it holds are on the nodes that own their rooms)."""
        if token_hash not in self.by_token:
            client = Client(session_of(token_hash), name, token_hash, connected=False, claimed=claimed, bot=bot)
            self.clients[client.session] = client
            self.by_token[token_hash] = client

    def reattach(self, session: str, now: float) -> Outbox:
        """A person is back (on any node): hand them every seat they hold here, each with the full state."""
        out = Outbox()
        client = self.clients.get(session)
        for code in sorted(client.rooms) if client else ():
            room = self._at(self.rooms.get(code), now)
            if room is not None:
                out.extend(self._after(room, room.reconnect(session), now))
        return out

    def drop_room(self, code: str) -> None:
        """Another node owns this room now: forget it here, writing nothing (its new owner goes on with it)."""
        room = self.rooms.pop(code, None)
        if room is None:
            return
        self._forget_room(code)
        self._summaries.pop(code, None)
        self._listing = self._by_game = None
        self.lobby_changes[code] = None
        for session in {s.session for s in room.seats if s.session} | room.spectators:
            client = self.clients.get(session)
            if client is not None:
                client.rooms.discard(code)
                if not client.connected and not client.rooms:
                    self._forget(client)

    # -- restart ------------------------------------------------------------------------------------------------
    def restore(self, stored: list[StoredRoom], now: float) -> Outbox:
        """Rebuild the rooms a previous run left open (each room restores itself; the lobby keeps the sessions).

        A room that cannot be rebuilt (a game this version lacks, moves its rules refuse, a broken stored value)
        is left out, on disk as it is, and listed in `skipped`: one bad room never stops the server.
        """
        out = Outbox()
        for saved in stored:
            game = GAMES.get(saved.game)
            if game is None:
                self.skipped.append((saved.code, f"unknown game {saved.game[:40]!r}"))
                continue
            known = set(self.clients)
            try:
                room, started = Room.restore(self._checked(saved, game), game, now, self._held_for)
            except Exception as exc:  # a log the current rules refuse cannot be resumed honestly; leave it out
                self.skipped.append((saved.code, f"{type(exc).__name__}: {exc}"[:200]))
                for session in set(self.clients) - known:
                    if not self.clients[session].rooms:
                        self._forget(self.clients[session])
                continue
            self.rooms[room.code] = room
            room.rater = self.ratings.rate
            room.tournament_of = self.tournament_of  # the tournaments are loaded first
            self.hosts[room.code] = (saved.host_token_hash or "", "")
            if room.moves:
                self.played.add(room.code)
            for seat in room.seats:
                if seat.holder is not None:
                    self.clients[seat.holder.session].rooms.add(room.code)
            out.extend(started)
        return out

    def tournament_of(self, code: str) -> str | None:
        """The tournament whose game room `code` plays, if any (`Room.tournament`)."""
        found = self.tournaments.by_room.get(code)
        return found[0] if found is not None else None

    @staticmethod
    def _checked(saved: StoredRoom, game: Game[Any, Any]) -> StoredRoom:
        """A stored room with its options validated as a new room's are and its seats in range (else raises)."""
        try:
            options, room_options = split_and_validate(game, {**saved.options, **saved.room_options})
        except BadOptions as exc:
            raise ValueError(f"stored options refused: {exc}") from None
        seats = game.seat_count(options)
        for seat in saved.seats:
            if not 0 <= seat.seat < seats:
                raise ValueError(f"seat {seat.seat} out of range 0..{seats - 1}")
        return replace(saved, options=options, room_options=room_options)

    def _held_for(self, token_hash: str, name: str, bot: bool) -> Member:
        """The member a stored token resumes: the session restored already, or a new one waiting for its owner.

        A session that held a seat as a bot is a bot again; its name counts as claimed if the claim of that
        name has exactly that spelling (the resume token, not the key, proves who it is).
        """
        client = self.by_token.get(token_hash)
        if client is None:
            client = Client(session_of(token_hash), name or "player", token_hash, connected=False)
            claim = self.claims.get(name_key(client.name))
            client.claimed = claim is not None and claim.name == client.name
            self.clients[client.session] = client
            self.by_token[client.token_hash] = client
        client.bot = client.bot or bot
        return client.member

    # -- ratings ----------------------------------------------------------------------------------------------------
    def load_tournaments(self, stored: list[dict[str, Any]]) -> list[str]:
        """Take the tournaments a previous run stored (before `restore`); the ids of those that could not be read."""
        return self.tournaments.load(stored)

    def load_ratings(self, ratings: list[StoredRating]) -> None:
        """Take the ratings a previous run stored (at start-up, before any game ends)."""
        self.ratings.load(ratings)

    @staticmethod
    def _may_rate(client: Client, room_options: dict[str, Any]) -> None:
        """Only a claimed player may open a rated room (guests have no lasting name to rate)."""
        if room_options.get("rated") and not client.claimed:
            raise Refusal(
                ErrorCode.NOT_ALLOWED,
                "rated games are for claimed players: connect with a key to claim your name (guests play unrated)",
            )

    def _leaderboard(self, msg: Leaderboard) -> Leaders:
        """One page of a pool's leaderboard, read from the store (bounded: offset and limit are checked first)."""
        if msg.game not in self.pools:
            known = ", ".join(self.pools)
            raise Refusal(ErrorCode.BAD_OPTIONS, f"no leaderboard {msg.game[:40]!r}; try one of {known}")
        if not 0 <= msg.offset <= MAX_LEADERBOARD_OFFSET:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"offset must be 0..{MAX_LEADERBOARD_OFFSET}")
        if not 1 <= msg.limit <= MAX_LEADERBOARD_LIMIT:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"limit must be 1..{MAX_LEADERBOARD_LIMIT}")
        total, rows = self._history().leaderboard(msg.game, msg.offset, msg.limit)
        book = self.ratings
        entries = []
        for row in rows:
            vol, rated_at = row.pop("vol"), row.pop("rated_at")
            rd = round(book.shown_rd(row["rating"], row.pop("rd"), vol, rated_at), 2)
            entries.append(LeaderEntry(rd=rd, provisional=rd >= book.policy.provisional_rd, **row))
        return Leaders(game=msg.game, offset=msg.offset, total=total, entries=entries, id=msg.id)

    def _profile(self, viewer: str, msg: Profile) -> PlayerCard:
        """A player's card: ratings by pool and latest rated games (unknown_player if they have no rating)."""
        name = clean_name(msg.name)[:MAX_NAME]
        ratings, recent = self._history().profile(player_key(name), viewer)
        if not ratings:
            raise Refusal(ErrorCode.UNKNOWN_PLAYER, f"{name!r} has played no rated game")
        book = self.ratings
        shown = [round(book.shown_rd(r.rating, r.rd, r.vol, r.rated_at), 2) for r in ratings]
        return PlayerCard(
            name=ratings[0].name,
            kind=ratings[0].kind,
            ratings=[
                PoolRating(
                    r.pool,
                    round(r.rating, 2),
                    rd,
                    rd >= book.policy.provisional_rd,
                    r.games,
                    r.wins,
                    r.draws,
                    r.losses,
                )
                for r, rd in zip(ratings, shown, strict=True)
            ],
            recent=recent,
            id=msg.id,
        )

    # -- lobby pushes ---------------------------------------------------------------------------------------------
    def _after(self, room: Room, out: Outbox, now: float, players: tuple[str | None, ...] | None = None) -> Outbox:
        """Bookkeeping after a room changed: its empty-since clock and the lobby's view of it."""
        if room.occupied():
            room.empty_since = None
        elif room.empty_since is None:
            room.empty_since = now
        if out.changed:
            self._push_summary(room, out)
            out.changed = False
        for index, record in enumerate(out.records):
            if isinstance(record, GameFinished) and record.code == room.code and not record.token_hashes:
                hashes = players or self._players(room)
                out.records[index] = replace(record, private=room.private, token_hashes=hashes)
        if room.code in self.tournaments.by_room and room.result is not None:
            out.extend(self.tournaments.finished(room, room.result, now))  # a tournament game ended
        return out

    @staticmethod
    def _players(room: Room) -> tuple[str | None, ...]:
        """By seat, the token hash of the person sitting there (None for an AI or an empty seat)."""
        return tuple(s.holder.token_hash if s.holder else None for s in room.seats)

    def _push_summary(self, room: Room, out: Outbox) -> None:
        """Tell the room's members what it looks like now, and note a public room's change for the lobby's watchers.

        The watchers get it in the next `lobby` push (`lobby_batch`), together with every other change since
        the last one: a thousand changes cost each watcher one frame per interval, not a thousand frames.
        """
        if not room.private:
            self._summaries.pop(room.code, None)
            self._listing = self._by_game = None
            self.lobby_changes[room.code] = None
        if self.cluster_changes is not None:
            self.cluster_changes[room.code] = None
        audience = room.audience()
        if audience:
            out.send(audience, RoomInfo.of(self._summary(room)))
        self._note_busy(room, out)

    def _note_busy(self, room: Room, out: Outbox) -> None:
        """Presence follows games: a `player` push for each name whose count of games in progress just changed
        (the room's game started or ended, a seated player left or sat down, the room closed)."""
        seated: frozenset[str] = frozenset()
        if room.code in self.rooms and room.status in RUNNING:
            seated = frozenset(c.name for seat in room.seats if (c := self.clients.get(seat.session or "")) is not None)
        before = self._busy.pop(room.code, frozenset())
        if seated:
            self._busy[room.code] = seated
        if self.watchers:
            for name in sorted(before ^ seated):
                self._push_player(name, out)

    def _summary(self, room: Room) -> RoomSummary:
        """A room's summary (kept until the room changes, for the listing and the pushes)."""
        if room.private or room.code not in self.rooms:
            return room.summary()
        summary = self._summaries.get(room.code)
        if summary is None:
            summary = self._summaries[room.code] = room.summary()
        return summary

    @staticmethod
    def offered(room: Room) -> bool:
        """True if the lobby lists the room: a public room, unless every person holding a seat in it is
        disconnected (nobody would be there to play with whoever joins; it is listed again when one is back)."""
        if room.private:
            return False
        humans = [seat for seat in room.seats if seat.holder is not None]
        return not humans or any(seat.connected for seat in humans)

    def listing(self) -> list[RoomSummary]:
        """Every listed room's summary, in listing order (see LISTING_ORDER); rebuilt only after a change."""
        if self._listing is None:
            rooms = sorted(
                (room for room in self.rooms.values() if self.offered(room)),
                key=lambda room: LISTING_ORDER.get(room.status, 3),
            )
            self._listing = [self._summary(room) for room in rooms]
            if self.remote:  # a cluster: every node lists every node's rooms, in the same order
                self._listing = sorted(
                    self._listing + [s for code, s in self.remote.items() if code not in self.rooms],
                    key=lambda summary: LISTING_ORDER.get(summary.status, 3),
                )
        return self._listing

    def counts(self) -> LobbyCounts:
        """The listed rooms by game and status, and the sessions online (`welcome.counts`, `lobby.counts`)."""
        if self._by_game is None:
            self._by_game = {}
            for summary in self.listing():
                by_status = self._by_game.setdefault(summary.game, {})
                by_status[summary.status] = by_status.get(summary.status, 0) + 1
        return LobbyCounts(rooms=len(self.listing()), online=self.online + self.online_elsewhere, games=self._by_game)

    def _online(self, change: int) -> None:
        """A session connected (+1) or disconnected (-1): the counts change."""
        self.online += change
        self.counts_changed = True

    def _rooms_page(self, msg: ListRooms) -> Rooms:
        """The `rooms` reply to a `list_rooms`: one page of the listing, filtered, and the total that matches."""
        if not 1 <= msg.limit <= MAX_ROOMS_PAGE:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"limit must be 1 to {MAX_ROOMS_PAGE}, not {msg.limit}")
        if msg.offset < 0:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"offset must be 0 or more, not {msg.offset}")
        if msg.game is not None and msg.game not in GAMES:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"unknown game {msg.game[:40]!r}; try one of {', '.join(GAMES)}")
        if msg.status == RoomStatus.CLOSED:
            raise Refusal(ErrorCode.BAD_OPTIONS, "closed rooms are not listed")
        rooms = self.listing()
        if msg.game is not None or msg.status is not None:
            rooms = [
                s
                for s in rooms
                if (msg.game is None or s.game == msg.game) and (msg.status is None or s.status == msg.status)
            ]
        page = rooms[msg.offset : msg.offset + msg.limit]
        return Rooms(rooms=page, total=len(rooms), offset=msg.offset, id=msg.id)

    def lobby_pending(self) -> bool:
        """True if the watchers have a `lobby` push coming (something changed since the last one)."""
        return bool(self.lobby_changes) or self.counts_changed

    def lobby_batch(self) -> tuple[set[str], LobbyUpdate] | None:
        """The next `lobby` push and the watchers it goes to: the latest summary of every listed room changed
        since the last push (at most MAX_BATCH_ROOMS; the rest stay for the next one), the codes of rooms that
        left the listing, and the counts. None if nothing changed or nobody watches (the changes are dropped).
        """
        if not self.lobby_pending():
            return None
        codes = list(itertools.islice(self.lobby_changes, MAX_BATCH_ROOMS))
        for code in codes:
            del self.lobby_changes[code]
        self.counts_changed = False
        if not self.watchers:
            return None
        rooms: list[RoomSummary] = []
        gone: list[str] = []
        for code in codes:
            room = self.rooms.get(code)
            if room is not None and self.offered(room):
                rooms.append(self._summary(room))
            elif room is None and code in self.remote:
                rooms.append(self.remote[code])
            else:
                gone.append(code)
        return set(self.watchers), LobbyUpdate(rooms=rooms, gone=gone, counts=self.counts())


def replay_frames(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The positions of a finished game, replayed through its rules: the start, then one frame per move."""
    game = GAMES.get(record["game"])
    if game is None:
        return []
    room = Room("REPLAY", game, record["options"], {}, "", "")
    room.state = game.initial_state(record["options"])
    frames = [game.view(room.state)]
    for notation in record["moves"]:
        before = room.state
        room.replay(notation)
        frames.append(game.delta(before, room.state) or game.view(room.state))
    return frames


def _reply(client: Client, message: Message) -> Outbox:
    """An outbox holding one message for one client."""
    out = Outbox()
    out.send({client.session}, message)
    return out
