"""Admission: the caps that keep one person, or one address, from taking the whole server (sans-I/O).

Every check here either passes or raises a `Refusal` with a stable code (`too_many`, `rate_limited`,
`not_allowed`, `bad_options`) before the request changes anything. The per-address allowances are token buckets
(server/bucket.py) on the lobby's time; `sweep` forgets those that are full again, so an address costs memory only
while it is being limited. docs/security.md has the arithmetic of each cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import AddAi
from gamenight.protocol.vocab import RoomStatus
from gamenight.server.bucket import Bucket
from gamenight.server.room import AiSpec, Refusal, Room

if TYPE_CHECKING:
    from gamenight.server.challenges import Challenge
    from gamenight.server.directory import RoomDirectory
    from gamenight.server.sessions import Client, Sessions

CHAT_BURST_S = 2.0  # a room's chat allowance holds this many seconds of its rate
AI_LEVELS = range(1, 6)


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
    claims_per_ip_day: int = 20  # new names claimed from one address in 24 hours (on this server, since its start)
    rated_pair_games_per_day: int = 10  # rated games a day between the same two players that change ratings
    own_bot_by_address: int = 1  # 1: a person's rated game against a bot from their own address rates nobody
    challenge_s: float = 60.0  # a challenge nobody answers is gone after this long
    invitation_s: float = 60.0  # ... and a tournament's invitation (the tournament waits for the answers to start)


class Allowances:
    """One bucket per key (an address, a room): made full on first use, forgotten by `sweep` once full again."""

    def __init__(self) -> None:
        self.buckets: dict[Any, Bucket] = {}

    def spend(self, key: Any, per_s: float, capacity: float, now: float, why: str) -> None:
        """Take one from `key`'s bucket (`per_s` 0: no limit), or refuse `rate_limited` saying when to retry."""
        if not per_s:
            return
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = Bucket(per_s, capacity, now)
        if not bucket.take(now):
            raise Refusal(ErrorCode.RATE_LIMITED, why, retry_after_ms=bucket.retry_after_ms())

    def sweep(self, now: float) -> None:
        """Forget the buckets that are full again (forgetting them changes nothing)."""
        for key, bucket in list(self.buckets.items()):
            if bucket.full(now):
                del self.buckets[key]


