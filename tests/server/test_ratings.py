"""Rated games over real websockets: ratings move by the reference amounts, are stored, and are shown on request."""

from __future__ import annotations

import secrets
import sqlite3

import pytest

from gamenight.protocol.messages import (
    Abort,
    AddAi,
    CreateRoom,
    GetGame,
    Join,
    Leaderboard,
    Leave,
    ListGames,
    MakeMove,
    Profile,
    Resign,
    Sync,
    Takeback,
)
from gamenight.server.ratings import Rating, idle, new_rating, rate_pair
from tests.peer import Peer

RATED = {"rated": True}


def key() -> str:
    """A fresh claim key."""
    return "key-" + secrets.token_urlsafe(16)


async def claimed_pair(url: str) -> tuple[Peer, Peer]:
    """Two claimed players, alice and bob."""
    return await Peer.connect(url, "alice", key=key()), await Peer.connect(url, "bob", key=key())


async def rated_game(alice: Peer, bob: Peer, game: str = "connect4", options: dict | None = None) -> str:
    """alice creates a rated room and sits at seat 0, bob at seat 1; returns the room code once it started
    (the first playing state stays in alice's inbox)."""
    room = await alice.request(CreateRoom, game=game, options={**RATED, **(options or {})})
    assert room.type == "room", room
    await alice.request(Join, room=room.room, seat=0)
    await bob.request(Join, room=room.room, seat=1)
    state = await alice.wait(lambda m: m.type == "state" and m.status == "playing")
    alice.inbox.insert(0, state)
    return room.room


async def play_opening(alice: Peer, bob: Peer, code: str, plies: int = 4) -> None:
    """alice (seat 0) and bob (seat 1) drop in column d in turn, `plies` moves in all (4: two each, the opening a
    rated game needs before it counts); returns once alice has seen the last one."""
    for ply in range(plies):
        mover, seat = (alice, 0) if ply % 2 == 0 else (bob, 1)
        state = await mover.wait(
            lambda m, ply=ply, seat=seat: (
                m.type == "state" and m.room == code and len(m.moves) == ply and m.to_move == [seat]
            )
        )
        await mover.send(MakeMove(room=code, move="d", seq=state.seq))
    await alice.wait(lambda m: m.type == "state" and m.room == code and len(m.moves) == plies)


async def alice_resigns(alice: Peer, bob: Peer, code: str):
    """alice and bob move twice each, then alice resigns; returns (bob's final state, bob's game_over event)."""
    await play_opening(alice, bob, code)
    await alice.send(Resign(room=code))
    final = await bob.wait(lambda m: m.type == "state" and m.room == code and m.status == "finished")
    over = await bob.wait(lambda m: m.type == "event" and m.room == code and m.kind == "game_over")
    return final, over


def by_name(changes) -> dict[str, object]:
    """A result's rating changes by player name."""
    return {c.name: c for c in changes}


async def test_rated_game_moves_both_ratings_by_the_reference_amounts(server_process):
    """Two claimed players' rated game: both ratings move as Glicko-2 computes from 1500/500/0.09, shown everywhere."""
    proc = server_process()
    alice, bob = await claimed_pair(proc.url)
    code = await rated_game(alice, bob)
    final, over = await alice_resigns(alice, bob, code)
    want_alice, want_bob = rate_pair(new_rating(), new_rating(), 0.0)  # alice lost
    changes = by_name(final.result.ratings)
    assert changes["alice"].before == 1500 and changes["bob"].before == 1500
    assert changes["alice"].after == round(want_alice.rating, 2) and changes["alice"].rd == round(want_alice.rd, 2)
    assert changes["bob"].after == round(want_bob.rating, 2) and changes["bob"].rd == round(want_bob.rd, 2)
    assert changes["alice"].provisional and changes["alice"].pool == "connect4"
    assert {c["name"]: c["after"] for c in over.data["ratings"]} == {
        "alice": changes["alice"].after,
        "bob": changes["bob"].after,
    }
    games = await bob.request(ListGames)
    record = await bob.request(GetGame, game_id=games.games[0]["game_id"])
    assert {c["name"]: c["after"] for c in record.record["result"]["ratings"]} == {
        "alice": changes["alice"].after,
        "bob": changes["bob"].after,
    }
    board = await alice.request(Leaderboard, game="connect4")
    assert [(e.rank, e.name, e.rating, e.games, e.provisional) for e in board.entries] == [
        (1, "bob", round(want_bob.rating, 2), 1, True),
        (2, "alice", round(want_alice.rating, 2), 1, True),
    ]
    assert board.total == 2 and not any(e.bot for e in board.entries)
    card = await alice.request(Profile, name="BOB")  # names are looked up as claims compare them
    assert card.type == "player_card" and card.name == "bob" and card.kind == "human"
    (connect4,) = card.ratings
    assert (connect4.pool, connect4.games, connect4.wins, connect4.draws, connect4.losses) == ("connect4", 1, 1, 0, 0)
    assert card.recent[0]["outcome"] == "win" and card.recent[0]["after"] == round(want_bob.rating, 2)
    await alice.close()
    await bob.close()


