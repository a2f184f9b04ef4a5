"""Who is online, and the challenges between you and them: plain data the client state keeps up to date.

`Presence.apply` reads the presence and challenge messages (`players`, `challenge_sent`, `challenged`,
`challenge_gone`, and the error replies to a `challenge` or `invite`) and says what changed in a `PresenceChange`;
`client.state` calls it and turns that into the `Changes` the app acts on, and hands it the presence changes a
batched `lobby` push carries (`Presence.update`). No Textual, no network: recorded message sequences drive it in
tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gamenight.protocol.messages import (
    Challenged,
    ChallengeGone,
    ChallengeSent,
    Error,
    Message,
    Players,
)
from gamenight.protocol.vocab import ChallengeEnd, GameDescription, PlayerInfo, TournamentOffer

BOT_MARK = "[bot]"
"""How a bot is marked wherever a name is listed: plain ASCII, so every terminal draws it."""


@dataclass(frozen=True, slots=True)
class Ask:
    """A challenge (or invite) sent and not yet answered by the server: what it offered to whom."""

    to: str
    game: str
    room: str | None = None  # set for an invite


@dataclass(frozen=True, slots=True)
class Pending:
    """One of my challenges (or invites, or my tournament's invitations) the server confirmed, waiting for the
    target's answer."""

    id: str
    to: str  # the target's name as the server shows it
    game: str
    expires_ms: int
    room: str | None = None
    tournament: str | None = None  # an invitation into my tournament

    @property
    def what(self) -> str:
        """What it is called in a notice."""
        if self.tournament is not None:
            return f"invitation to tournament {self.tournament}"
        return "invite" if self.room is not None else "challenge"


@dataclass(frozen=True, slots=True)
class Offer:
    """A challenge (or invite, with `room`; or an invitation into a tournament, with `tournament`) offered to me:
    who, what game, which seat I would take."""

    id: str
    sender: PlayerInfo
    game: str
    options: dict[str, Any]
    seat: int
    expires_ms: int
    room: str | None = None
    tournament: TournamentOffer | None = None

    @classmethod
    def of(cls, msg: Challenged) -> Offer:
        """The offer a `challenged` push carries."""
        return cls(
            msg.challenge, msg.sender, msg.game, dict(msg.options), msg.seat, msg.expires_ms, msg.room, msg.tournament
        )

    @property
    def what(self) -> str:
        """What it is called in a notice."""
        return "tournament invitation" if self.tournament is not None else "challenge"


@dataclass(slots=True)
class PresenceChange:
    """What one message changed here; the client state copies it into its `Changes`."""

    players: bool = False  # the online list
    challenges: bool = False  # my pending challenges or the offers to me
    offered: Offer | None = None  # a new offer to answer
    gone: list[str] = field(default_factory=list)  # ids of offers to me that ended (close their dialogs)
    notices: list[str] = field(default_factory=list)  # what to tell the user


def player_label(info: PlayerInfo) -> str:
    """A name as the lists show it: bots carry BOT_MARK."""
    return f"{info.name} {BOT_MARK}" if info.bot else info.name


def offer_text(offer: Offer, games: Mapping[str, GameDescription]) -> str:
    """One line for the offer dialog, e.g. "rhino [bot] challenges you to Othello (size 10), you play white"."""
    description = games.get(offer.game)
    title = description.title if description is not None else offer.game
    changed = _changed_options(offer.options, description)
    what = f"{title} ({changed})" if changed else title
    seat = description.seat_label(offer.seat) if description is not None else f"seat {offer.seat + 1}"
    who = player_label(offer.sender)
    if offer.tournament is not None:
        return f"{who} invites you to {tournament_text(offer.tournament, what)}"
    if offer.room is not None:
        return f"{who} invites you to room {offer.room}: {what}; you would play {seat}"
    return f"{who} challenges you to {what}; you would play {seat}"


def tournament_text(offer: TournamentOffer, game: str) -> str:
    """A tournament invitation in words, e.g. "a round robin of Othello (size 10), starting now: tournament
    t1a2b3c4, entered: alice, AI level 3; invited: bob, carol"."""
    if offer.kind == "arena":
        length = f"{offer.duration_s // 60} min" if offer.duration_s >= 60 else f"{offer.duration_s} s"
        kind = f"an arena ({length})"
    else:
        kind = "a round robin" + (f" ({offer.rounds} rounds)" if offer.rounds > 1 else "")
    start = f"starting in {offer.starts_in_ms // 1000} s" if offer.starts_in_ms >= 1000 else "starting now"
    entered = ", ".join(offer.entries) or "nobody yet"
    invited = ", ".join(offer.invited)
    return f"{kind} of {game}, {start}: tournament {offer.tournament}, entered: {entered}; invited: {invited}"


def _changed_options(options: Mapping[str, Any], game: GameDescription | None) -> str:
    """The options that differ from the game's defaults, as "name value" pairs (all of them without a game)."""
    defaults = {spec.name: (spec.default, spec.title) for spec in game.options} if game is not None else {}
    parts = []
    for name, value in options.items():
        default, title = defaults.get(name, (None, name))
        if game is None or (name in defaults and value != default):
            shown = "on" if value is True else "off" if value is False else str(value)
            parts.append(f"{title} {shown}")
    return ", ".join(parts)


GONE_TEXT = {
    ChallengeEnd.ACCEPTED: "accepted",
    ChallengeEnd.DECLINED: "declined",
    ChallengeEnd.EXPIRED: "expired: no answer in time",
    ChallengeEnd.LEFT: "ended: a player left",
    ChallengeEnd.WITHDRAWN: "withdrawn",
}


class Presence:
    """The online players (by name), my pending challenges and invites, and the offers made to me."""

    def __init__(self) -> None:
        self.players: dict[str, PlayerInfo] = {}
        self.asked: dict[int, Ask] = {}  # request id -> a challenge or invite the server has not confirmed yet
        self.pending: dict[str, Pending] = {}  # challenge id -> mine, waiting for an answer
        self.offers: dict[str, Offer] = {}  # challenge id -> offered to me, not answered yet
        self.answered: set[str] = set()  # offers I accepted: their `challenge_gone` is no news

    # -- reading the server ------------------------------------------------------------------------------
    def apply(self, message: Message) -> PresenceChange | None:
        """Apply one message; None when it is not about presence or challenges."""
        change = PresenceChange()
        match message:
            case Players():
                self.players = {p.name: p for p in message.players if p.online}
                change.players = True
            case ChallengeSent():
                self._sent(message, change)
            case Challenged():
                offer = Offer.of(message)
                self.offers[offer.id] = offer
                change.offered, change.challenges = offer, True
            case ChallengeGone():
                self._gone(message, change)
            case Error() if message.id is not None and message.id in self.asked:
                del self.asked[message.id]  # refused: its error is shown as for any request
                change.challenges = True
            case _:
                return None
        return change

    def update(self, players: list[PlayerInfo]) -> bool:
        """A `lobby` push's presence changes: people who connected, changed what they accept or how many games
        they play, or went offline (`online` false). True if there were any."""
        for info in players:
            if info.online:
                self.players[info.name] = info
            else:
                self.players.pop(info.name, None)
        return bool(players)

    def _sent(self, msg: ChallengeSent, change: PresenceChange) -> None:
        """The server passed my challenge (or invite) on: it waits for the target's answer."""
        ask = self.asked.pop(msg.id, None) if msg.id is not None else None
        game = ask.game if ask is not None else ""
        room = ask.room if ask is not None else None
        pending = Pending(msg.challenge, msg.to, game, msg.expires_ms, room, msg.tournament)
        self.pending[msg.challenge] = pending
        change.challenges = True
        change.notices.append(f"Your {pending.what} was sent: waiting for {msg.to} to answer")

    def _gone(self, msg: ChallengeGone, change: PresenceChange) -> None:
        """A challenge ended: mine (say how), or one offered to me (close its dialog)."""
        mine = self.pending.pop(msg.challenge, None)
        offer = self.offers.pop(msg.challenge, None)
        change.challenges = True
        if mine is not None:
            text = f"Your {mine.what} to {mine.to} was {GONE_TEXT.get(msg.why, str(msg.why))}"
            if msg.why == ChallengeEnd.DECLINED and msg.reason:
                text += f": {msg.reason}"
            change.notices.append(text)
        if offer is not None:
            change.gone.append(offer.id)
            if msg.challenge in self.answered or msg.id is not None:
                self.answered.discard(msg.challenge)  # my own answer (or its reply): nothing to announce
            elif msg.why == ChallengeEnd.ACCEPTED:
                change.notices.append(f"{offer.sender.name}'s {offer.what} was accepted in another window")
            else:
                change.notices.append(f"{offer.sender.name}'s {offer.what} {GONE_TEXT.get(msg.why, str(msg.why))}")

    # -- what the app records about its own requests ---------------------------------------------------
    def asking(self, request_id: int | None, ask: Ask) -> None:
        """A challenge or invite was sent with this request id."""
        if request_id is not None:
            self.asked[request_id] = ask

    def answering(self, challenge: str) -> None:
        """I answered an offer: forget it (its end is no news to me)."""
        if self.offers.pop(challenge, None) is not None:
            self.answered.add(challenge)

    def lost_connection(self) -> None:
        """A new session (not a resume): the server forgot every challenge of the old one."""
        self.asked.clear()
        self.pending.clear()
        self.offers.clear()
        self.answered.clear()

    # -- views ------------------------------------------------------------------------------------------
    def online(self, me: str | None = None) -> list[PlayerInfo]:
        """Everyone online but me: bots first, then by name (as the server orders them)."""
        others = [p for p in self.players.values() if p.name != me]
        return sorted(others, key=lambda p: (not p.bot, p.name.casefold(), p.name))

    def takers(self, game: str, me: str | None = None) -> list[PlayerInfo]:
        """Who online takes challenges (and invites) for `game`."""
        return [p for p in self.online(me) if game in p.games]

    def pending_to(self, name: str) -> list[Pending]:
        """My challenges waiting for `name`'s answer."""
        return [p for p in self.pending.values() if p.to == name]


def games_text(info: PlayerInfo, titles: Mapping[str, GameDescription]) -> str:
    """The games someone takes challenges for, by their titles ("Connect Four, Othello"; the wire name of a game
    the server did not describe); "—" for none."""
    return ", ".join(titles[g].title if g in titles else g for g in info.games) if info.games else "—"