class Admission:
    """The server's caps on rooms, AI games, chat, code guesses and challenges."""

    def __init__(self, limits: LobbyLimits, sessions: Sessions, directory: RoomDirectory) -> None:
        self.limits = limits
        self.sessions = sessions
        self.directory = directory
        self.guesses = Allowances()  # by address: joins by a private or unknown code
        self.challenge_pace = Allowances()  # by address: challenges and invites sent
        self.chat = Allowances()  # by (room, from players?): the room's chat

    def sweep(self, now: float) -> None:
        """Forget the allowances that are full again (a closed room's chat allowance among them)."""
        for allowances in (self.guesses, self.challenge_pace, self.chat):
            allowances.sweep(now)

    # -- rooms ---------------------------------------------------------------------------------------------------------
    def may_host(self, client: Client, private: bool) -> None:
        """Refuse a new room past the caps: per person, per address, and public rooms in all."""
        limits, directory = self.limits, self.directory
        hosts = [*directory.hosts.values(), *directory.remote_hosts.values()]  # (in a cluster, every node's rooms)
        mine = sum(1 for token_hash, _ in hosts if token_hash == client.token_hash)
        if limits.rooms_per_player and mine >= limits.rooms_per_player:
            raise Refusal(ErrorCode.TOO_MANY, f"you host {mine} open rooms; close one first")
        if limits.rooms_per_ip and client.ip:
            here = sum(1 for _, ip in hosts if ip == client.ip)
            if here >= limits.rooms_per_ip:
                raise Refusal(ErrorCode.TOO_MANY, f"your address hosts {here} open rooms; close one first")
        if not private and limits.public_rooms:
            public = sum(1 for room in directory.rooms.values() if not room.private) + len(directory.remote)
            if public >= limits.public_rooms:
                raise Refusal(ErrorCode.TOO_MANY, "the server has all the public rooms it lists; open a private one")

    @staticmethod
    def may_rate(client: Client, room_options: dict[str, Any]) -> None:
        """Only a claimed player may open a rated room (guests have no lasting name to rate)."""
        if room_options.get("rated") and not client.claimed:
            raise Refusal(
                ErrorCode.NOT_ALLOWED,
                "rated games are for claimed players: connect with a key to claim your name (guests play unrated)",
            )

    def may_spectate(self, room: Room, client: Client) -> None:
        """Refuse one more spectator of a room that has its `spectators_per_room`."""
        cap = self.limits.spectators_per_room
        if cap and len(room.spectators) >= cap and not room.is_member(client.session):
            raise Refusal(ErrorCode.TOO_MANY, f"room {room.code} has its {cap} spectators already")

    def guess(self, client: Client, code: str, now: float) -> None:
        """Joins by a code that is not a listed public room spend the address's guess allowance, hit or miss.

        When it is spent the join is refused with `rate_limited` before the code is looked up, so guessing
        codes gives no answer faster than `code_guesses_per_min` (docs/security.md has the arithmetic).
        """
        room = self.directory.rooms.get(code.strip().upper())
        if room is not None and (not room.private or self.directory.inside(room, client)):
            return
        per_s, burst = self.limits.code_guesses_per_min / 60, self.limits.code_guess_burst
        why = "too many room codes tried from your address; wait a moment"
        self.guesses.spend(client.ip, per_s, burst, now, why)

    def chat_allowed(self, room: Room, client: Client, now: float) -> None:
        """Each room relays a bounded number of lines per second: players share one allowance, spectators another."""
        player = room.seat_of(client.session) is not None
        rate = self.limits.player_chat_per_s if player else self.limits.spectator_chat_per_s
        why = f"room {room.code} is chatting too fast; wait a moment"
        self.chat.spend((room.code, player), rate, rate * CHAT_BURST_S, now, why)

    # -- AI seats ------------------------------------------------------------------------------------------------------
    def may_add_ai(self, room: Room, client: Client) -> None:
        """Refuse the AI that would make one more all-AI room for an address that runs its share of them."""
        cap = self.limits.ai_rooms_per_ip
        if not cap or sum(1 for s in room.seats if s.free) != 1 or any(s.holder is not None for s in room.seats):
            return
        hosts = self.directory.hosts
        host_ip = hosts.get(room.code, ("", client.ip))[1] or client.ip
        running = sum(
            1
            for code, other in self.directory.rooms.items()
            if other is not room
            and other.status != RoomStatus.FINISHED
            and all(s.ai is not None for s in other.seats)
            and hosts.get(code, ("", ""))[1] == host_ip
        )
        if running >= cap:
            raise Refusal(ErrorCode.TOO_MANY, f"your address runs {running} all-AI games; let one finish first")

    @staticmethod
    def ai_spec(msg: AddAi, room: Room, ai_bots: dict[str, list[str]]) -> AiSpec:
        """Check an add_ai request's level or bot name (the bot must play this room's game)."""
        if (msg.level is None) == (msg.bot is None):
            raise Refusal(ErrorCode.BAD_OPTIONS, "give exactly one of 'level' (1-5) or 'bot'")
        if msg.level is not None and msg.level not in AI_LEVELS:
            raise Refusal(ErrorCode.BAD_OPTIONS, "AI level must be 1 (easy) to 5 (max)")
        if msg.bot is not None and room.game.name not in ai_bots.get(msg.bot, ()):
            names = ", ".join(sorted(b for b, g in ai_bots.items() if room.game.name in g)) or "none"
            raise Refusal(ErrorCode.BAD_OPTIONS, f"no bot {msg.bot[:40]!r} plays {room.game.name}; bots: {names}")
        return AiSpec(level=msg.level, bot=msg.bot)

    # -- challenges ----------------------------------------------------------------------------------------------------
    def pending_caps(self, client: Client, to: str, bot: bool, pending: list[Challenge]) -> None:
        """Refuse one more waiting challenge from this session, from its address, to `to` from its address (unless
        `to` is a bot, which answers by program and may take several games from one person), or to `to` from
        anyone (`too_many`; tournament invitations are bounded by the tournament caps instead)."""
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
        clients = self.sessions.clients
        return [ch for ch in challenges if (sender := clients.get(ch.sender)) is not None and sender.ip == ip]

    def pace_challenges(self, client: Client, now: float) -> None:
        """Refuse a challenge or invite past its address's allowance (`challenges_per_min`), saying when to retry."""
        per_s, burst = self.limits.challenges_per_min / 60, self.limits.challenge_burst
        why = "too many challenges sent from your address; wait a moment"
        self.challenge_pace.spend(client.ip, per_s, burst, now, why)
