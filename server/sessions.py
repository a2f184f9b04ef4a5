"""Sessions: who is here, under which name, and how they come back (sans-I/O, part of the lobby).

A person is known by the hash of their resume token: a connection that says `hello {resume: token}` takes over
the session (and every seat) of the one that received that token, even across a restart.

A name is claimed by the first hello that uses it with a public key and a signature of the connection's nonce
(protocol/identity.py); later hellos need a signature by the same key. A claim of protocol 2 (the hash of a secret
`key`) moves to a public key once, when a hello proves both. Claims are kept in memory by their comparison key
(`text.name_key`) and stored through `NameClaimed` records, so a claim is on disk before its welcome is sent. A
hello without a public key is a guest's: it plays under a free name.

This service owns `clients`, `by_token`, `claims` and the count of sessions online; the rooms a client is in are
kept on the client (`Client.rooms`) by the lobby, which joins and leaves rooms for it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.identity import address_of, verified
from gamenight.protocol.messages import Hello
from gamenight.server.bucket import Window
from gamenight.server.games import GAMES
from gamenight.server.records import NameClaimed
from gamenight.server.room import Member, Outbox, Refusal
from gamenight.server.text import MAX_NAME, clean_name, name_key

KEY_LENGTHS = range(16, 129)  # a protocol 2 claim key's length (what a moving claim's `key` may be)
SUGGESTIONS = 999  # numbered variants tried for a free name before a random one
SESSION_GRACE_S = 60.0  # a dropped session holding no seat (a host, a spectator) may resume this long
CLAIM_WINDOW_S = 24 * 3600.0  # `claims_per_ip_day` counts the new claims of this long
RESERVED = ("admin", "administrator", "root", "moderator", "mod", "gamenight", "server", "system")
AI_LABEL = "AI level"  # the AI seats' and tournament entrants' label ("AI level 3"): no person is called that
BOT_LABEL = "bot"  # ... and a named bot's ("bot classic")
LEVEL_CHARACTERS = set("0123456789ols")  # what a level's digits may fold to in a name key ("1" is "l", "0" is "o")


class Proof(NamedTuple):
    """What a hello's signature must sign (protocol/identity.py): this server's id and the connection's nonce; and
    the addresses clients reach this server by (`--reached-as`), one of which it must be signed for (any if none)."""

    server: str
    nonce: str
    addresses: tuple[str, ...] = ()


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
    name_key: str = ""  # `text.name_key` of its name (set when it is added)

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


def _nothing(_session: str) -> None:
    """The default `on_forget`: nobody else keeps anything by session."""


class Sessions:
    """Every session of a server (connected, or offline holding a seat), its name and its claim."""

    def __init__(self, on_count: Callable[[], None], on_forget: Callable[[str], None] = _nothing) -> None:
        self.clients: dict[str, Client] = {}  # by session, connected or holding seats
        self.by_token: dict[str, Client] = {}  # by token hash
        self.claims: dict[str, NameClaimed] = {}  # name key -> its claim (loaded at start-up, then kept current)
        self.reserved: set[str] = {name_key(name) for name in RESERVED}  # name keys nobody may use (`reserve`)
        self.claims_per_ip_day = 0  # new claims from one address in CLAIM_WINDOW_S (0: no cap; LobbyLimits)
        self.claimed_from = Window(CLAIM_WINDOW_S)  # by address: when its new claims of the window were made
        self.online = 0  # sessions connected to this server
        self.on_count = on_count  # called when `online` changes (the lobby's counts change)
        self.on_forget = on_forget  # called with a session's id when it is forgotten (tournaments it watched)

    # -- arriving ------------------------------------------------------------------------------------------------------
    def open(
        self, msg: Hello, ip: str, out: Outbox, proof: Proof | None = None, now: float = 0.0
    ) -> tuple[Client, str]:
        """A new session for a hello without `resume` (from address `ip`, at `now`): its client and its resume
        token (a claim goes into `out`).

        `proof` is what the hello's signature must sign (this server's id and this connection's nonce); without
        it no claim can be proved (the hello is a guest's whatever it holds)."""
        accepts = self.accepts(msg)
        name, claimed, bot = self._identity(msg, out, proof, ip, now)
        token = secrets.token_urlsafe(24)
        token_hash = hash_token(token)
        client = Client(session_of(token_hash), name, token_hash, ip=ip, claimed=claimed, bot=bot)
        client.accepts = accepts
        self._add(client)
        self._count(+1)
        return client, token

    def resume(self, msg: Hello, ip: str) -> Client:
        """The session a hello's resume token names, connected again from `ip` (bad_token if there is none)."""
        assert msg.resume is not None
        wanted = hash_token(msg.resume)
        client = self.by_token.get(wanted)
        # The dict lookup finds a candidate; the constant-time compare is what vouches for it.
        if client is None or not hmac.compare_digest(client.token_hash, wanted):
            raise Refusal(ErrorCode.BAD_TOKEN, "that resume token is unknown here (expired, or another server)")
        accepts = self.accepts(msg)
        if not client.connected:
            self._count(+1)
        client.connected, client.ip, client.accepts, client.offline_since = True, ip, accepts, None
        return client

    @staticmethod
    def accepts(msg: Hello) -> tuple[str, ...]:
        """The games a hello's `accepts` names, checked against the games this server has (deduplicated, sorted)."""
        if len(msg.accepts) > len(GAMES) * 4:
            raise Refusal(ErrorCode.BAD_OPTIONS, "accepts lists too many games")
        unknown = [g for g in msg.accepts if g not in GAMES]
        if unknown:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"accepts names unknown game {unknown[0][:40]!r}")
        return tuple(sorted(set(msg.accepts)))

    def _identity(self, msg: Hello, out: Outbox, proof: Proof | None, ip: str, now: float) -> tuple[str, bool, bool]:
        """The name a new session plays under, whether its key holds that name's claim, and whether it is a bot.

        With a public key (its signature checked first): the claim's owner gets the claimed name (a bot's claim
        keeps it a bot), a name nobody claimed is claimed now (the record goes into `out`), a claim of protocol 2
        moves to this key if the hello also holds its old secret `key` (`old_claim` if not), and any other key is
        refused with `name_taken` and a free name to use instead. Without one: a guest, under the name asked for
        unless it is claimed, else a free numbered variant of it.
        """
        name = clean_name(msg.name)
        key = name_key(name)
        claim = self.claims.get(key)
        if msg.public_key is None:
            free = claim is None and not self.is_reserved(name) and key not in self.in_use()
            return (name if free else self.free_name(name)), False, msg.bot
        public_key = self.proved_key(msg, proof)
        if claim is None:
            self._may_claim(name, key, ip, now)
            claim = self.claims[key] = NameClaimed(key, name, "", msg.bot, public_key)
            out.records.append(claim)
            return name, True, msg.bot
        if not claim.public_key:
            claim = self._move(claim, msg, public_key, out)
        elif not hmac.compare_digest(claim.public_key, public_key):
            raise self._taken(claim, name)
        if msg.bot and not claim.bot:  # once a bot, always a bot: the claim remembers it
            claim = self.claims[key] = replace(claim, bot=True)
            out.records.append(claim)
        return claim.name, True, claim.bot

    @staticmethod
    def proved_key(msg: Hello, proof: Proof | None) -> str:
        """The hello's public key, once its signature is checked against `proof` (bad_signature if it fails)."""
        assert msg.public_key is not None
        if proof is None or msg.signature is None:
            raise Refusal(ErrorCode.BAD_SIGNATURE, "a public key needs the signature of this connection's hello_nonce")
        if proof.addresses and address_of(msg.url) not in proof.addresses:
            raise Refusal(
                ErrorCode.BAD_SIGNATURE,
                f"the hello is for {msg.url[:200]!r}; this server is {', '.join(proof.addresses)}",
            )
        if not verified(msg.public_key, msg.signature, proof.server, msg.url, proof.nonce):
            raise Refusal(ErrorCode.BAD_SIGNATURE, "the signature does not sign this connection's hello_nonce")
        return msg.public_key.lower()

    def _move(self, claim: NameClaimed, msg: Hello, public_key: str, out: Outbox) -> NameClaimed:
        """A claim of protocol 2 moves to `public_key` if the hello holds the secret it was made with (once: the
        old key's hash is dropped, so that secret claims nothing any more)."""
        if msg.key is None:
            raise Refusal(
                ErrorCode.OLD_CLAIM,
                f"the name {claim.name!r} was claimed by an older gamenight: send its key once with your public key",
                suggestion=self.free_name(claim.name),
            )
        if len(msg.key) not in KEY_LENGTHS or not hmac.compare_digest(claim.key_hash, hash_token(msg.key)):
            raise self._taken(claim, claim.name)
        moved = self.claims[name_key(claim.name)] = replace(claim, key_hash="", public_key=public_key)
        out.records.append(moved)
        return moved

    def _taken(self, claim: NameClaimed, name: str) -> Refusal:
        """The refusal of a claimed name to another key, with a free name to use instead."""
        suggestion = self.free_name(name)
        return Refusal(
            ErrorCode.NAME_TAKEN,
            f"the name {claim.name!r} is claimed with another key; {suggestion!r} is free",
            suggestion=suggestion,
        )

    def _may_claim(self, name: str, key: str, ip: str, now: float) -> None:
        """Refuse a new claim of a reserved name or of a name someone shows now (`name_taken`, with a free name), or
        one past its address's allowance (`too_many`); count it otherwise."""
        why = "is reserved" if self.is_reserved(name) else "is in use now" if key in self.in_use() else None
        if why is not None:
            suggestion = self.free_name(name)
            raise Refusal(
                ErrorCode.NAME_TAKEN, f"the name {name!r} {why}; {suggestion!r} is free", suggestion=suggestion
            )
        if not self.claims_per_ip_day:
            return
        made = self.claimed_from.count(ip, now)
        if made >= self.claims_per_ip_day:
            raise Refusal(
                ErrorCode.TOO_MANY,
                f"your address has claimed {made} new names today; play under one of them, or as a guest",
            )
        self.claimed_from.add(ip, now)

    def reserve(self, names: list[str]) -> None:
        """Names nobody may claim or play under (the server operator's, the named bots' labels), look-alikes too."""
        self.reserved.update(name_key(name) for name in names)

    def is_reserved(self, name: str) -> bool:
        """True for a reserved name or a look-alike of one, and for the AI's and bots' labels ("AI level 4",
        "bot classic": any name whose first word folds to "bot" and that goes on)."""
        key, ai = name_key(name), name_key(AI_LABEL)
        if key in self.reserved or (key.startswith(ai) and set(key[len(ai) :]) <= LEVEL_CHARACTERS):
            return True
        words = name.split()
        return len(words) > 1 and name_key(words[0]) == name_key(BOT_LABEL)

    def free_name(self, name: str) -> str:
        """A name like `name` that nobody has claimed: the name with the first free number after it ("player" and a
        number for a reserved name, whose numbered variants would be reserved too)."""
        if self.is_reserved(name):
            name = "player"
        used = self.in_use()
        for number in range(2, SUGGESTIONS + 2):
            suffix = str(number)
            candidate = clean_name(name[: MAX_NAME - len(suffix)] + suffix)
            if (key := name_key(candidate)) not in self.claims and key not in used:
                return candidate
        while True:  # a thousand numbered variants taken: a random one (bounded in practice by the claims)
            candidate = clean_name(name[: MAX_NAME - 7] + secrets.token_hex(3) + "7")
            if (key := name_key(candidate)) not in self.claims and key not in used:
                return candidate

    def in_use(self) -> set[str]:
        """The name keys sessions show now: connected, or holding a seat (claimed or not)."""
        return {c.name_key for c in self.clients.values() if c.connected or c.rooms}

    # -- claims --------------------------------------------------------------------------------------------------------
    def load_claims(self, claims: list[NameClaimed]) -> None:
        """Take claimed names stored by a previous run (at start-up, oldest first) or by another node of a cluster.

        They are kept by today's key of their name: a stored key made by an older folding (before the confusables,
        say) may differ. Two stored claims that fold together now keep the older one (the first loaded)."""
        for claim in claims:
            key = name_key(claim.name)
            held = self.claims.get(key)
            if held is None or held.name_key == claim.name_key:
                self.claims[key] = claim

    def claims_expired(self, stored_keys: list[str]) -> None:
        """Claims the store deleted as never used (by their stored keys): their names are free again."""
        gone = set(stored_keys)
        for key, claim in list(self.claims.items()):
            if claim.name_key in gone:
                del self.claims[key]

    def claim_lost(self, claim: NameClaimed) -> None:
        """A claim's record could not be stored: forget it (nobody was told it was made)."""
        key = name_key(claim.name)
        if self.claims.get(key) is claim:
            del self.claims[key]

    # -- leaving -------------------------------------------------------------------------------------------------------
    def went_offline(self, session: str, now: float) -> Client | None:
        """A session's connection closed: it is offline from `now` (forgotten by `sweep` unless it holds a seat)."""
        client = self.clients.get(session)
        if client is None:
            return None
        if client.connected and not client.remote:
            self._count(-1)
        client.connected = client.remote = False
        client.offline_since = now
        return client

    def left_room(self, session: str | None, code: str) -> None:
        """The session is no longer in room `code` (it closed, or moved away); an offline one in no room is gone."""
        client = self.clients.get(session or "")
        if client is not None:
            client.rooms.discard(code)
            if not client.connected and not client.rooms:
                self.forget(client)

    def forget(self, client: Client) -> None:
        """Drop a person who is gone and holds nothing."""
        self.clients.pop(client.session, None)
        self.by_token.pop(client.token_hash, None)
        self.on_forget(client.session)

    def sweep(self, now: float) -> None:
        """Forget sessions offline for SESSION_GRACE_S that hold no seat (their token resumed nothing in time), and
        the addresses with no new claim in the claims' window."""
        self.claimed_from.sweep(now)
        for client in list(self.clients.values()):
            gone = client.offline_since
            if not client.connected and not client.rooms and gone is not None and now - gone >= SESSION_GRACE_S:
                self.forget(client)

    # -- looking people up ---------------------------------------------------------------------------------------------
    def connected(self, sessions: set[str]) -> set[str]:
        """Those of `sessions` connected now (a tournament's host may be gone while its invitations stand)."""
        return {s for s in sessions if (c := self.clients.get(s)) is not None and c.connected}

    def targets(self, to: str, sender: Client) -> tuple[str, set[str]]:
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

    def held_for(self, token_hash: str, name: str, bot: bool) -> Member:
        """The member a stored token resumes: the session restored already, or a new one waiting for its owner.

        A session that held a seat as a bot is a bot again; its name counts as claimed if the claim of that
        name has exactly that spelling (the resume token, not the key, proves who it is).
        """
        client = self.by_token.get(token_hash)
        if client is None:
            client = Client(session_of(token_hash), name or "player", token_hash, connected=False)
            claim = self.claims.get(name_key(client.name))
            client.claimed = claim is not None and claim.name == client.name
            self._add(client)
        client.bot = client.bot or bot
        return client.member

    # -- a cluster of nodes (server/cluster) ---------------------------------------------------------------------------
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
            self._add(client)
            return client
        if client.connected and not client.remote:
            self._count(-1)  # it was connected here; now it is at another node
        client.connected, client.remote, client.ip = True, True, ip
        client.bot = client.bot or bot
        if accepts is not None:
            client.accepts = tuple(a for a in accepts if a in GAMES)
        return client

    def adopt(self, token_hash: str, name: str, claimed: bool, bot: bool) -> None:
        """A resume token another node of the cluster gave out: known here from now on (the resume then goes on
        as for a token of this node; the seats it holds are on the nodes that own their rooms)."""
        if token_hash not in self.by_token:
            self._add(Client(session_of(token_hash), name, token_hash, connected=False, claimed=claimed, bot=bot))

    def _add(self, client: Client) -> None:
        """Keep a new session, by its id and by its token's hash."""
        client.name_key = name_key(client.name)
        self.clients[client.session] = client
        self.by_token[client.token_hash] = client

    def _count(self, change: int) -> None:
        """A session connected (+1) or disconnected (-1)."""
        self.online += change
        self.on_count()
