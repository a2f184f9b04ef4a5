"""Moderation for the person who runs the server (issue 37; sans-I/O, part of the lobby).

Admins are claimed names the operator lists with `gamenight-server admin add NAME` (the store's `admins` table):
a session is an admin while its name is claimed by its key and listed. The server loads the list at start-up and
reads it again every few seconds (server/app.py), so `admin add` / `remove` reach a running server; the person's
`welcome.admin` says so at their next hello.

An admin's `moderate` request kicks a player (their connections are closed, they may come back), mutes a name's
chat, bans a name or an address for a time (refused at hello with `banned` and when it ends; their connections
are closed), lifts a mute or ban, closes a room, cancels a tournament or voids a player's rated games in a time
window (the store undoes them: server/sqlstore.py `_void`), always with a reason. Each action is a
`Moderated` record in the outbox: the audit log's entry (and the ban or mute it sets) is stored before any frame
of the decision is written, so the admin's `moderated` reply never tells of an action that is not on disk.

Admins cannot act on each other: a kick, mute, ban or void naming an admin, or an address ban covering an admin
connected from it, is refused (`not_allowed`); the operator removes an admin with `gamenight-server admin remove`
first (a rogue admin is the operator's business, not another admin's). Closing a room and cancelling a tournament
are about the room or tournament, whoever is in it, and stay allowed.

Bans and mutes end at a wall-clock time, so they outlive a restart; this service reads that clock only through the
`clock` it is given (tests pass their own). An action reaches the sessions connected to this server; in a cluster
the node publishes each stored action and every other node carries it out on its own connections (`carry_out`).
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable, Iterable
from typing import Any

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import Chat, Error, Hello, Moderate, Moderated
from gamenight.server.directory import RoomDirectory
from gamenight.server.outbox import Disconnect, Outbox, Refusal
from gamenight.server.records import VOID, Sanction
from gamenight.server.records import Moderated as ModeratedRecord
from gamenight.server.sessions import Client, Sessions, hash_token
from gamenight.server.text import MAX_NAME, clean_name, clean_text, name_key

MAX_REASON = 200  # characters of an action's reason kept in the audit log
MAX_DURATION_S = 10 * 366 * 24 * 3600  # the longest mute or ban: ten years
NAME, ADDRESS, MUTE = "name", "address", "mute"  # the kinds of sanction (the store's `sanctions.kind`)

OPERATOR_ONLY = "only the operator acts on admins (gamenight-server admin remove NAME, then act)"

ChatHandler = Callable[[Client, Chat, float], Outbox]
CloseRoom = Callable[[str], Outbox]
CancelTournament = Callable[[str, int | None, str, float], Outbox]


class Moderation:
    """The admins, the bans and mutes running, and the `moderate` request's actions."""

    def __init__(
        self,
        sessions: Sessions,
        directory: RoomDirectory,
        close_room: CloseRoom,
        cancel_tournament: CancelTournament,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.sessions = sessions
        self.directory = directory
        self.close_room = close_room  # the lobby's `close`
        self.cancel_tournament = cancel_tournament  # the tournament host's `call_off`
        self.clock = clock  # wall-clock seconds (bans and mutes outlive restarts)
        self.admins: dict[str, str] = {}  # name key -> name as the operator typed it
        self.now = 0.0  # the lobby's (monotonic) time of the request being carried out
        self.sanctions: dict[tuple[str, str], float] = {}  # (kind, name key or address) -> until (wall clock)
        self.actions: dict[str, Callable[[Client, Moderate, str], Outbox]] = {  # each with the admin, request, reason
            "kick": self._kick,
            "mute": lambda admin, msg, reason: self._sanction(admin, msg, reason, MUTE, True),
            "unmute": lambda admin, msg, reason: self._sanction(admin, msg, reason, MUTE, False),
            "ban": lambda admin, msg, reason: self._sanction(admin, msg, reason, NAME, True),
            "unban": lambda admin, msg, reason: self._sanction(admin, msg, reason, NAME, False),
            "ban_address": lambda admin, msg, reason: self._sanction(admin, msg, reason, ADDRESS, True),
            "unban_address": lambda admin, msg, reason: self._sanction(admin, msg, reason, ADDRESS, False),
            "close_room": self._close_room,
            "cancel_tournament": self._cancel_tournament,
            VOID: self._void,
        }

    # -- what the store holds ------------------------------------------------------------------------------------------
    def load_admins(self, admins: Iterable[tuple[str, str]]) -> None:
        """Take the operator's list of admins (name key, name), replacing the one held."""
        self.admins = dict(admins)

    def load_sanctions(self, sanctions: Iterable[Sanction]) -> None:
        """Take the bans and mutes stored by a previous run (at start-up)."""
        for sanction in sanctions:
            self.sanctions[(sanction.kind, sanction.key)] = sanction.until

    def lost(self, record: ModeratedRecord) -> None:
        """An action's record could not be stored: the mute or ban it set is lifted again (the admin is told
        nothing was done; a lifted one stays lifted until set again)."""
        held = (record.kind or "", record.key or "")
        if record.until is not None and self.sanctions.get(held) == record.until:
            del self.sanctions[held]

    def is_admin(self, client: Client) -> bool:
        """True for a session whose name is claimed by its key and listed as an admin."""
        return client.claimed and name_key(client.name) in self.admins

    # -- checks on other requests --------------------------------------------------------------------------------------
    def admit(self, msg: Hello, ip: str) -> None:
        """Refuse a hello (`banned`, with when it ends) from a banned address, or for a banned name (the one asked
        for, or the resumed session's)."""
        name = msg.name
        if msg.resume is not None and (resumed := self.sessions.by_token.get(hash_token(msg.resume))) is not None:
            name = resumed.name
        self._refuse(ADDRESS, ip, ErrorCode.BANNED, "your address is banned from this server")
        self._refuse(NAME, name_key(clean_name(name)), ErrorCode.BANNED, "that name is banned from this server")

    def unless_muted(self, chat: ChatHandler) -> ChatHandler:
        """The chat handler, refusing a muted name's lines (`muted`, with when it ends)."""

        def guarded(client: Client, msg: Chat, now: float) -> Outbox:
            self._refuse(MUTE, name_key(client.name), ErrorCode.MUTED, "an admin muted your chat")
            return chat(client, msg, now)

        return guarded

    def _refuse(self, kind: str, key: str, code: ErrorCode, text: str) -> None:
        """Raise `code` if the sanction `kind` on `key` still runs; forget it once it has ended."""
        until = self.sanctions.get((kind, key))
        if until is None:
            return
        if until <= self.clock():
            del self.sanctions[(kind, key)]
            return
        raise Refusal(code, f"{text} until {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(until))}", until=until)

    # -- the moderate request ------------------------------------------------------------------------------------------
    def moderate(self, client: Client, msg: Moderate, now: float) -> Outbox:
        """Carry out an admin's action: not_allowed for anyone else, bad_options without a reason or for an unknown
        action; the reply `moderated` goes out once the audit log's entry is stored."""
        if not self.is_admin(client):
            raise Refusal(ErrorCode.NOT_ALLOWED, "only the server's admins can moderate")
        action = self.actions.get(msg.action)
        if action is None:
            known = ", ".join(self.actions)
            raise Refusal(ErrorCode.BAD_OPTIONS, f"unknown action {msg.action[:40]!r}; one of {known}")
        reason = clean_text(msg.reason)[:MAX_REASON].strip()
        if not reason:
            raise Refusal(ErrorCode.BAD_OPTIONS, "say why (a reason is kept in the audit log)")
        self.now = now
        return action(client, msg, reason)

    def _kick(self, admin: Client, msg: Moderate, reason: str) -> Outbox:
        """Close a player's connections (their seats wait for them as after any drop)."""
        self._not_an_admin(msg.target)
        key = name_key(clean_name(msg.target)) if msg.target.strip() else ""
        everywhere = self._covered(NAME, key, anywhere=True)
        if not everywhere:
            raise Refusal(ErrorCode.UNKNOWN_PLAYER, f"nobody is online as {msg.target[:MAX_NAME]!r}")
        out = self._logged(admin, msg, reason, clean_name(msg.target), {"sessions": len(everywhere)})
        self._close(self._covered(NAME, key), ErrorCode.KICKED, _kicked_text(admin.name, reason), out)
        return out

    def _sanction(self, admin: Client, msg: Moderate, reason: str, kind: str, on: bool) -> Outbox:
        """Set (`on`) or lift a mute or ban on a name or an address; a ban closes the connections it covers."""
        key, shown = self._sanction_key(kind, msg.target)
        until: float | None = None
        if on:
            if kind == ADDRESS:
                self._no_admin_from(key)
            else:
                self._not_an_admin(msg.target)
            duration = msg.duration_s
            if duration is None or not 0 < duration <= MAX_DURATION_S:
                raise Refusal(ErrorCode.BAD_OPTIONS, f"duration_s is 1 to {MAX_DURATION_S} seconds")
            until = self.clock() + duration
            self.sanctions[(kind, key)] = until
        elif self.sanctions.pop((kind, key), None) is None:
            raise Refusal(ErrorCode.NOT_ALLOWED, f"{shown!r} is not under that {kind} sanction")
        out = self._logged(admin, msg, reason, shown, {"duration_s": msg.duration_s} if on else {}, kind, key, until)
        if on and kind != MUTE:
            self._close(self._covered(kind, key), ErrorCode.BANNED, _banned_text(admin.name, reason), out, until)
        return out

    def _close_room(self, admin: Client, msg: Moderate, reason: str) -> Outbox:
        """Close a room (its members see it closed; its game is not finished, so nothing is rated)."""
        room = self.directory.get(msg.room or "")
        out = self._logged(admin, msg, reason, room.code, {"game": room.game.name})
        return out.extend(self.close_room(room.code))

    def _cancel_tournament(self, admin: Client, msg: Moderate, reason: str) -> Outbox:
        """Call a tournament off as its host could (`TournamentHost.call_off`)."""
        tournament = msg.tournament or ""
        cancelled = self.cancel_tournament(tournament, None, admin.session, self.now)
        return self._logged(admin, msg, reason, tournament, {}).extend(cancelled)

    def _void(self, admin: Client, msg: Moderate, reason: str) -> Outbox:
        """Void a player's rated games that finished in [since, until]: the store undoes them in the transaction
        of the audit record (server/sqlstore.py `_void`), and the server reloads the ratings once it is stored."""
        if not msg.target.strip():
            raise Refusal(ErrorCode.BAD_OPTIONS, "name the player (target)")
        since, until = msg.since, msg.until
        if since is None or until is None or not since <= until:
            raise Refusal(ErrorCode.BAD_OPTIONS, "void needs since <= until (wall-clock seconds)")
        name = clean_name(msg.target)
        self._not_an_admin(name)
        return self._logged(admin, msg, reason, name, {"player": name_key(name), "since": since, "until": until})

    # -- another node's action (a cluster) --------------------------------------------------------------------------
    def carry_out(self, record: ModeratedRecord) -> Outbox:
        """An action another node's admin took, stored there: the mute or ban it set (or lifted) holds here too, and
        the sessions connected here that a kick or ban covers are told why and closed. Nothing is stored again."""
        out = Outbox()
        if record.kind is not None and record.key is not None:
            if record.until is None:
                self.sanctions.pop((record.kind, record.key), None)
            else:
                self.sanctions[(record.kind, record.key)] = record.until
        if record.action == "kick":
            covered = self._covered(NAME, name_key(record.target))
            self._close(covered, ErrorCode.KICKED, _kicked_text(record.admin, record.reason), out)
        elif record.until is not None and record.kind in (NAME, ADDRESS) and record.key is not None:
            covered = self._covered(record.kind, record.key)
            self._close(covered, ErrorCode.BANNED, _banned_text(record.admin, record.reason), out, record.until)
        return out

    # -- helpers -------------------------------------------------------------------------------------------------------
    def _logged(
        self,
        admin: Client,
        msg: Moderate,
        reason: str,
        target: str,
        details: dict[str, Any],
        kind: str | None = None,
        key: str | None = None,
        until: float | None = None,
    ) -> Outbox:
        """The action's audit record, and the admin's reply (sent once the record is stored)."""
        out = Outbox()
        record = ModeratedRecord(self.clock(), admin.name, msg.action, target, reason, details, kind, key, until)
        out.records.append(record)
        out.send({admin.session}, Moderated(action=msg.action, target=target, until=until, id=msg.id))
        return out

    def _sanction_key(self, kind: str, target: str) -> tuple[str, str]:
        """The key a sanction is kept under (a name key, or an address as Python writes it) and its target shown."""
        if kind != ADDRESS:
            name = clean_name(target)
            if not target.strip():
                raise Refusal(ErrorCode.BAD_OPTIONS, "name the player (target)")
            return name_key(name), name
        try:
            address = str(ipaddress.ip_address(target.strip()))
        except ValueError:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"{target[:60]!r} is not an IP address") from None
        return address, address

    def _not_an_admin(self, target: str) -> None:
        """Refuse an action on an admin's name: only the operator acts on admins."""
        name = clean_name(target)
        if name_key(name) in self.admins:
            raise Refusal(ErrorCode.NOT_ALLOWED, f"{name!r} is an admin: {OPERATOR_ONLY}")

    def _no_admin_from(self, address: str) -> None:
        """Refuse an address ban that would cover an admin connected from it."""
        if any(self.is_admin(c) for c in self._connected(anywhere=True) if c.ip == address):
            raise Refusal(ErrorCode.NOT_ALLOWED, f"an admin is connected from {address}: ban the name instead")

    def _covered(self, kind: str, key: str, anywhere: bool = False) -> set[str]:
        """The sessions connected here (`anywhere`: or, in a cluster, to another node) that a ban or kick on a name
        key or an address covers (claimed or guest alike, by the name's comparison key; each node closes its own)."""
        if kind == ADDRESS:
            return {c.session for c in self._connected(anywhere) if c.ip == key}
        return {c.session for c in self._connected(anywhere) if key and c.name_key == key}

    def _connected(self, anywhere: bool = False) -> list[Client]:
        """The sessions connected to this server (`anywhere`: and those a cluster's other nodes hold)."""
        return [c for c in self.sessions.clients.values() if c.connected and (anywhere or not c.remote)]

    @staticmethod
    def _close(sessions: set[str], code: ErrorCode, text: str, out: Outbox, until: float | None = None) -> None:
        """Tell each session why and close its connection (after the decision's records are stored)."""
        out.send(sessions, Error(code=code, message=text, until=until))
        for session in sorted(sessions):
            out.effects.append(Disconnect(session, code.value))


def _kicked_text(admin: str, reason: str) -> str:
    """What a kicked player is told."""
    return f"{admin} closed your connection: {reason}"


def _banned_text(admin: str, reason: str) -> str:
    """What a banned player is told (the error also carries when the ban ends)."""
    return f"{admin} banned you: {reason}"
