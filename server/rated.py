"""Rated games: who a seat's rating belongs to, the ratings in memory, and the rating changes of a finished game.

Sans-I/O like the room: the lobby loads the stored ratings once at start-up (`RatingBook.load`) and hands the
book to each room (`Room.rater`); when a rated game ends the room asks the book for the changes, which go into the
`GameFinished` record, so the new ratings reach the disk in the same transaction as the game's result and
before anybody is told (the `game_over` event and the final state carry them in `result.ratings`).

Who is rated: claimed people by their name's comparison key (`text.name_key`), programs connected as bots the
same way (flagged as bots), and the server's AI seats as "AI level N" and "bot NAME" (keys "ai:level N" and
"ai:bot:NAME", which no name key can equal since name keys hold no punctuation).

Which rating: each game has one rating pool for its two-seat games (Glicko-2, `ratings.rate_pair`); Tron with 3-4
riders has a second pool, "tron-ffa", rated by finishing order with Plackett-Luce (`ratings.rate_ranked`). A
game between a person and a bot or AI counts half for everyone in it (the change is halved), as bot games do on
lichess. Aborted games are not rated, nor is any game that ended in its opening (before every seat made
`OPENING_MOVES` moves, or rode the first second of a Tron game: `Room.in_opening`): the room records such a game
as aborted, except a tournament's, whose result stands for the standings but which is not rated either.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gamenight.protocol.vocab import SEATS_OPTION, EndReason, RatingChange, Result
from gamenight.server.games.base import Game
from gamenight.server.ratings import LICHESS, Policy, Rating, idle, new_rating, rate_pair, rate_ranked
from gamenight.server.records import SeatRated, StoredRating
from gamenight.server.text import name_key

if TYPE_CHECKING:
    from gamenight.server.outbox import AiSpec, Member
    from gamenight.server.room import Room, Seat

FFA_SUFFIX = "-ffa"
BOT_WEIGHT = 0.5  # a bot's (or AI's) game against a person moves every rating in it by half
DAY_S = 86400.0
PAIR_SWEEP_MIN = 1024  # pairs kept before the first sweep of those idle for a day


def pools(games: Iterable[Game[Any, Any]]) -> list[str]:
    """Every rating pool: each game's name, and "<game>-ffa" for games that seat more than two."""
    found = []
    for game in games:
        found.append(game.name)
        if any(spec.name == SEATS_OPTION and (spec.maximum or 0) > 2 for spec in game.describe().options):
            found.append(game.name + FFA_SUFFIX)
    return found


def pool_of(game: str, seats: int) -> str:
    """The pool a game with `seats` seats is rated in."""
    return game if seats <= 2 else game + FFA_SUFFIX


def ai_key(label: str) -> str | None:
    """The rating key of an AI seat's label ("AI level 3" -> "ai:level 3", "bot classic" -> "ai:bot:classic")."""
    if label.startswith("AI level "):
        return "ai:level " + label.removeprefix("AI level ").strip()
    if label.startswith("bot "):
        return "ai:bot:" + label.removeprefix("bot ").strip()
    return None


def player_key(name: str) -> str:
    """The rating key for a name as people type it: an AI's label, or a person's name key."""
    return ai_key(name) or name_key(name)


@dataclass(frozen=True, slots=True)
class Entrant:
    """Whose rating a seat plays for: its key, display name and kind ("human", "bot" or "ai")."""

    key: str
    name: str
    kind: str

    @classmethod
    def of(cls, seat: Seat) -> Entrant | None:
        """The seat's rated player (None for an empty seat)."""
        return cls.playing(seat.holder, seat.ai)

    @classmethod
    def playing(cls, holder: Member | None, ai: AiSpec | None) -> Entrant | None:
        """The rated player of a seat held by `holder` or played by `ai` (None if neither)."""
        if ai is not None:
            return cls(ai_key(ai.label) or ai.label, ai.label, "ai")
        if holder is not None:
            return cls(name_key(holder.name), holder.name, "bot" if holder.bot else "human")
        return None


@dataclass(slots=True)
class Standing:
    """One player's rating in one pool, with their record there."""

    key: str
    pool: str
    name: str
    kind: str
    rating: Rating
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    rated_at: float = 0.0  # wall-clock seconds of the last rated game


def own_bot(holders: Iterable[Member], owner: Callable[[Member], tuple[str, str]], by_address: bool) -> str | None:
    """Why a rated game between a person and a bot rates nobody, or None: the bot's name is claimed with the
    person's key, or (`by_address`) the bot is connected from the person's address. `owner` gives a member's
    address and public key ("" if unknown). A bot claims its name with a key pair of its own and says nothing of
    who runs it, so the server knows a bot's owner only when its key is the person's; the same address is the rule
    that holds otherwise (a farm of games against one's own bot, on one machine or behind one router)."""
    seated = list(holders)
    people = [m for m in seated if not m.bot]
    bots = [m for m in seated if m.bot]
    for person in people:
        address, key = owner(person)
        for bot in bots:
            bot_address, bot_key = owner(bot)
            if key and key == bot_key:
                return f"{bot.name} is a bot of {person.name}'s key: a game against your own bot is not rated"
            if by_address and address and address == bot_address:
                return f"{bot.name} plays from {person.name}'s address: a game against your own bot is not rated"
    return None