async def test_ratings_survive_a_restart_and_carry_into_the_next_game(server_process):
    """After a restart the leaderboard is the same and the next rated game starts from the stored ratings."""
    first = server_process()
    alice_key, bob_key = key(), key()
    alice, bob = (
        await Peer.connect(first.url, "alice", key=alice_key),
        await Peer.connect(first.url, "bob", key=bob_key),
    )
    code = await rated_game(alice, bob)
    final, _ = await alice_resigns(alice, bob, code)
    after_first = by_name(final.result.ratings)
    board = await alice.request(Leaderboard, game="connect4")
    await alice.close()
    await bob.close()
    assert first.stop() == 0
    second = server_process()
    alice, bob = (
        await Peer.connect(second.url, "alice", key=alice_key),
        await Peer.connect(second.url, "bob", key=bob_key),
    )
    again = await alice.request(Leaderboard, game="connect4")
    assert again.entries == board.entries
    code = await rated_game(alice, bob)
    final, _ = await alice_resigns(alice, bob, code)
    changes = by_name(final.result.ratings)
    assert changes["alice"].before == after_first["alice"].after and changes["bob"].before == after_first["bob"].after
    stored_alice = Rating(after_first["alice"].after, after_first["alice"].rd, 0.09)
    stored_bob = Rating(after_first["bob"].after, after_first["bob"].rd, 0.09)
    want_alice, want_bob = rate_pair(stored_alice, stored_bob, 0.0)
    assert changes["alice"].after == pytest.approx(want_alice.rating, abs=0.05)  # stored volatility is not 0.09 exactly
    assert changes["bob"].after == pytest.approx(want_bob.rating, abs=0.05)
    card = await bob.request(Profile, name="bob")
    assert card.ratings[0].games == 2 and card.ratings[0].wins == 2 and len(card.recent) == 2
    await alice.close()
    await bob.close()


