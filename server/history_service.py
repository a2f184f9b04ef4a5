"""Finished games, leaderboards and player cards, read from the store (sans-I/O).

It reads only the store and its own replay cache, so it runs wherever the store can be read: in the server, or in
the server's history worker (server/history_worker.py), a process that keeps one of these and nothing else.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Protocol

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import (
    GameRecord,
    Games,
    GetGame,
    Leaderboard,
    Leaders,
    ListGames,
    Message,
    PlayerCard,
    Profile,
)
from gamenight.protocol.vocab import LeaderEntry, PoolRating
from gamenight.server.games import GAMES
from gamenight.server.rated import RatingBook, player_key, pools
from gamenight.server.records import MAX_LEADERBOARD_LIMIT, MAX_LEADERBOARD_OFFSET, StoredRating
from gamenight.server.room import Refusal, Room
from gamenight.server.text import MAX_NAME, clean_name

REPLAY_CACHE = 64  # finished games whose replay frames are kept
MAX_LIST_GAMES = 200  # entries a `list_games` may ask for (`limit` 1-200; anything else is refused)

HistoryRequest = ListGames | GetGame | Leaderboard | Profile


class History(Protocol):
    """Where finished games are read from (the store: SQLite or PostgreSQL, server/sqlstore.py)."""

    def list_games(
        self, player: str | None, game: str | None, limit: int, viewer: str | None, room: str | None = None
    ) -> list[dict[str, Any]]: ...

    def get_game(self, game_id: int, viewer: str | None) -> dict[str, Any] | None: ...

    def leaderboard(self, pool: str, offset: int, limit: int) -> tuple[int, list[dict[str, Any]]]: ...

    def profile(self, player: str, viewer: str | None) -> tuple[list[StoredRating], list[dict[str, Any]]]: ...

    def analysis(self, game_id: int) -> dict[str, Any] | None: ...


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


class HistoryService:
    """Answers `list_games`, `get_game`, `leaderboard` and `profile` from the store."""

    def __init__(self, history: History | None, ratings: RatingBook | None = None) -> None:
        self.history = history
        self.ratings = ratings or RatingBook()  # shows each rating's deviation as of now
        self.pools = pools(GAMES.values())  # the leaderboards: each game, and "<game>-ffa" for 3-4 seats
        self.replays: OrderedDict[int, list[dict[str, Any]]] = OrderedDict()  # game id -> frames, latest last

    def answer(self, msg: HistoryRequest, viewer: str) -> Message:
        """The answer to a history request from the person whose token hash is `viewer` (Refusal if none)."""
        match msg:
            case ListGames():
                if not 1 <= msg.limit <= MAX_LIST_GAMES:
                    raise Refusal(ErrorCode.BAD_MESSAGE, f"limit must be 1 to {MAX_LIST_GAMES}")
                games = self._store().list_games(msg.player, msg.game, msg.limit, viewer, msg.room)
                return Games(games=games, id=msg.id)
            case GetGame():
                record = self._store().get_game(msg.game_id, viewer)
                if record is None:
                    raise Refusal(ErrorCode.UNKNOWN_GAME, f"there is no finished game {msg.game_id}")
                return GameRecord(record=record, frames=self.frames(record), id=msg.id)
            case Leaderboard():
                return self._leaderboard(msg)
            case Profile():
                return self._profile(viewer, msg)

    def frames(self, record: dict[str, Any]) -> list[dict[str, Any]]:
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

    def _store(self) -> History:
        """The finished-games store, or a refusal if this server keeps none."""
        if self.history is None:
            raise Refusal(ErrorCode.NOT_ALLOWED, "this server keeps no game history")
        return self.history

    def _leaderboard(self, msg: Leaderboard) -> Leaders:
        """One page of a pool's leaderboard, read from the store (bounded: offset and limit are checked first)."""
        if msg.game not in self.pools:
            known = ", ".join(self.pools)
            raise Refusal(ErrorCode.BAD_OPTIONS, f"no leaderboard {msg.game[:40]!r}; try one of {known}")
        if not 0 <= msg.offset <= MAX_LEADERBOARD_OFFSET:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"offset must be 0..{MAX_LEADERBOARD_OFFSET}")
        if not 1 <= msg.limit <= MAX_LEADERBOARD_LIMIT:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"limit must be 1..{MAX_LEADERBOARD_LIMIT}")
        total, rows = self._store().leaderboard(msg.game, msg.offset, msg.limit)
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
        ratings, recent = self._store().profile(player_key(name), viewer)
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