class RatingBook:
    """Every rating in memory, by (player key, pool); rooms ask it to rate their finished games."""

    def __init__(
        self, policy: Policy = LICHESS, clock: Callable[[], float] = time.time, pair_games_per_day: int = 0
    ) -> None:
        self.policy = policy
        self.clock = clock
        self.standings: dict[tuple[str, str], Standing] = {}
        # Anti-farming: at most this many rated games a day between the same two players in one pool (0: no cap);
        # later ones are played as rated but change nothing. When each pair's recent rated games ended, in memory.
        self.pair_games_per_day = pair_games_per_day
        self.pair_games: dict[tuple[str, frozenset[str]], deque[float]] = {}
        self.pair_sweep_at = PAIR_SWEEP_MIN  # how many pairs before those idle for a day are dropped
        # A seated member's address and public key ("" if unknown), for `own_bot` (set by the lobby), and whether
        # the same address is enough (the server's limit `own_bot_by_address`).
        self.owner: Callable[[Member], tuple[str, str]] = lambda member: ("", "")
        self.own_bot_by_address = True
        # Called just before a game is rated: a cluster's node reads every node's ratings again here (the book was
        # loaded at start-up; other nodes have rated games since). A lone server has nothing to refresh.
        self.refresh: Callable[[], None] = lambda: None

    def load(self, rows: Iterable[StoredRating]) -> None:
        """Take the ratings a previous run stored (at start-up)."""
        for row in rows:
            self.standings[(row.player, row.pool)] = Standing(
                row.player,
                row.pool,
                row.name,
                row.kind,
                Rating(row.rating, row.rd, row.vol),
                row.games,
                row.wins,
                row.draws,
                row.losses,
                row.rated_at,
            )

    def revert(self, keys: Iterable[tuple[str, str]], stored: Iterable[StoredRating]) -> None:
        """Put these (player key, pool) standings back to what the store holds (a rated game was not stored).

        `rate` books a game's changes at once; when the game's record then fails to reach the disk, its players'
        standings go back to the stored rows (removed if they have none), so the next game starts from what a
        restart would load and the book never runs ahead of the disk.
        """
        wanted = set(keys)
        for key in wanted:
            self.standings.pop(key, None)
        self.load(row for row in stored if (row.player, row.pool) in wanted)

    def shown_rd(self, rating: float, rd: float, vol: float, rated_at: float) -> float:
        """A stored rating's RD as of now: grown for the days since its last rated game (as the next game sees it)."""
        return idle(Rating(rating, rd, vol), max(0.0, self.clock() - rated_at) / DAY_S, self.policy).rd

    def _pair_allowed(self, pool: str, one: str, two: str, now: float) -> bool:
        """Count a rated game between `one` and `two` in `pool` if the pair has played fewer than
        `pair_games_per_day` in the last day (True), else refuse it a rating (False: a farm of resignations between
        two accounts moves the ratings a few games a day, not hundreds)."""
        if not self.pair_games_per_day:
            return True
        if len(self.pair_games) >= self.pair_sweep_at:
            self._forget_old_pairs(now)
        ended = self.pair_games.setdefault((pool, frozenset((one, two))), deque())
        while ended and ended[0] <= now - DAY_S:
            ended.popleft()
        if len(ended) >= self.pair_games_per_day:
            return False
        ended.append(now)
        return True

    def _forget_old_pairs(self, now: float) -> None:
        """Drop the pairs whose last rated game is over a day old (nothing of theirs counts any more), and sweep
        again when the book has grown to twice what is left: kept pairs stay bounded by the last day's, at O(1)
        amortised cost per game."""
        self.pair_games = {pair: ended for pair, ended in self.pair_games.items() if ended[-1] > now - DAY_S}
        self.pair_sweep_at = max(PAIR_SWEEP_MIN, 2 * len(self.pair_games))

    def unrated_why(self, room: Room) -> str | None:
        """Why the rated game starting in `room` will rate nobody (`own_bot`), or None."""
        holders = [seat.holder for seat in room.seats if seat.holder is not None and seat.ai is None]
        return own_bot(holders, self.owner, self.own_bot_by_address)

    def current(self, entrant: Entrant, pool: str, now: float) -> Rating:
        """The entrant's rating going into a game at `now`: stored, with its RD grown for the days since."""
        standing = self.standings.get((entrant.key, pool))
        if standing is None:
            return new_rating(self.policy)
        return idle(standing.rating, (now - standing.rated_at) / DAY_S, self.policy)

    def rate(self, room: Room, result: Result) -> tuple[tuple[RatingChange, ...], tuple[SeatRated, ...]]:
        """The rating changes of `room`'s game that ended with `result`, applied to the book at once.

        Returns the changes as players see them and as the store keeps them; nothing for an aborted game, a game
        that ended in its opening, or a seat without a player.
        """
        if result.reason == EndReason.ABORTED or room.in_opening():
            return (), ()
        self.refresh()
        players = self._entrants(room)
        if players is None:
            return (), ()  # an empty seat, or one player in two seats: nothing to rate
        pool = pool_of(room.game.name, len(players))
        now = self.clock()
        if len(players) == 2 and not self._pair_allowed(pool, players[0].key, players[1].key, now):
            return (), ()
        before = [self.current(e, pool, now) for e in players]
        places = finishing_places(room, result)
        after = self._rated(players, before, places)
        first = min(places)
        shared = places.count(first) > 1
        changes, records = [], []
        for seat, (entrant, old, new, place) in enumerate(zip(players, before, after, places, strict=True)):
            outcome = "loss" if place != first else "draw" if shared else "win"
            self._apply(entrant, pool, new, outcome, now)
            changes.append(
                RatingChange(
                    seat=seat,
                    name=entrant.name,
                    pool=pool,
                    before=round(old.rating, 2),
                    after=round(new.rating, 2),
                    rd=round(new.rd, 2),
                    provisional=new.provisional(self.policy),
                )
            )
            old_rating, new_rating_ = (old.rating, old.rd, old.vol), (new.rating, new.rd, new.vol)
            records.append(
                SeatRated(seat, entrant.key, pool, entrant.name, entrant.kind, old_rating, new_rating_, outcome, now)
            )
        return tuple(changes), tuple(records)

    @staticmethod
    def _entrants(room: Room) -> list[Entrant] | None:
        """Who is rated for the room's game, by seat; None if a seat had no player or one player sat twice.

        Those who sat down for the game count (a rider who left a 3-4 rider game mid-way is still rated by place).
        """
        seated = room.started_with if len(room.started_with) == len(room.seats) else None
        entrants = [Entrant.playing(*s) for s in seated] if seated else [Entrant.of(seat) for seat in room.seats]
        players = [e for e in entrants if e is not None]
        if len(players) != len(entrants) or len({e.key for e in players}) != len(players):
            return None
        return players

    def _rated(self, players: list[Entrant], before: list[Rating], places: list[int]) -> list[Rating]:
        """The ratings after the game: a pair by Glicko-2, three or four by their places; a game between a
        person and a bot counts BOT_WEIGHT."""
        kinds = {e.kind for e in players}
        weight = BOT_WEIGHT if "human" in kinds and kinds != {"human"} else 1.0
        if len(players) == 2:
            score = 1.0 if places[0] < places[1] else 0.0 if places[0] > places[1] else 0.5
            return list(rate_pair(before[0], before[1], score, self.policy, weight))
        return rate_ranked(before, places, self.policy, weight)

    def _apply(self, entrant: Entrant, pool: str, rating: Rating, outcome: str, now: float) -> None:
        """Book one rated game for the entrant."""
        standing = self.standings.get((entrant.key, pool))
        if standing is None:
            standing = self.standings[(entrant.key, pool)] = Standing(
                entrant.key, pool, entrant.name, entrant.kind, rating
            )
        standing.name, standing.kind, standing.rating, standing.rated_at = entrant.name, entrant.kind, rating, now
        standing.games += 1
        standing.wins += outcome == "win"
        standing.draws += outcome == "draw"
        standing.losses += outcome == "loss"


