"""Tournaments on the server: entrants, the games the server starts for them, standings, pushes and storage.

Sans-I/O like the lobby it belongs to: every method takes the time and returns an `Outbox`. The lobby hands over
`create_tournament` / `join_tournament` / `leave_tournament` / `get_tournament` / `list_tournaments`, calls
`sweep` every second (start times, arena pairing and its end) and `finished` for every game that ends in a
tournament room; scheduling and scoring are `server/tournament.py`'s.

How a tournament runs:

- Entrants are claimed players (by name), the server's AI levels ("AI level 3") and named bots ("bot classic");
  programs connected as bots are claimed players. Only claimed players may host or join.
- Nobody is entered by someone else: every person the host names, but the host, is *invited* (a challenge of the
  lobby's with `tournament` set: `challenged` to them, `challenge_sent` to the host) and enters by accepting it
  (or by joining). The tournament does not start before every invitation is answered; one declined, withdrawn,
  left unanswered (`invitation_s`) or whose every connection closed drops that person, and a tournament left with
  fewer than two entrants by that is cancelled at its start. AIs need no consent; the host consents by creating.
- The server opens a public room for each game (host: the tournament, so anyone may watch), seats the entrants
  and the game starts at once. A person is seated when they are connected and not playing another game; one who
  is not waits (their next game starts when they are back and free). A person sitting in a finished tournament
  room is moved out of it (`left`) before the `joined` of their next game, so the client goes straight on.
- Round robin: the schedule (`tournament.round_robin`, or `groups` for Tron with 3-4 riders) is played in order,
  each game as soon as all its players are free; it ends when every game is played. A player who leaves loses
  every game of theirs not yet started by forfeit (recorded, not rated); so does one who stays disconnected longer
  than the tournament's `grace_s` (room option, 60 s by default) while it runs, or the round robin would wait for
  them forever. Tournament rooms default to `on_disconnect: forfeit`, so a game in progress is not held either.
- Arena: from its start for `duration_s`, free entrants are paired at once (`tournament.arena_pairs`); games
  started before the end still count; it ends when the last one finishes.
- Every change is stored (`TournamentSaved`) in the transaction of the change: the header (everything but the
  games; an arena's records without whom they met, which the games say) and the games changed since, each a row of
  its own, so a game's end costs the same at the 10,000th game as at the first. It is loaded back at start-up
  before the rooms are restored, so a restart resumes it: finished games and standings as they were, games in
  progress in their restored rooms, the schedule going on.
- Pushes: the whole tournament (`tournament`) to whoever does not hold it yet (a reply, a new watcher, an entrant
  whose connection came back), then its changes (`tournament_update`: the games changed, the standings' rows
  changed) to those who do.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import (
    CancelTournament,
    Challenged,
    ChallengeGone,
    ChallengeSent,
    CreateTournament,
    Joined,
    JoinTournament,
    LeaveTournament,
    Left,
    TournamentInfo,
    Tournaments,
    TournamentUpdate,
)
from gamenight.protocol.vocab import ChallengeEnd, Result, Role, RoomStatus, TournamentOffer, TournamentStatus
from gamenight.server.challenges import Challenge
from gamenight.server.directory import validated
from gamenight.server.outbox import AiSpec, Outbox, Refusal, Send
from gamenight.server.rated import finishing_places
from gamenight.server.records import TournamentSaved
from gamenight.server.text import clean_name, name_key
from gamenight.server.tournament import (
    ArenaRecord,
    Played,
    Tally,
    arena_pairs,
    arena_points,
    groups,
    round_robin,
    standings,
)

if TYPE_CHECKING:
    from gamenight.server.lobby import Lobby
    from gamenight.server.room import Room
    from gamenight.server.sessions import Client

KINDS = ("round_robin", "arena")
MAX_ENTRANTS = 32
MAX_ROUNDS = 4
MAX_DURATION_S = 6 * 3600
MIN_DURATION_S = 10
AI_ARENA_S = 1800  # an arena with no person or bot entrant lasts at most this long (it keeps an AI worker busy) ...
AI_ARENA_GAMES = 200  # ... and plays at most this many games
MAX_START_IN_S = 24 * 3600
LISTED = 50
HOST_PREFIX = "tournament:"  # the host session of a tournament's rooms (no client has it)
TRANSITIONS: dict[TournamentStatus, frozenset[TournamentStatus]] = {
    TournamentStatus.WAITING: frozenset({TournamentStatus.RUNNING, TournamentStatus.CANCELLED}),
    TournamentStatus.RUNNING: frozenset({TournamentStatus.FINISHED, TournamentStatus.CANCELLED}),
    TournamentStatus.FINISHED: frozenset(),
    TournamentStatus.CANCELLED: frozenset(),
}
"""The statuses a tournament may move to from each (`Tournament.move_to` refuses any other move: a bug)."""
OVER = frozenset(status for status, after in TRANSITIONS.items() if not after)  # statuses that never change again


@dataclass(slots=True)
class Game:
    """One game of a tournament: its entrants by seat, its room once started, each seat's place once over."""

    players: tuple[str, ...]
    room: str | None = None
    places: tuple[int, ...] | None = None
    forfeit: bool = False  # decided without being played (a player left)

    def plain(self) -> dict[str, Any]:
        """As stored and sent."""
        return {
            "players": list(self.players),
            "room": self.room,
            "places": list(self.places) if self.places is not None else None,
            "forfeit": self.forfeit,
        }


