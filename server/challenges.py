"""Challenges, invites and invitations: offers of a game to a named person, waiting for their answer (sans-I/O).

A challenge makes a new room when accepted; an invite offers a seat of an existing room; an invitation (made by
server/tournament_host.py) enters the target into a tournament. Nothing reaches the target unless every check
passes (server/admission.py has the caps); an offer ends when it is answered, withdrawn, when either side leaves,
or when it expires.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import (
    Accept,
    Challenged,
    ChallengeGone,
    ChallengeRequest,
    ChallengeSent,
    Decline,
    Error,
    Invite,
)
from gamenight.protocol.vocab import ChallengeEnd, Role, RoomStatus
from gamenight.server.admission import Admission
from gamenight.server.directory import RoomDirectory, validated
from gamenight.server.presence import Presence
from gamenight.server.room import Outbox, Refusal, Room
from gamenight.server.sessions import Client, Sessions
from gamenight.server.text import clean_text

MAX_REASON = 200  # characters of a decline's reason

RoomOpener = Callable[[Client, str, dict[str, Any], bool, float], tuple[Room, Outbox]]


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


def _no_tournaments(_challenge: Challenge, _now: float) -> Outbox:
    """The default `invitation_gone`: a server without tournaments has no invitations."""
    return Outbox()


class Challenges:
    """The pending challenges, invites and invitations of a server, by id."""

    def __init__(
        self,
        sessions: Sessions,
        directory: RoomDirectory,
        admission: Admission,
        presence: Presence,
        open_room: RoomOpener,
    ) -> None:
        self.sessions = sessions
        self.directory = directory
        self.admission = admission
        self.presence = presence
        self.open_room = open_room  # makes an accepted challenge's room (with the caps of create_room)
        self.pending: dict[str, Challenge] = {}  # by id
        self.tag = ""  # in a cluster: the prefix of this node's challenge ids (an answer finds its node)
        self.invitation_gone: Callable[[Challenge, float], Outbox] = _no_tournaments  # the tournaments' hook

    def new_id(self) -> str:
        """A fresh challenge id (in a cluster, tagged with this node)."""
        return self.tag + secrets.token_hex(6)

    # -- offering ------------------------------------------------------------------------------------------------------
    def challenge(self, client: Client, msg: ChallengeRequest, now: float) -> Outbox:
        """Offer a named online player a new game; nothing reaches the target unless every check passes."""
        game, game_options, room_options = validated(msg.game, msg.options)
        seats = game.seat_count(game_options)
        if not 0 <= msg.seat < seats:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"seat must be 0..{seats - 1}")
        to, targets = self.sessions.targets(msg.to, client)
        options = {**game_options, **room_options}
        self._may_challenge(client, game.name, options, to, targets, now)
        expires = now + self.admission.limits.challenge_s
        challenge = Challenge(self.new_id(), client.session, targets, to, game.name, options, msg.seat, expires)
        return self._offer(client, challenge, msg.id)

    def invite(self, client: Client, msg: Invite, now: float) -> Outbox:
        """The host offers an open seat of a room whose game has not started to a named online player."""
        room = self.directory.get(msg.room, client)
        if room.host != client.session:
            raise Refusal(ErrorCode.NOT_ALLOWED, "only the host can invite")
        if room.status != RoomStatus.WAITING:
            raise Refusal(ErrorCode.NOT_ALLOWED, "the game has already started")
        if not 0 <= msg.seat < len(room.seats):
            raise Refusal(ErrorCode.BAD_MESSAGE, f"seat must be 0..{len(room.seats) - 1}")
        if not room.seats[msg.seat].free:
            raise Refusal(ErrorCode.SEAT_TAKEN, f"seat {msg.seat} is taken")
        to, targets = self.sessions.targets(msg.to, client)
        options = dict(room.summary().options)
        self._may_challenge(client, room.game.name, options, to, targets, now)
        expires = now + self.admission.limits.challenge_s
        challenge = Challenge(
            self.new_id(), client.session, targets, to, room.game.name, options, msg.seat, expires, room=room.code
        )
        return self._offer(client, challenge, msg.id)

    def invitees(self, host: Client, name: str, game: str) -> tuple[str, set[str]]:
        """The name and connected sessions a tournament's host may invite as `name` (server/tournament_host.py):
        online, not the host, taking challenges for the game; else the refusal a challenge would get."""
        to, targets = self.sessions.targets(name, host)
        self._takes(game, to, targets)
        return to, targets

    def _may_challenge(
        self, client: Client, game: str, options: dict[str, Any], to: str, targets: set[str], now: float
    ) -> None:
        """Refuse a challenge past a pending cap, for a game the target does not take challenges for, rated for a
        guest (who could not sit down in it: its room would be left open with the challenger alone), or sent
        faster than its address's allowance."""
        clients = self.sessions.clients
        pending = [ch for ch in self.pending.values() if ch.tournament is None]
        self.admission.pending_caps(client, to, all(clients[s].bot for s in targets), pending)
        self._takes(game, to, targets)
        if options.get("rated") and not any(clients[s].claimed for s in targets):
            raise Refusal(ErrorCode.NOT_ALLOWED, f"{to} is a guest: rated games are for claimed players")
        self.admission.pace_challenges(client, now)

    def _takes(self, game: str, to: str, targets: set[str]) -> None:
        """Refuse an offer of a game the target does not take challenges for."""
        if not any(game in self.sessions.clients[s].accepts for s in targets):
            raise Refusal(ErrorCode.NOT_ALLOWED, f"{to} does not take challenges for {game[:40]}")

    def _offer(self, client: Client, challenge: Challenge, request_id: int | None) -> Outbox:
        """Keep a new challenge and tell both sides: the reply to the challenger, the push to the target."""
        self.pending[challenge.id] = challenge
        expires_ms = round(self.admission.limits.challenge_s * 1000)
        out = Outbox()
        out.send(
            {client.session},
            ChallengeSent(challenge=challenge.id, to=challenge.to, expires_ms=expires_ms, id=request_id),
        )
        out.send(
            challenge.targets,
            Challenged(
                challenge=challenge.id,
                sender=self.presence.info(client.name),
                game=challenge.game,
                options=challenge.options,
                seat=challenge.target_seat,
                expires_ms=expires_ms,
                room=challenge.room,
            ),
        )
        return out

    # -- answering -----------------------------------------------------------------------------------------------------
    def offered(self, client: Client, challenge_id: str) -> Challenge:
        """The pending challenge with this id offered to `client`, or an unknown_challenge refusal."""
        challenge = self.pending.get(challenge_id)
        if challenge is None or client.session not in challenge.targets:
            raise Refusal(ErrorCode.UNKNOWN_CHALLENGE, f"no challenge {challenge_id[:20]!r} is waiting for you")
        return challenge

    def accept(self, client: Client, challenge: Challenge, msg: Accept, now: float) -> tuple[Room | None, Outbox]:
        """Take a challenge or invite (not an invitation: the tournament takes those): a new room with both seated
        (the game starts), or the invite's seat. The room is None if it could not be opened (the offer ends)."""
        sender = self.sessions.clients.get(challenge.sender)
        if sender is None or not sender.connected:  # cannot happen: a challenger leaving ends its challenges
            self.pending.pop(challenge.id, None)
            raise Refusal(ErrorCode.UNKNOWN_CHALLENGE, "the challenger has left")
        if challenge.room is not None:
            room = self.directory.get(challenge.room)
            out = room.join(client.member, Role.PLAYER, challenge.seat, msg.id)
            client.rooms.add(room.code)
        else:
            try:
                room, out = self.open_room(sender, challenge.game, challenge.options, True, now)
            except Refusal as refusal:
                return None, self._unopened(challenge, client, refusal, msg.id)
            out.extend(room.join(sender.member, Role.PLAYER, challenge.seat, None))
            sender.rooms.add(room.code)
            out.extend(room.join(client.member, Role.PLAYER, challenge.target_seat, msg.id))
            client.rooms.add(room.code)
        del self.pending[challenge.id]
        gone = ChallengeGone(challenge=challenge.id, why=ChallengeEnd.ACCEPTED, room=room.code)
        out.send({challenge.sender} | challenge.targets - {client.session}, gone)
        return room, out

    def _unopened(self, challenge: Challenge, client: Client, refusal: Refusal, request_id: int | None) -> Outbox:
        """An accepted challenge whose room cannot be opened (the challenger hosts all the rooms it may, the server
        lists all it can): it could not be accepted later either, so it ends now. The accepter gets the refusal as
        the reply to its `accept`, the challenger the same error; both sides get `challenge_gone` declined, the
        reason saying why the game could not start."""
        del self.pending[challenge.id]
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

    def decline(self, client: Client, msg: Decline, now: float) -> Outbox:
        """Turn down a challenge offered to you (the challenger is told), or withdraw your own."""
        challenge = self.pending.get(msg.challenge)
        if challenge is not None and challenge.sender == client.session:
            why = ChallengeEnd.WITHDRAWN
        else:
            challenge = self.offered(client, msg.challenge)
            why = ChallengeEnd.DECLINED
        del self.pending[challenge.id]
        reason = clean_text(msg.reason)[:MAX_REASON] if msg.reason else None
        out = Outbox()
        gone = ChallengeGone(challenge=challenge.id, why=why, reason=reason)
        out.send(self.sessions.connected({challenge.sender} - {client.session}), gone)
        out.send({client.session}, replace(gone, id=msg.id))
        out.send(challenge.targets - {client.session}, gone)
        if challenge.tournament is not None:
            out.extend(self.invitation_gone(challenge, now))
        return out

    # -- ending --------------------------------------------------------------------------------------------------------
    def end(self, challenge: Challenge, why: ChallengeEnd, out: Outbox, now: float) -> None:
        """Drop a challenge and tell both sides' remaining connections (and its tournament, for an invitation)."""
        self.pending.pop(challenge.id, None)
        gone = ChallengeGone(challenge=challenge.id, why=why)
        out.send(self.sessions.connected({challenge.sender} | challenge.targets), gone)
        if challenge.tournament is not None:
            out.extend(self.invitation_gone(challenge, now))

    def withdraw(self, challenge: Challenge, out: Outbox, now: float) -> None:
        """End a challenge on its sender's behalf (`withdrawn`), as a tournament's host cancelling does."""
        self.end(challenge, ChallengeEnd.WITHDRAWN, out, now)

    def drop(self, client: Client, out: Outbox, now: float) -> None:
        """A connection closed: its challenges end, and so do those only it could answer (a tournament's
        invitations stand when its host goes: the tournament does not need the host)."""
        for challenge in list(self.pending.values()):
            if challenge.sender == client.session and challenge.tournament is None:
                self.end(challenge, ChallengeEnd.LEFT, out, now)
            elif client.session in challenge.targets:
                challenge.targets.discard(client.session)
                if not challenge.targets:
                    self.end(challenge, ChallengeEnd.LEFT, out, now)

    def sweep(self, now: float, out: Outbox) -> None:
        """End the offers nobody answered in time (`expired`)."""
        for challenge in list(self.pending.values()):
            if now >= challenge.expires:
                self.end(challenge, ChallengeEnd.EXPIRED, out, now)