def finishing_places(room: Room, result: Result) -> list[int]:
    """Each seat's place, 1 the best, equal places for a shared result.

    Two seats: the winner first, a draw (no single winner) shared. More (Tron's riders): the winners first, then
    the others by how long they lasted, found by replaying the game's moves and noting the ply where each
    seat stopped riding (riders stopping on the same ply share a place).
    """
    seats = len(room.seats)
    if seats <= 2:
        if len(result.winners) == 1:
            return [1 if s == result.winners[0] else 2 for s in range(seats)]
        return [1] * seats
    out_at = _out_at(room)
    last = len(room.moves) + 1
    lasted = [last if s in result.winners else out_at.get(s, last) for s in range(seats)]
    return [1 + sum(1 for other in lasted if other > mine) for mine in lasted]


def _out_at(room: Room) -> dict[int, int]:
    """For each seat that stopped playing before the end, the ply after which it was out (replayed)."""
    game = room.game
    state = game.initial_state(room.options)
    out: dict[int, int] = {}
    for ply, notation in enumerate(room.moves):
        state = game.apply(state, room.driver.replayed(state, notation))
        alive = getattr(state, "alive", None)
        if alive is None:
            return out
        for seat, living in enumerate(alive):
            if not living and seat not in out:
                out[seat] = ply
    return out