@dataclass(slots=True)
class Tournament:
    """One tournament's state (everything the server keeps of it)."""

    id: str
    game: str
    kind: str
    host: str  # the host's name
    options: dict[str, Any]  # the rooms' options, validated, `rated` included
    seats: int
    entries: list[str] = field(default_factory=list)
    ai: dict[str, dict[str, Any]] = field(default_factory=dict)  # entrant -> {"level": n} or {"bot": name}
    left: list[str] = field(default_factory=list)
    status: TournamentStatus = TournamentStatus.WAITING
    starts_at: float = 0.0  # wall-clock seconds
    ends_at: float | None = None  # arena
    rounds: int = 1
    duration_s: int = 0
    games: list[Game] = field(default_factory=list)
    arena: dict[str, ArenaRecord] = field(default_factory=dict)
    created: float = 0.0  # wall-clock seconds (a cluster's listing orders every node's tournaments by it)
    invited: dict[str, str] = field(default_factory=dict)  # person -> the id of their invitation, not yet answered
    dropped: list[str] = field(default_factory=list)  # people invited who declined or did not answer in time
    unsaved: set[int] = field(default_factory=set)  # the games (indexes) changed since the tournament was stored
    tally: Tally = field(default_factory=Tally)  # the finished games, summed for the standings
    # The games (indexes) not over (`places` None), in schedule order (a dict keeps its keys in insertion order, and
    # `add` only appends): what the sweep looks at, so it costs the games in play or to play, not every game played.
    # `add` and `score` keep it; whatever replaces `games` calls `reindex`.
    unfinished: dict[int, None] = field(default_factory=dict)

    def add(self, game: Game) -> None:
        """A game to play, after the others."""
        index = len(self.games)
        self.unsaved.add(index)
        self.games.append(game)
        if game.places is None:
            self.unfinished[index] = None

    def score(self, index: int, places: tuple[int, ...], forfeit: bool = False) -> None:
        """Game `index` is over with these places (`forfeit`: decided without being played)."""
        game = self.games[index]
        game.places, game.forfeit = places, forfeit
        self.unfinished.pop(index, None)
        self.tally.add(Played(game.players, places))
        self.touch(index)

    def reindex(self) -> None:
        """The games were replaced: find those not over again."""
        self.unfinished = {index: None for index, game in enumerate(self.games) if game.places is None}

    def touch(self, index: int) -> None:
        """Game `index` changed (started, ended, forfeited, lost its room): stored with the next change."""
        self.unsaved.add(index)

    def move_to(self, status: TournamentStatus) -> None:
        """Move to `status`, as the transition table allows (any other move is a bug: ValueError)."""
        if status not in TRANSITIONS[self.status]:
            raise ValueError(f"tournament {self.id}: no move from {self.status} to {status}")
        self.status = status

    def plain(self) -> dict[str, Any]:
        """The whole state (as stored before games had rows of their own: the header and the games together)."""
        return {
            **self.plain_header(),
            "games": [g.plain() for g in self.games],
            "arena": {
                p: {"points": r.points, "streak": r.streak, "opponents": r.opponents, "results": r.results}
                for p, r in self.arena.items()
            },
        }

    def header(self) -> dict[str, Any]:
        """The stored form but for the games (each stored as a row of its own, `TournamentSaved.games`) and what they
        give (an arena's opponents and results): its size does not grow with the games played."""
        plain = self.plain_header()
        plain["game_count"] = len(self.games)
        plain["arena"] = {p: {"points": r.points, "streak": r.streak} for p, r in self.arena.items()}
        return plain

    def plain_header(self) -> dict[str, Any]:
        """Everything but the games and the arena's records."""
        return {
            "id": self.id,
            "game": self.game,
            "kind": self.kind,
            "host": self.host,
            "options": self.options,
            "seats": self.seats,
            "entries": self.entries,
            "ai": self.ai,
            "left": self.left,
            "invited": self.invited,
            "dropped": self.dropped,
            "status": self.status,
            "starts_at": self.starts_at,
            "ends_at": self.ends_at,
            "rounds": self.rounds,
            "duration_s": self.duration_s,
            "created": self.created,
        }

    @classmethod
    def from_plain(cls, raw: dict[str, Any]) -> Tournament:
        """Read a stored tournament back, a header with its games put back (`game_count` in it) or a whole state
        stored before (KeyError / TypeError / ValueError if it is broken)."""
        t = cls(
            str(raw["id"]),
            str(raw["game"]),
            str(raw["kind"]),
            str(raw["host"]),
            dict(raw["options"]),
            int(raw["seats"]),
            [str(e) for e in raw["entries"]],
            {str(k): dict(v) for k, v in raw["ai"].items()},
            [str(e) for e in raw["left"]],
            TournamentStatus(str(raw["status"])),
            float(raw["starts_at"]),
            None if raw["ends_at"] is None else float(raw["ends_at"]),
            int(raw["rounds"]),
            int(raw["duration_s"]),
        )
        t.games = [
            Game(
                tuple(g["players"]),
                g["room"],
                None if g["places"] is None else tuple(int(p) for p in g["places"]),
                bool(g["forfeit"]),
            )
            for g in raw["games"]
        ]
        t.reindex()
        t.arena = {
            str(p): ArenaRecord(
                int(r["points"]), int(r["streak"]), list(r.get("opponents", ())), list(r.get("results", ()))
            )
            for p, r in raw["arena"].items()
        }
        t.tally = Tally.of(t.played())
        if "game_count" in raw:
            if int(raw["game_count"]) != len(t.games):
                raise ValueError(f"tournament {t.id}: {len(t.games)} of its {raw['game_count']} games stored")
            if t.kind == "arena":
                t.met()
        else:
            t.unsaved = set(range(len(t.games)))  # stored whole: its games get their rows with its next change
        t.created = float(raw.get("created", t.starts_at))  # stored before it was kept: its start will do
        t.invited = {str(k): str(v) for k, v in raw.get("invited", {}).items()}  # (stored before invitations: none)
        t.dropped = [str(e) for e in raw.get("dropped", [])]
        return t

    def met(self) -> None:
        """An arena's opponents and results, from its games: a person or AI plays one game at a time, so their
        games in schedule order are their games in the order they ended (`finished` scored them so)."""
        for record in self.arena.values():
            record.opponents, record.results = [], []
        for game in self.games:
            if game.places is None or game.forfeit:
                continue
            played = Played(game.players, game.places)
            for player in game.players:
                record = self.arena.setdefault(player, ArenaRecord())
                record.opponents.extend(p for p in game.players if p != player)
                record.results.append(played.result(player))

    def played(self) -> list[Played]:
        """The finished games as the scoring functions take them."""
        return [Played(g.players, g.places) for g in self.games if g.places is not None]

    def running(self) -> list[Game]:
        """Games started and not over."""
        return [game for index in self.unfinished if (game := self.games[index]).room is not None]

    def waiting(self) -> list[int]:
        """The games (indexes) not started, in schedule order."""
        return [index for index in self.unfinished if self.games[index].room is None]

    def busy(self) -> set[str]:
        """The entrants playing one of its games now."""
        return {player for game in self.running() for player in game.players}