async def test_a_rated_game_that_could_not_be_stored_leaves_the_ratings_as_stored(db_server):
    """A rated game whose end cannot be written changes nobody's rating: the next game starts from the stored ones."""
    alice, bob = await claimed_pair(f"ws://127.0.0.1:{db_server.port}")
    final, _ = await alice_resigns(alice, bob, await rated_game(alice, bob))
    stored = by_name(final.result.ratings)
    code = await rated_game(alice, bob)
    await play_opening(alice, bob, code)
    holder = sqlite3.connect(db_server.config.db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the database: the game's end cannot be written
    try:
        refused = await alice.request(Resign, room=code)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert refused.type == "error" and refused.code == "unavailable"
    final, _ = await alice_resigns(alice, bob, await rated_game(alice, bob))
    changes = by_name(final.result.ratings)
    assert changes["alice"].before == stored["alice"].after and changes["bob"].before == stored["bob"].after
    await alice.close()
    await bob.close()


async def test_instant_resignations_farm_no_rating(db_server):
    """The farming loop (issue 37): rated games resigned at once or within the opening, by either player, change
    no rating; each is recorded as aborted with no winner and no rating changes, and nobody is on the board."""
    url = f"ws://127.0.0.1:{db_server.port}"
    alice, bob = await claimed_pair(url)
    for game_no, plies in enumerate((0, 0, 1, 2, 3, 0)):  # 3 plies: alice made two moves, bob only one
        code = await rated_game(alice, bob)
        await play_opening(alice, bob, code, plies)
        await (alice if game_no % 2 == 0 else bob).send(Resign(room=code))
        final = await bob.wait(lambda m, code=code: m.type == "state" and m.room == code and m.status == "finished")
        result = final.result
        assert (result.reason, result.winners, result.winner, result.loser, result.ratings) == (
            "aborted",
            (),
            None,
            None,
            (),
        )
        assert len(final.moves) == plies
    games = await alice.request(ListGames, player="alice")
    assert len(games.games) == 6
    for listed in games.games:
        record = await alice.request(GetGame, game_id=listed["game_id"])
        assert record.record["result"]["reason"] == "aborted" and record.record["result"]["winners"] == []
        assert not record.record["result"].get("ratings")
    board = await alice.request(Leaderboard, game="connect4")
    assert board.total == 0 and board.entries == []
    for name in ("alice", "bob"):
        reply = await alice.request(Profile, name=name)
        assert reply.type == "error" and reply.code == "unknown_player"
    await alice.close()
    await bob.close()


async def test_a_rated_game_that_ends_in_its_opening_by_leaving_or_on_time_is_aborted(db_server):
    """However a rated game ends before both sides made two moves, it is aborted and unrated: a player leaving
    the room, or the clock of a player who never moves running out."""
    url = f"ws://127.0.0.1:{db_server.port}"
    alice, bob = await claimed_pair(url)
    code = await rated_game(alice, bob)
    await play_opening(alice, bob, code, 1)
    await bob.request(Leave, room=code)
    final = await alice.wait(lambda m: m.type == "state" and m.room == code and m.status == "finished")
    assert final.result.reason == "aborted" and final.result.ratings == ()
    code = await rated_game(alice, bob, options={"clock_s": 1})
    final = await bob.wait(lambda m: m.type == "state" and m.room == code and m.status == "finished")
    assert final.result.reason == "aborted" and final.result.ratings == () and final.clock.remaining_ms[0] == 0
    board = await alice.request(Leaderboard, game="connect4")
    assert board.total == 0
    await alice.close()
    await bob.close()


async def test_a_casual_game_resigned_at_once_is_still_a_resignation(db_server):
    """The opening rule is for rated games: an unrated game resigned before any move is the opponent's win."""
    url = f"ws://127.0.0.1:{db_server.port}"
    alice, bob = await claimed_pair(url)
    room = await alice.request(CreateRoom, game="connect4", options={})
    await alice.request(Join, room=room.room, seat=0)
    await bob.request(Join, room=room.room, seat=1)
    await alice.wait(lambda m: m.type == "state" and m.status == "playing")
    await alice.send(Resign(room=room.room))
    final = await bob.wait(lambda m: m.type == "state" and m.status == "finished")
    assert (final.result.reason, final.result.winner, final.result.loser) == ("resign", 1, 0)
    await alice.close()
    await bob.close()


async def test_guests_cannot_create_or_join_rated_games(db_server):
    """A guest gets `not_allowed` creating a rated room or taking a seat in one; watching is fine."""
    url = f"ws://127.0.0.1:{db_server.port}"
    guest = await Peer.connect(url, "guest")
    reply = await guest.request(CreateRoom, game="othello", options=RATED)
    assert reply.type == "error" and reply.code == "not_allowed" and "claim" in reply.message
    alice = await Peer.connect(url, "alice", key=key())
    room = await alice.request(CreateRoom, game="othello", options=RATED)
    reply = await guest.request(Join, room=room.room, seat=1)
    assert reply.type == "error" and reply.code == "not_allowed" and "claimed" in reply.message
    watching = await guest.request(Join, room=room.room, **{"role": "spectator"})
    assert watching.type == "joined"
    await guest.close()
    await alice.close()


async def test_takeback_refused_in_a_rated_game(db_server):
    """Every takeback request in a rated game, from either seat, is refused with `not_allowed`; the move stands."""
    url = f"ws://127.0.0.1:{db_server.port}"
    alice, bob = await claimed_pair(url)
    code = await rated_game(alice, bob)
    state = await alice.wait(lambda m: m.type == "state" and m.room == code)
    await alice.send(MakeMove(room=code, move="d", seq=state.seq))
    await bob.wait(lambda m: m.type == "state" and m.room == code and m.to_move == [1])
    for asker in (alice, bob):
        reply = await asker.request(Takeback, room=code)
        assert reply.type == "error" and reply.code == "not_allowed" and "rated" in reply.message
    now = await bob.request(Sync, room=code, seq=state.seq)
    assert now.type == "state" and now.moves == ["d"] and now.seq == state.seq + 1
    await alice.close()
    await bob.close()


async def test_aborted_rated_game_leaves_ratings_unchanged(db_server):
    """An aborted rated game has no rating changes and nobody appears on the leaderboard."""
    url = f"ws://127.0.0.1:{db_server.port}"
    alice, bob = await claimed_pair(url)
    code = await rated_game(alice, bob)
    await bob.send(Abort(room=code))
    final = await bob.wait(lambda m: m.type == "state" and m.status == "finished")
    assert final.result.reason == "aborted" and final.result.ratings == ()
    board = await alice.request(Leaderboard, game="connect4")
    assert board.total == 0 and board.entries == []
    reply = await alice.request(Profile, name="alice")
    assert reply.type == "error" and reply.code == "unknown_player"
    await alice.close()
    await bob.close()


async def test_leaderboard_pages_and_refuses_bad_requests(db_server):
    """Pages follow offset and limit with ranks counted from the top; bad pools, offsets and limits get bad_options."""
    url = f"ws://127.0.0.1:{db_server.port}"
    alice, bob = await claimed_pair(url)
    code = await rated_game(alice, bob)
    await alice_resigns(alice, bob, code)
    page = await alice.request(Leaderboard, game="connect4", offset=1, limit=1)
    assert [(e.rank, e.name) for e in page.entries] == [(2, "alice")] and page.total == 2 and page.offset == 1
    empty = await alice.request(Leaderboard, game="connect4", offset=5, limit=10)
    assert empty.entries == [] and empty.total == 2
    assert (await alice.request(Leaderboard, game="tron-ffa")).entries == []
    for bad in (
        {"game": "chess"},
        {"game": "connect4", "limit": 0},
        {"game": "connect4", "limit": 101},
        {"game": "connect4", "offset": -1},
        {"game": "connect4", "offset": 10_001},
    ):
        reply = await alice.request(Leaderboard, **bad)
        assert reply.type == "error" and reply.code == "bad_options", bad
    reply = await alice.request(Profile, name="nobody-here")
    assert reply.type == "error" and reply.code == "unknown_player"
    await alice.close()
    await bob.close()


async def test_ai_seat_is_rated_and_the_game_counts_half(db_server):
    """A claimed player against "AI level 1": the AI gets a rating of its own, and the change is half the full one."""
    url = f"ws://127.0.0.1:{db_server.port}"
    alice = await Peer.connect(url, "alice", key=key())
    room = await alice.request(CreateRoom, game="connect4", options={**RATED, "ai_pace_ms": 0})
    await alice.request(AddAi, room=room.room, seat=1, level=1)
    await alice.request(Join, room=room.room, seat=0)
    state = mine = await alice.wait(lambda m: m.type == "state" and m.status == "playing")
    for ply in (2, 4):  # the opening: two moves each, the AI answering
        await alice.send(MakeMove(room=room.room, move=mine.legal[0], seq=mine.seq))
        mine = await alice.wait(lambda m, ply=ply: m.type == "state" and len(m.moves) == ply and m.to_move == [0])
    await alice.send(Resign(room=room.room))
    final = await alice.wait(lambda m: m.type == "state" and m.status == "finished")
    changes = by_name(final.result.ratings)
    full_alice, full_ai = rate_pair(new_rating(), new_rating(), 0.0)
    assert changes["alice"].after == round(1500 + (full_alice.rating - 1500) / 2, 2)
    assert changes["AI level 1"].after == round(1500 + (full_ai.rating - 1500) / 2, 2)
    board = await alice.request(Leaderboard, game="connect4")
    assert [(e.name, e.kind, e.bot) for e in board.entries] == [("AI level 1", "ai", True), ("alice", "human", False)]
    card = await alice.request(Profile, name="AI level 1")
    assert card.kind == "ai" and card.ratings[0].wins == 1
    assert state.status == "playing"
    await alice.close()


def test_tron_with_three_riders_is_rated_by_finishing_order() -> None:
    """Three riders: the "tron-ffa" pool rates the last one riding highest and the first to crash lowest."""
    from gamenight.protocol.vocab import EventKind
    from gamenight.server.games import GAMES
    from gamenight.server.outbox import AiSpec
    from gamenight.server.rated import RatingBook
    from gamenight.server.room import Room
    from gamenight.server.room_options import split_and_validate

    game = GAMES["tron"]
    options, room_options = split_and_validate(game, {"players": 3, "map": "random", "seed": 5, **RATED})
    room = Room("TRON3", game, options, room_options, "host", "host")
    book = RatingBook(clock=lambda: 1_000_000.0)
    room.rater = book.rate
    for seat, level in enumerate((1, 2, 3)):
        room.add_ai("host", seat, AiSpec(level=level))
    ticks = 0
    crashed_at: dict[int, int] = {}
    while room.result is None and ticks < 2000:  # riders go straight (no AI answers): walls end it soon
        before = room.state
        room.tick()
        ticks += 1
        for notice in game.notices(before, room.state):  # the tick's crashes, as its `tick` message carries them
            if notice.kind == EventKind.CRASH:
                crashed_at.setdefault(notice.data["seat"], room.seq)
    assert room.result is not None
    last = max(crashed_at.values()) + 1
    lasted = {seat: crashed_at.get(seat, last) for seat in range(3)}
    after = {c.seat: c.after for c in room.result.ratings}
    assert {c.pool for c in room.result.ratings} == {"tron-ffa"}
    for a in range(3):
        for b in range(3):
            if lasted[a] > lasted[b]:
                assert after[a] > after[b]
            elif lasted[a] == lasted[b]:
                assert after[a] == after[b]
    assert book.standings[("ai:level 1", "tron-ffa")].games == 1


def steer(room) -> None:
    """Every rider a person holds takes the safe way this tick (the AI's fallback move), as a player who steers."""
    from gamenight.server.ai.play import fallback_move

    for seat in sorted(room.game.to_move(room.state)):
        holder = room.seats[seat].holder
        if holder is not None:
            room.move(holder.session, fallback_move(room.game.name, room.state, seat), None)


def test_a_rider_who_leaves_a_rated_three_rider_game_is_still_rated_last() -> None:
    """Leaving a rated 3-rider Tron game mid-way does not cancel its rating: the leaver is rated by their place."""
    from gamenight.protocol.vocab import Role
    from gamenight.server.games import GAMES
    from gamenight.server.outbox import Member
    from gamenight.server.rated import RatingBook
    from gamenight.server.room import Room
    from gamenight.server.room_options import split_and_validate

    game = GAMES["tron"]
    options, room_options = split_and_validate(game, {"players": 3, "map": "random", "seed": 5, **RATED})
    room = Room("TRON3", game, options, room_options, "host", "host")
    room.rater = RatingBook(clock=lambda: 1_000_000.0).rate
    for seat, name in enumerate(("ann", "ben", "cat")):
        room.join(Member(f"s{seat}", name, f"h{seat}", claimed=True), Role.PLAYER, seat, None)
    for _ in range(room.driver.opening_moves):  # past the opening (a rider out in it would make the game unrated)
        steer(room)
        room.tick()
    room.leave("s1")  # ben retires on the next tick and gives up his seat
    ticks = 0
    while room.result is None and ticks < 2000:
        steer(room)
        room.tick()
        ticks += 1
    assert room.result is not None
    after = {c.name: c.after for c in room.result.ratings}
    assert set(after) == {"ann", "ben", "cat"}
    assert after["ben"] == min(after.values()) and after["ben"] < 1500


def _rated_duel(seed: int = 3):
    """A rated two-rider Tron room on a random 20x20 arena, ann (session s0) and ben (s1) seated; the game on."""
    from gamenight.protocol.vocab import Role
    from gamenight.server.games import GAMES
    from gamenight.server.outbox import Member
    from gamenight.server.rated import RatingBook
    from gamenight.server.room import Room
    from gamenight.server.room_options import split_and_validate

    game = GAMES["tron"]
    options, room_options = split_and_validate(game, {"map": "random", "seed": seed, **RATED})
    room = Room("DUEL", game, options, room_options, "host", "host")
    room.rater = RatingBook(clock=lambda: 1_000_000.0).rate
    for seat, name in enumerate(("ann", "ben")):
        room.join(Member(f"s{seat}", name, f"h{seat}", claimed=True), Role.PLAYER, seat, None)
    return room


def test_a_rated_tron_game_that_ends_in_its_first_second_is_aborted() -> None:
    """Tron's opening is the first second of riding (7 ticks at 150 ms): a rider who resigns in the countdown, or
    who crashes within it, leaves the rated game aborted; steered past it, a resignation is rated."""
    room = _rated_duel()
    assert room.driver.opening_moves == 7
    room.resign("s0")
    assert room.result is not None and room.result.reason == "aborted" and room.result.ratings == ()
    room = _rated_duel()
    from gamenight.server.games.tron import DIRECTION_NAMES, DIRECTIONS, straight_run

    nearest_wall = min(DIRECTIONS, key=lambda direction: straight_run(room.state, 0, direction))
    ticks = 0
    while room.result is None:  # ann rides straight at the nearest wall (3 squares away on this arena)
        room.move("s0", DIRECTION_NAMES[nearest_wall], None)
        room.tick()
        ticks += 1
    assert ticks < room.driver.opening_moves
    assert room.result.reason == "aborted" and room.result.winners == () and room.result.ratings == ()
    room = _rated_duel()
    for _ in range(room.driver.opening_moves):
        steer(room)
        room.tick()
    assert room.result is None
    room.resign("s0")
    assert room.result is not None and (room.result.reason, room.result.winner) == ("resign", 1)
    assert {c.name for c in room.result.ratings} == {"ann", "ben"}


def test_a_restored_tron_game_still_knows_how_long_each_rider_rode() -> None:
    """After a restart, a rated Tron game replayed from its stored ticks is still past its opening: the ticks each
    rider rode are counted again, so a resignation then is rated."""
    from gamenight.server.outbox import Member
    from gamenight.server.records import SeatSaved, StoredRoom
    from gamenight.server.room import Room

    room = _rated_duel()
    for _ in range(room.driver.opening_moves + 2):
        steer(room)
        room.tick()
    seats = [SeatSaved(room.code, i, name, f"h{i}", None, None, False) for i, name in enumerate(("ann", "ben"))]
    saved = StoredRoom(
        room.code, "tron", room.options, room.room_options, "host", False, room.game_no, seats=seats, moves=room.moves
    )
    again, _ = Room.restore(
        saved, room.game, 0.0, lambda token, name, bot: Member(f"s{token[1:]}", name, token, claimed=True)
    )
    assert again.driver.moves_made() == room.driver.moves_made() == [9, 9]
    again.rater = room.rater
    again.resign("s0")
    assert again.result is not None and again.result.reason == "resign" and len(again.result.ratings) == 2


async def test_an_idle_players_rd_is_shown_grown_since_their_last_game(db_server):
    """The leaderboard and a profile show each RD grown for the days since that player's last rated game (as
    their next game will see it), not the RD as it was the day they last played."""
    url = f"ws://127.0.0.1:{db_server.port}"
    alice, bob = await claimed_pair(url)
    code = await rated_game(alice, bob)
    await alice_resigns(alice, bob, code)
    fresh = {e.name: e.rd for e in (await alice.request(Leaderboard, game="connect4")).entries}
    db = sqlite3.connect(db_server.config.db, isolation_level=None)
    stored = dict(db.execute("SELECT name, rd FROM ratings WHERE pool = 'connect4'").fetchall())
    rating, rd, vol = db.execute("SELECT rating, rd, vol FROM ratings WHERE name = 'alice'").fetchone()
    db.execute("UPDATE ratings SET rated_at = rated_at - 365 * 86400 WHERE name = 'alice'")
    db.close()
    board = {e.name: e for e in (await alice.request(Leaderboard, game="connect4")).entries}
    grown = round(idle(Rating(rating, rd, vol), 365).rd, 2)
    assert fresh == {name: round(value, 2) for name, value in stored.items()}  # just played: as stored
    assert board["alice"].rd == grown and grown > fresh["alice"]
    assert board["bob"].rd == fresh["bob"]
    card = await bob.request(Profile, name="alice")
    assert card.ratings[0].rd == grown
    await alice.close()
    await bob.close()


async def test_the_same_two_players_rate_only_so_many_games_a_day(server_with):
    """Two accounts farming each other (lichess-style two moves each, then a resignation) move their ratings for
    `rated_pair_games_per_day` games only: the next is played rated but rates nobody, while a game with a third
    player still counts."""
    server = await server_with(rated_pair_games_per_day=2)
    url = f"ws://127.0.0.1:{server.port}"
    alice, bob = await claimed_pair(url)
    results = []
    for _ in range(3):
        code = await rated_game(alice, bob)
        final, _ = await alice_resigns(alice, bob, code)
        results.append(final.result)
    assert [len(r.ratings) for r in results] == [2, 2, 0]
    assert [r.reason for r in results] == ["resign"] * 3  # the farmed game still ends as played
    carol = await Peer.connect(url, "carol", key=key())
    code = await rated_game(carol, bob)
    final, _ = await alice_resigns(carol, bob, code)
    assert {c.name for c in final.result.ratings} == {"carol", "bob"}
    for peer in (alice, bob, carol):
        await peer.close()


async def test_a_rated_game_against_your_own_bot_is_played_unrated_and_the_room_says_why(server_with):
    """alice's rated game against a bot connected from her own address, or claimed with her own key, is played as
    rated but rates nobody, and the room says why when it starts; a bot of someone else's, from another address,
    moves both ratings (at half weight) as before."""
    server = await server_with()
    url = f"ws://127.0.0.1:{server.port}"
    alice_key = key()
    alice = await Peer.connect(url, "alice", key=alice_key)
    mine = await Peer.connect(url, "rhino", key=key(), bot=True)  # her bot, run on her machine
    twin = await Peer.connect(url, "twin", key=alice_key, bot=True, address="127.0.0.2")  # claimed with her key
    theirs = await Peer.connect(url, "robo", key=key(), bot=True, address="127.0.0.3")
    for bot in (mine, twin):
        code = await rated_game(alice, bot)
        why = await alice.wait(lambda m, code=code: m.type == "event" and m.room == code and m.kind == "unrated")
        assert why.data["reason"].startswith(bot.welcome.name) and "your own bot is not rated" in why.data["reason"]
        final, _ = await alice_resigns(alice, bot, code)
        assert (final.result.reason, final.result.ratings) == ("resign", ())
    code = await rated_game(alice, theirs)
    final, _ = await alice_resigns(alice, theirs, code)
    assert {c.name for c in final.result.ratings} == {"alice", "robo"}
    assert not any(m.type == "event" and m.kind == "unrated" and m.room == code for m in alice.seen)
    assert {s.name for s in server.lobby.ratings.standings.values()} == {"alice", "robo"}  # rhino, twin: never rated
    for peer in (alice, mine, twin, theirs):
        await peer.close()


def test_the_pairs_counted_against_farming_do_not_pile_up():
    """The book of who rated against whom in the last day forgets pairs idle for a day as it grows: 3,000 pairs one
    day and 3,000 others two days later leave it holding about the recent ones only, and the old pairs rate again."""
    from gamenight.server.rated import DAY_S, RatingBook

    now = [0.0]
    book = RatingBook(clock=lambda: now[0], pair_games_per_day=1)
    assert all(book._pair_allowed("connect4", f"a{n}", f"b{n}", now[0]) for n in range(3000))
    assert not book._pair_allowed("connect4", "a0", "b0", now[0])  # the day's one game is played
    now[0] = 2 * DAY_S
    assert all(book._pair_allowed("connect4", f"c{n}", f"d{n}", now[0]) for n in range(3000))
    assert len(book.pair_games) <= 3000 + 1
    assert book._pair_allowed("connect4", "a0", "b0", now[0])