class TournamentHost:
    """Every tournament of one server (part of its lobby)."""

    def __init__(self, lobby: Lobby, clock: Callable[[], float] = time.time) -> None:
        self.lobby = lobby
        self.clock = clock
        self.tournaments: dict[str, Tournament] = {}
        self.by_room: dict[str, tuple[str, int]] = {}  # room code -> (tournament, game index)
        self.watchers: dict[str, set[str]] = {}  # tournament -> sessions that asked for it
        # Pushes after the first view are changes (`tournament_update`): the sessions that hold the tournament as
        # last pushed (sent it whole since, and connected at every push after), and the standings' rows last pushed.
        self.holding: dict[str, set[str]] = {}
        self.shown: dict[str, dict[str, dict[str, Any]]] = {}
        self.away: dict[tuple[str, str], float] = {}  # (tournament, person) -> since when they are not connected
        # The address each tournament created in this run was created from (`tournaments_per_ip`): kept in memory
        # only, so tournaments restored after a restart count for their host's name but no address.
        self.host_ips: dict[str, str] = {}
        # In a cluster (server/cluster/tours.py): the other nodes' tournaments as their listing summaries, the ids of
        # this node's tournaments changed since they were last published (None: not in a cluster), and whether a
        # game's room is gone for good (a lone server: not in the lobby; a cluster: its room may be on its way here).
        self.remote: dict[str, dict[str, Any]] = {}
        self.changed: set[str] | None = None
        self.room_gone: Callable[[str], bool] = lambda code: code not in self.lobby.directory.rooms
        self.taken: Callable[[str], bool] = lambda tournament: False  # an id in use on another node

    # -- start-up ---------------------------------------------------------------------------------------------
    def load(self, stored: list[dict[str, Any]]) -> list[str]:
        """Take the tournaments a previous run stored (before the rooms are restored); the ids that could not be."""
        broken = []
        for raw in stored:
            try:
                t = Tournament.from_plain(raw)
            except (KeyError, TypeError, ValueError):
                broken.append(str(raw.get("id", "?")))
                continue
            self._take(t)
        return broken

    def _take(self, t: Tournament) -> None:
        """Run a stored tournament here (its games in progress are found by their rooms)."""
        self.tournaments[t.id] = t
        for index in t.unfinished:
            room = t.games[index].room
            if room is not None:
                self.by_room[room] = (t.id, index)

    # -- a cluster of nodes (server/cluster/tours.py) ---------------------------------------------------------
    def adopt(self, raw: dict[str, Any]) -> Tournament | None:
        """Run a tournament another node ran (taken over from the store); None if its stored state is broken."""
        try:
            t = Tournament.from_plain(raw)
        except (KeyError, TypeError, ValueError):
            return None
        self.drop(t.id)
        self._take(t)
        self.watchers.setdefault(t.id, set())
        return t

    def drop(self, tournament: str) -> list[str]:
        """Another node runs this tournament now: forget it here (nothing written); returns its games' rooms here."""
        t = self.tournaments.pop(tournament, None)
        self.watchers.pop(tournament, None)
        self.holding.pop(tournament, None)
        self.shown.pop(tournament, None)
        self.host_ips.pop(tournament, None)
        self.away = {key: since for key, since in self.away.items() if key[0] != tournament}
        rooms = [code for code, (tid, _) in self.by_room.items() if tid == tournament]
        for code in rooms:
            del self.by_room[code]
        if self.changed is not None:
            self.changed.discard(tournament)
        return rooms if t is not None else []

    def summary(self, t: Tournament) -> dict[str, Any]:
        """What every node lists of a tournament (plain data), and the rooms of its games in progress."""
        return {
            "game": t.game,
            "kind": t.kind,
            "status": t.status,
            "host": t.host,
            "entries": [e for e in t.entries if e not in t.left],
            "starts_at": t.starts_at,
            "created": t.created,
            "rooms": [g.room for g in t.running()],
        }

    # -- requests ---------------------------------------------------------------------------------------------
    def _may_host(self, client: Client) -> None:
        """Refuse a new tournament past the open ones its host's name (`tournaments_per_player`) or address
        (`tournaments_per_ip`, however many names it uses) may run at once."""
        limits, open_ = self.lobby.limits, [t for t in self.tournaments.values() if t.status not in OVER]
        mine = sum(1 for t in open_ if t.host == client.name)
        if limits.tournaments_per_player and mine >= limits.tournaments_per_player:
            raise Refusal(ErrorCode.TOO_MANY, f"you run {mine} tournaments; let one finish first")
        here = sum(1 for t in open_ if self.host_ips.get(t.id) == client.ip)
        if limits.tournaments_per_ip and here >= limits.tournaments_per_ip:
            raise Refusal(ErrorCode.TOO_MANY, f"your address runs {here} tournaments; let one finish first")

    def create(self, client: Client, msg: CreateTournament, now: float) -> Outbox:
        """Open a tournament hosted by `client` (claimed players only), with its first entrants."""
        self._require_claimed(client, "host a tournament")
        if msg.kind not in KINDS:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"kind must be one of {', '.join(KINDS)}")
        self._may_host(client)
        game, game_options, room_options = validated(
            msg.game, {"on_disconnect": "forfeit", **msg.options, "rated": msg.rated}
        )
        if not 1 <= msg.rounds <= MAX_ROUNDS:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"rounds must be 1..{MAX_ROUNDS}")
        if msg.kind == "arena" and not MIN_DURATION_S <= msg.duration_s <= MAX_DURATION_S:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"an arena's duration_s must be {MIN_DURATION_S}..{MAX_DURATION_S}")
        if not 0 <= msg.start_in_s <= MAX_START_IN_S:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"start_in_s must be 0..{MAX_START_IN_S}")
        if len(msg.players) > MAX_ENTRANTS:
            raise Refusal(ErrorCode.TOO_MANY, f"at most {MAX_ENTRANTS} players")
        seats = game.seat_count(game_options)
        if msg.kind == "arena" and seats != 2:
            raise Refusal(ErrorCode.BAD_OPTIONS, "an arena pairs two players a game: leave the seat count at 2")
        t = Tournament(
            self._new_id(),
            game.name,
            msg.kind,
            client.name,
            {**game_options, **room_options},
            seats,
            rounds=msg.rounds,
            duration_s=msg.duration_s,
        )
        invitations: list[tuple[str, set[str]]] = []  # (person, their sessions): everyone checked before any is kept
        for name in msg.players:
            person = self._enter(t, name)
            if person == client.name:
                t.entries.append(person)  # the host entering themselves consents by creating
            elif person is not None:
                to, targets = self.lobby.challenges.invitees(client, person, t.game)
                t.invited[to] = self.lobby.challenges.new_id()
                invitations.append((to, targets))
        if t.kind == "arena" and self._ai_only(t) and t.duration_s > AI_ARENA_S:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"an arena of AIs alone lasts at most {AI_ARENA_S} s")
        t.created = self.clock()
        t.starts_at = t.created + msg.start_in_s
        self.tournaments[t.id] = t
        self.host_ips[t.id] = client.ip
        self.watchers[t.id] = set()
        self._offer(t, client, invitations, now)
        out = self.sweep(now)  # one starting now starts before the reply, which shows it running
        self.watchers[t.id].add(client.session)
        out.extend(self._changed(t, msg.id, client.session))
        return out.extend(self._invitations(t, client))

    def _offer(self, t: Tournament, host: Client, invitations: list[tuple[str, set[str]]], now: float) -> None:
        """Keep an invitation (a challenge of the lobby's, answered by accept / decline) for each person invited."""

        expires = now + self.lobby.limits.invitation_s
        for to, targets in invitations:
            challenge_id = t.invited[to]
            self.lobby.challenges.pending[challenge_id] = Challenge(
                challenge_id, host.session, targets, to, t.game, dict(t.options), 0, expires, tournament=t.id
            )

    def _invitations(self, t: Tournament, host: Client) -> Outbox:
        """Tell each person invited (`challenged` with the tournament) and the host (`challenge_sent`)."""
        out = Outbox()
        expires_ms = round(self.lobby.limits.invitation_s * 1000)
        offer = TournamentOffer(
            tournament=t.id,
            kind=t.kind,
            entries=tuple(e for e in t.entries if e not in t.left),
            invited=tuple(t.invited),
            rounds=t.rounds,
            duration_s=t.duration_s,
            starts_in_ms=max(0, int((t.starts_at - self.clock()) * 1000)),
        )
        sender = self.lobby.presence.info(host.name)
        for to, challenge_id in t.invited.items():
            challenge = self.lobby.challenges.pending[challenge_id]
            out.send({host.session}, ChallengeSent(challenge_id, to, expires_ms, tournament=t.id))
            out.send(
                challenge.targets,
                Challenged(challenge_id, sender, t.game, dict(t.options), 0, expires_ms, tournament=offer),
            )
        return out

    def accept(self, client: Client, challenge: Challenge, request_id: int | None, now: float) -> Outbox:
        """An invitation accepted (or answered by joining): the person is entered, the reply is the tournament, and
        the host and the person's other connections get `challenge_gone` accepted."""
        t = self.tournaments.get(challenge.tournament or "")
        if t is None or t.invited.get(challenge.to) != challenge.id:  # a cluster's other node runs it now
            raise Refusal(ErrorCode.UNKNOWN_CHALLENGE, "that tournament is not run here any more")
        del self.lobby.challenges.pending[challenge.id]
        del t.invited[challenge.to]
        t.entries.append(challenge.to)
        out = Outbox()
        gone = ChallengeGone(challenge=challenge.id, why=ChallengeEnd.ACCEPTED, tournament=t.id)
        out.send(self.lobby.sessions.connected({challenge.sender} | challenge.targets) - {client.session}, gone)
        out.extend(self.sweep(now))  # the last answer may start it
        self.watchers.setdefault(t.id, set()).add(client.session)
        return out.extend(self._changed(t, request_id, client.session))

    def invitation_gone(self, challenge: Challenge, now: float) -> Outbox:
        """An invitation ended unaccepted (declined, withdrawn, expired, its target gone): that person is dropped;
        the tournament starts without them once every answer is in (cancelled if fewer than two are left)."""
        t = self.tournaments.get(challenge.tournament or "")
        if t is None or t.invited.get(challenge.to) != challenge.id:
            return Outbox()
        del t.invited[challenge.to]
        t.dropped.append(challenge.to)
        return self._changed(t).extend(self.sweep(now))

    def join(self, client: Client, msg: JoinTournament, now: float) -> Outbox:
        """The client enters the tournament (answering the invitation it has, if any)."""
        t = self._tournament(msg.tournament)
        self._require_claimed(client, "play in a tournament")
        if t.status in OVER or (t.kind == "round_robin" and t.status != TournamentStatus.WAITING):
            raise Refusal(ErrorCode.NOT_ALLOWED, "this tournament takes no more players")
        if client.name in t.entries and client.name not in t.left:
            raise Refusal(ErrorCode.NOT_ALLOWED, "you are in this tournament already")
        invitation = self.lobby.challenges.pending.get(t.invited.get(client.name, ""))
        if invitation is not None:
            return self.accept(client, invitation, msg.id, now)
        if client.name in t.left:
            t.left.remove(client.name)
        else:
            t.entries.append(self._person(t, client.name))
        if client.name in t.dropped:
            t.dropped.remove(client.name)
        out = self.sweep(now)
        self.watchers.setdefault(t.id, set()).add(client.session)
        return out.extend(self._changed(t, msg.id, client.session))

    def leave(self, client: Client, msg: LeaveTournament, now: float) -> Outbox:
        """The client leaves: in a round robin, their games not started are lost by forfeit."""
        t = self._tournament(msg.tournament)
        if client.name not in t.entries or client.name in t.left:
            raise Refusal(ErrorCode.NOT_ALLOWED, "you are not in this tournament")
        self._withdraw(t, client.name)
        out = self.sweep(now)
        return out.extend(self._changed(t, msg.id, client.session))

    def cancel(self, client: Client, msg: CancelTournament, now: float) -> Outbox:
        """Its host calls the tournament off: waiting invitations end, no game starts any more, and the games being
        played go on as games but count for nothing (`finished` ignores them)."""
        t = self._tournament(msg.tournament)
        if not client.claimed or client.name != t.host:
            raise Refusal(ErrorCode.NOT_ALLOWED, "only its host can cancel a tournament")
        return self.call_off(msg.tournament, msg.id, client.session, now)

    def call_off(self, tournament: str, request_id: int | None, session: str, now: float) -> Outbox:
        """Cancel a tournament (for its host, or an admin: server/moderation.py); not_allowed if it is over."""
        t = self._tournament(tournament)
        if t.status in OVER:
            raise Refusal(ErrorCode.NOT_ALLOWED, f"the tournament is {t.status} already")
        t.move_to(TournamentStatus.CANCELLED)
        out = Outbox()
        for challenge_id in list(t.invited.values()):
            challenge = self.lobby.challenges.pending.get(challenge_id)
            if challenge is not None:
                self.lobby.challenges.withdraw(challenge, out, now)  # its person moves to `dropped` (invitation_gone)
        t.dropped.extend(t.invited)
        t.invited.clear()
        for code in [code for code, (tid, _) in self.by_room.items() if tid == t.id]:
            del self.by_room[code]
        return out.extend(self._changed(t, request_id, session))

    def _ai_only(self, t: Tournament) -> bool:
        """True when every entrant (and everyone invited) is one of the server's AIs: nobody plays, all watch."""
        return not t.invited and all(name in t.ai for name in t.entries)

    @staticmethod
    def _withdraw(t: Tournament, name: str) -> None:
        """`name` is out: in a round robin, their games not started are lost by forfeit."""
        t.left.append(name)
        for index in t.waiting():
            game = t.games[index]
            if name in game.players:
                t.score(index, tuple(2 if p == name else 1 for p in game.players), forfeit=True)

    def _absent(self, t: Tournament, now: float) -> None:
        """A round robin's people disconnected longer than its grace period are withdrawn (their games forfeited)."""
        grace = float(t.options.get("grace_s", 60))
        for name in t.entries:
            if name in t.ai or name in t.left:
                continue
            key = (t.id, name)
            if self._client(name) is not None:
                self.away.pop(key, None)
            elif now - self.away.setdefault(key, now) >= grace:
                self.away.pop(key, None)
                self._withdraw(t, name)

    def get(self, client: Client, tournament: str, request_id: int | None) -> Outbox:
        """One tournament, and its pushes from now on."""
        t = self._tournament(tournament)
        self.watchers.setdefault(t.id, set()).add(client.session)
        self.holding.setdefault(t.id, set()).add(client.session)
        out = Outbox()
        out.send({client.session}, self.info(t, request_id))
        return out

    def listing(self, request_id: int | None) -> Tournaments:
        """The latest tournaments, newest first (in a cluster: every node's, by when they were created)."""
        now = self.clock()
        if self.remote:
            every = {tid: s for tid, s in self.remote.items() if tid not in self.tournaments}
            every.update((t.id, self.summary(t)) for t in self.tournaments.values())
            newest = sorted(every.items(), key=lambda item: (-float(item[1].get("created", 0.0)), item[0]))[:LISTED]
        else:
            newest = [(t.id, self.summary(t)) for t in list(self.tournaments.values())[-LISTED:][::-1]]
        return Tournaments(
            tournaments=[
                {
                    "tournament": tid,
                    "game": s.get("game"),
                    "kind": s.get("kind"),
                    "status": s.get("status"),
                    "host": s.get("host"),
                    "entries": s.get("entries", []),
                    "starts_in_ms": max(0, int((float(s.get("starts_at", 0.0)) - now) * 1000)),
                }
                for tid, s in newest
            ],
            id=request_id,
        )

    # -- the game loop ----------------------------------------------------------------------------------------------
    def sweep(self, now: float) -> Outbox:
        """Start tournaments whose time came, start the games whose players are free, end arenas."""
        out = Outbox()
        wall = self.clock()
        for t in list(self.tournaments.values()):
            if t.status in OVER:
                continue
            before = t.status, len(t.games), len(t.left), len(t.invited)
            if t.status == TournamentStatus.WAITING:
                self._unanswerable(t)
                if wall >= t.starts_at and not t.invited:
                    self._start(t, wall)
            if t.status == TournamentStatus.RUNNING:
                self._lost_rooms(t)
                if t.kind == "round_robin":
                    self._absent(t, now)
                if t.kind == "arena" and t.ends_at is not None and wall < t.ends_at:
                    self._pair(t)
                out.extend(self._launch(t, now))
                if self._over(t, wall):
                    t.move_to(TournamentStatus.FINISHED)
            if t.unsaved or (t.status, len(t.games), len(t.left), len(t.invited)) != before:
                out.extend(self._changed(t))
        return out

    def finished(self, room: Room, result: Result, now: float) -> Outbox:
        """A game in a tournament room ended: score it, then start what can start."""
        found = self.by_room.pop(room.code, None)
        if found is None:
            return Outbox()
        t = self.tournaments.get(found[0])
        if t is None:
            return Outbox()
        places = tuple(finishing_places(room, result))
        t.score(found[1], places)
        game = t.games[found[1]]
        if t.kind == "arena":
            for player in game.players:
                record = t.arena.setdefault(player, ArenaRecord())
                others = [p for p in game.players if p != player]
                record.opponents.extend(others)
                arena_points(record, Played(game.players, places).result(player))
        out = self._changed(t)
        return out.extend(self.sweep(now))

    def _lost_rooms(self, t: Tournament) -> None:
        """Games whose room is gone unfinished (not restorable, taken offline): a round robin plays them again,
        an arena forgets them."""
        for index in t.unfinished:
            game = t.games[index]
            if game.room is not None and self.room_gone(game.room):
                self.by_room.pop(game.room, None)
                game.room = None
                t.touch(index)
        waiting = t.waiting() if t.kind == "arena" else []
        if waiting:
            first = waiting[0]
            t.games = [g for g in t.games if g.room is not None or g.places is not None]
            t.reindex()
            t.unsaved = {i for i in t.unsaved if i < first} | set(range(first, len(t.games)))  # the rest moved up
            self.by_room = {code: (tid, i) for code, (tid, i) in self.by_room.items() if tid != t.id}
            for index in t.unfinished:
                room = t.games[index].room
                if room is not None:
                    self.by_room[room] = (t.id, index)

    def _unanswerable(self, t: Tournament) -> None:
        """Invitations this server no longer holds (it restarted, or took the tournament over from another node of a
        cluster: nobody can answer them) are dropped as if their targets had left."""
        for person, challenge_id in list(t.invited.items()):
            if challenge_id not in self.lobby.challenges.pending:
                del t.invited[person]
                t.dropped.append(person)

    def _start(self, t: Tournament, wall: float) -> None:
        """The tournament begins: a round robin's whole schedule, or the arena's clock; cancelled instead when the
        people who did not accept their invitations leave fewer than two entrants."""
        players = [e for e in t.entries if e not in t.left]
        if t.dropped and len(players) < 2:
            t.move_to(TournamentStatus.CANCELLED)
            return
        t.move_to(TournamentStatus.RUNNING)
        if t.kind == "arena":
            t.ends_at = wall + t.duration_s
            for p in players:
                t.arena.setdefault(p, ArenaRecord())
            return
        rounds = groups(players, t.seats) if t.seats > 2 else round_robin(players)
        for _ in range(t.rounds):
            for pairing in rounds:
                for group in pairing:
                    t.add(Game(tuple(group)))

    def _pair(self, t: Tournament) -> None:
        """Arena: pair every free entrant (greedy, closest in standing and rating, never the last opponent)."""
        if self._ai_only(t) and len(t.games) >= AI_ARENA_GAMES:
            return
        busy = t.busy()
        free = [p for p in t.entries if p not in t.left and self._free(t, p, busy)]
        ratings = {p: self._rating(t, p) for p in free}
        for one, two in arena_pairs(free, t.arena, ratings):
            t.add(Game((one, two)))

    def _launch(self, t: Tournament, now: float) -> Outbox:
        """Open a room for each game not started whose players are all free (in schedule order)."""
        out = Outbox()
        busy = t.busy()
        for index in t.waiting():
            game = t.games[index]
            if all(self._free(t, p, busy) for p in game.players):
                out.extend(self._open(t, index, now))
                busy.update(game.players)
        return out

    def _over(self, t: Tournament, wall: float) -> bool:
        """True once nothing is left to play."""
        if t.running():
            return False
        if t.kind == "arena":
            capped = self._ai_only(t) and len(t.games) >= AI_ARENA_GAMES
            return capped or (t.ends_at is not None and wall >= t.ends_at)
        return not t.unfinished

    def _free(self, t: Tournament, player: str, busy: set[str]) -> bool:
        """True if the entrant can sit down now: not `busy` (playing a game of this tournament: `Tournament.busy`,
        worked out once per pass by the caller), and (a person) connected and playing no other game."""
        if player in busy:
            return False
        if player in t.ai:
            return True
        client = self._client(player)
        if client is None:
            return False
        lobby = self.lobby
        return not any(
            (room := lobby.directory.rooms.get(code)) is not None
            and room.status in (RoomStatus.PLAYING, RoomStatus.PAUSED, RoomStatus.WAITING)
            and room.seat_of(client.session) is not None
            for code in client.rooms
        )

    def _client(self, name: str) -> Client | None:
        """The connected session playing under the claimed name `name`, if any."""
        for client in self.lobby.sessions.clients.values():
            if client.connected and client.claimed and client.name == name:
                return client
        return None

    def _open(self, t: Tournament, index: int, now: float) -> Outbox:
        """Open the room of game `index`, seat its players (the game starts with the last one)."""
        from gamenight.server.room import Room  # the room imports nothing of ours; import it where it is used

        lobby = self.lobby
        game = t.games[index]
        rules = validated(t.game, t.options)
        room = Room(lobby.directory.new_code(), rules[0], rules[1], rules[2], HOST_PREFIX + t.id, t.host)
        room.empty_since = room.now = now
        # Rated through the lobby's book; its tournament known (its games are not aborted; an early end is unrated);
        # played: held seats keep the long grace, as in a game people played.
        lobby.directory.add(room, ("", ""), played=True)
        game.room = room.code
        t.touch(index)
        self.by_room[room.code] = (t.id, index)
        out = Outbox(changed=True)
        out.records.append(room.saved())
        for seat, player in enumerate(game.players):
            spec = t.ai.get(player)
            if spec is not None:
                out.extend(room.add_ai(room.host, seat, AiSpec(level=spec.get("level"), bot=spec.get("bot"))))
                continue
            client = self._client(player)
            assert client is not None  # _free said so
            for code in list(client.rooms):  # out of finished rooms, so the client goes straight to this game
                old = lobby.directory.rooms.get(code)
                if old is not None and old.status == RoomStatus.FINISHED and old.seat_of(client.session) is not None:
                    out.extend(lobby.after(old, old.leave(client.session), now))
                    client.rooms.discard(code)
                    out.send({client.session}, Left(room=code))
            out.extend(self._marked(room.join(client.member, Role.PLAYER, seat, None), t.id))
            client.rooms.add(room.code)
        return lobby.after(room, out, now)

    @staticmethod
    def _marked(out: Outbox, tournament: str) -> Outbox:
        """A seat's `joined` says which tournament gave it (so a client knows it is no resume, and goes straight in)."""
        out.sends = [
            Send(s.to, replace(s.message, tournament=tournament)) if isinstance(s.message, Joined) else s
            for s in out.sends
        ]
        return out

    # -- entrants -----------------------------------------------------------------------------------------------------
    def _enter(self, t: Tournament, raw: str) -> str | None:
        """Enter an AI level or a named bot of the game (None); for a claimed name, the person's name as claimed,
        checked but not entered (the caller enters or invites them)."""
        name = clean_name(raw)
        spec = self._ai(t, name)
        if spec is None:
            return self._person(t, name)
        label = spec.label
        if label in t.entries:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"{label} is entered already")
        t.entries.append(label)
        t.ai[label] = {"level": spec.level} if spec.level is not None else {"bot": spec.bot}
        return None

    def _person(self, t: Tournament, name: str) -> str:
        """The claimed name `name` stands for, if that person may be entered: neither entered nor invited yet, and
        the tournament not full."""
        claim = self.lobby.sessions.claims.get(name_key(name))
        if claim is None:
            raise Refusal(
                ErrorCode.UNKNOWN_PLAYER, f"{name!r} is neither a claimed player nor an AI (AI level 1-5, bot NAME)"
            )
        if claim.name in t.entries or claim.name in t.invited:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"{claim.name} is entered already")
        if len(t.entries) + len(t.invited) >= MAX_ENTRANTS:
            raise Refusal(ErrorCode.TOO_MANY, f"at most {MAX_ENTRANTS} players")
        return claim.name

    def _ai(self, t: Tournament, name: str) -> AiSpec | None:
        """The AI an entrant's name means ("AI level 3", "bot classic"), or None for a person."""
        if name.startswith("AI level "):
            level = name.removeprefix("AI level ").strip()
            if not level.isdigit() or int(level) not in range(1, 6):
                raise Refusal(ErrorCode.BAD_OPTIONS, "AI level must be 1 (easy) to 5 (max)")
            return AiSpec(level=int(level))
        if name.startswith("bot "):
            bot = name.removeprefix("bot ").strip()
            if t.game not in self.lobby.ai_bots.get(bot, ()):
                raise Refusal(ErrorCode.BAD_OPTIONS, f"no bot {bot[:40]!r} plays {t.game}")
            return AiSpec(bot=bot)
        return None

    def _rating(self, t: Tournament, player: str) -> float:
        """The entrant's rating in the tournament's game (for arena pairing and tie-breaks)."""
        from gamenight.server.rated import ai_key, pool_of

        key = ai_key(player) or name_key(player)
        standing = self.lobby.ratings.standings.get((key, pool_of(t.game, t.seats)))
        return standing.rating.rating if standing is not None else 1500.0

    # -- replies and pushes -------------------------------------------------------------------------------------------
    def info(self, t: Tournament, request_id: int | None = None) -> TournamentInfo:
        """The `tournament` message: the whole tournament."""
        wall = self.clock()
        return TournamentInfo(
            tournament=t.id,
            game=t.game,
            kind=t.kind,
            status=t.status,
            host=t.host,
            rated=bool(t.options.get("rated")),
            entries=[e for e in t.entries if e not in t.left],
            standings=self._standings(t),
            games=[g.plain() for g in t.games],
            options=t.options,
            starts_in_ms=max(0, int((t.starts_at - wall) * 1000)),
            ends_in_ms=None if t.ends_at is None else max(0, int((t.ends_at - wall) * 1000)),
            invited=list(t.invited),
            dropped=list(t.dropped),
            id=request_id,
        )

    def _standings(self, t: Tournament) -> list[dict[str, Any]]:
        """The standings table's rows, best first."""
        ratings = {p: self._rating(t, p) for p in t.entries}
        arena = t.arena if t.kind == "arena" else None
        return [
            {
                "rank": s.rank,
                "player": s.player,
                "points": s.points,
                "tie_break": round(s.tie_break, 2),
                "games": s.games,
                "wins": s.wins,
                "draws": s.draws,
                "losses": s.losses,
                "left": s.player in t.left,
                "streak": t.arena[s.player].on_fire if s.player in t.arena else False,
            }
            for s in standings(t.entries, t.tally, arena=arena, ratings=ratings)
        ]

    def _update(self, t: Tournament, games: tuple[tuple[int, dict[str, Any]], ...]) -> TournamentUpdate:
        """The `tournament_update` message: the games changed, the standings' rows changed since the last push."""
        wall = self.clock()
        rows = self._standings(t)
        shown = self.shown.get(t.id, {})
        self.shown[t.id] = {row["player"]: row for row in rows}
        return TournamentUpdate(
            tournament=t.id,
            status=t.status,
            game_count=len(t.games),
            games=[{"index": index, **game} for index, game in games],
            standings=[row for row in rows if shown.get(row["player"]) != row],
            order=[row["player"] for row in rows],
            entries=[e for e in t.entries if e not in t.left],
            starts_in_ms=max(0, int((t.starts_at - wall) * 1000)),
            ends_in_ms=None if t.ends_at is None else max(0, int((t.ends_at - wall) * 1000)),
            invited=list(t.invited),
            dropped=list(t.dropped),
        )

    def _changed(self, t: Tournament, request_id: int | None = None, requester: str | None = None) -> Outbox:
        """Store the change (the header and the games changed) and tell the entrants and watchers: the whole
        tournament to whoever does not hold it yet (the requester: the reply with its id), `tournament_update` to
        the others, so a game's end costs the same at the 10,000th game as at the first."""
        out = Outbox()
        games = tuple((i, t.games[i].plain()) for i in sorted(t.unsaved) if i < len(t.games))
        out.records.append(TournamentSaved(t.id, t.header(), t.status in OVER, games, len(t.games)))
        t.unsaved.clear()
        if self.changed is not None:
            self.changed.add(t.id)
        sessions = set(self.watchers.get(t.id, set()))
        for entrant in t.entries:
            client = self._client(entrant)
            if client is not None:
                sessions.add(client.session)
        sessions = self.lobby.sessions.connected(sessions)
        holding = self.holding.get(t.id, set()) & sessions
        update = self._update(t, games)
        fresh = sessions - holding
        if requester is not None:
            holding.discard(requester)
            fresh.discard(requester)
            out.send({requester}, self.info(t, request_id))
        if fresh:
            out.send(fresh, self.info(t))
        out.send(holding, update)
        self.holding[t.id] = sessions | ({requester} if requester is not None else set())
        return out

    def _tournament(self, tournament: str) -> Tournament:
        """The tournament with this id, or `unknown_game`."""
        t = self.tournaments.get(tournament.strip().lower())
        if t is None:
            raise Refusal(ErrorCode.UNKNOWN_GAME, f"there is no tournament {tournament[:16]!r}")
        return t

    @staticmethod
    def _require_claimed(client: Client, what: str) -> None:
        """Tournaments are for claimed players."""
        if not client.claimed:
            raise Refusal(ErrorCode.NOT_ALLOWED, f"only claimed players may {what}: connect with a key")

    def _new_id(self) -> str:
        """A fresh tournament id."""
        while True:
            tid = "t" + secrets.token_hex(4)
            if tid not in self.tournaments and not self.taken(tid):
                return tid

    def forget_session(self, session: str) -> None:
        """A session is gone: it watches nothing any more."""
        for sessions in (*self.watchers.values(), *self.holding.values()):
            sessions.discard(session)
