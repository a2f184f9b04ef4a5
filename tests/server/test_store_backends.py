"""The store's behaviour, the same on both backends: SQLite (a real file) and PostgreSQL (a real server, tests/pg.py).

Every test here takes `target` (what `--db` would say) and runs once per backend; PostgreSQL-only behaviour
(its locks, its connection) is at the end.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gamenight.server.records import (
    AnalysisSaved,
    ClockSaved,
    Fenced,
    GameFinished,
    GameStarted,
    Moderated,
    MoveRecorded,
    MovesUndone,
    NameClaimed,
    RoomClosed,
    RoomSaved,
    Sanction,
    SeatRated,
    SeatSaved,
    StoreBackend,
    StoreError,
    TournamentSaved,
    tournament_fence,
)
from gamenight.server.store import is_postgres, open_store
from tests.pg import PgServer

OLD_PG = Path(__file__).resolve().parent.parent / "data" / "store_pg_v2.sql"  # PostgreSQL's schema before SqlStore
HANG_GUARD_S = 60  # a condition the test waits for is given this long (a guard against hanging, not a timing)
RACERS = 4  # processes opening one new database at the same moment
RACE_ROUNDS = 10  # new databases they race on, one after the other


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The `--db` of one backend: a SQLite file in a temporary folder, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "games.db")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def stores(target: str) -> Iterator[Callable[[], StoreBackend]]:
    """Opens stores (connections) on the test's database; closes them after."""
    opened: list[StoreBackend] = []

    def make() -> StoreBackend:
        store = open_store(target)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(stores: Callable[[], StoreBackend]) -> StoreBackend:
    """One store on the test's database."""
    return stores()


def raw(target: str, sql: str) -> None:
    """Run one SQL statement on the database behind the store's back (to break or age a row)."""
    if is_postgres(target):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            conn.execute(sql)
    else:
        db = sqlite3.connect(target)
        db.execute(sql)
        db.commit()
        db.close()


def room(code: str, private: bool = False, host_token: str | None = None) -> RoomSaved:
    """A room record with options that must come back exactly."""
    return RoomSaved(
        code, "othello", {"size": 8, "nested": {"b": 1, "a": [1, 2]}}, {"clock": "5+3"}, "ann", private, host_token
    )


def finished(code: str, names: list[str], game: str = "othello", **extra: object) -> GameFinished:
    """A finished game of `names` (seat order) that seat 0 won."""
    players = [{"seat": s, "name": n} for s, n in enumerate(names)]
    return GameFinished(
        code, 0, game, {"size": 8}, players, {"winner": 0, "reason": "resign"}, ["f5", "d6"], "f5 d6", **extra
    )


def test_a_games_analysis_is_stored_once_and_reads_back_exactly(store: StoreBackend) -> None:
    """A finished game's review (AnalysisSaved) reads back exactly; a second one for the same game (two nodes
    racing) leaves the first; a game with none has none."""
    store.write([finished("ROOM1", ["ann", "bo"])])
    moves = [{"ply": 1, "label": "blunder", "eval_before": {"chance": 0.5}}]
    analysis = {"moves": moves, "summary": [], "budget_ms": 8}
    assert store.analysis(1) is None
    store.write([AnalysisSaved(1, analysis)])
    store.write([AnalysisSaved(1, {**analysis, "budget_ms": 9})])
    assert store.analysis(1) == analysis and store.analysis(2) is None and store.analysis(2**64) is None


def test_rooms_seats_moves_clocks_and_takebacks_read_back_exactly(store: StoreBackend) -> None:
    """An open room comes back as written: settings, host, seats (person, AI, bot), moves with times, clocks."""
    store.write([room("ROOM1", host_token="hosthash"), room("ROOM2", private=True)])
    store.write(
        [
            SeatSaved("ROOM1", 0, "ann", "tok-a", None, None),
            SeatSaved("ROOM1", 1, None, None, 3, None),
            SeatSaved("ROOM2", 0, "robo", "tok-r", None, None, bot=True),
            SeatSaved("ROOM2", 1, None, None, None, "edax"),
            ClockSaved("ROOM1", 0, 0, [300_000, 300_000]),
            MoveRecorded("ROOM1", 0, 0, "f5", spent_ms=1200),
            ClockSaved("ROOM1", 0, 1, [301_800, 300_000]),
            MoveRecorded("ROOM1", 0, 1, "d6", spent_ms=800),
            ClockSaved("ROOM1", 0, 2, [301_800, 302_200]),
            MoveRecorded("ROOM1", 0, 2, "c3", spent_ms=50),
            ClockSaved("ROOM1", 0, 3, [304_750, 302_200]),
        ]
    )
    store.write([MovesUndone("ROOM1", 0, 2)])  # a takeback of the last move and the position after it
    store.write([SeatSaved("ROOM1", 1, "bo", "tok-b", None, None)])  # the AI's seat taken by a person
    one, two = store.unfinished_rooms()
    assert (one.code, one.game, one.host_name, one.private, one.game_no, one.host_token_hash) == (
        "ROOM1",
        "othello",
        "ann",
        False,
        0,
        "hosthash",
    )
    assert one.options == {"size": 8, "nested": {"b": 1, "a": [1, 2]}} and one.room_options == {"clock": "5+3"}
    assert [(s.seat, s.name, s.token_hash, s.ai_level, s.ai_bot, s.bot) for s in one.seats] == [
        (0, "ann", "tok-a", None, None, False),
        (1, "bo", "tok-b", None, None, False),
    ]
    assert one.moves == ["f5", "d6"] and one.move_ms == [1200, 800]
    assert one.clocks == [[300_000, 300_000], [301_800, 300_000], [301_800, 302_200]]
    assert one.result is None
    assert two.private and [(s.name, s.ai_bot, s.bot) for s in two.seats] == [
        ("robo", None, True),
        (None, "edax", False),
    ]
    assert store.open_room("ROOM1") == one


def test_a_rematch_starts_an_empty_log_and_a_finished_game_shows_its_result(store: StoreBackend) -> None:
    """After a game ends its room reads back with the result; a new game starts from an empty move log."""
    store.write([room("ROOM1"), MoveRecorded("ROOM1", 0, 0, "f5"), finished("ROOM1", ["ann", "bo"])])
    restored = store.open_room("ROOM1")
    assert restored is not None and restored.result == {"winner": 0, "reason": "resign"}
    store.write([GameStarted("ROOM1", 1), MoveRecorded("ROOM1", 1, 0, "e6")])
    restored = store.open_room("ROOM1")
    assert restored is not None and (restored.game_no, restored.moves, restored.result) == (1, ["e6"], None)


def test_names_keep_their_first_claim_and_become_bots_for_good(store: StoreBackend) -> None:
    """A claimed name reads back with its key hash; once claimed as a bot it stays a bot."""
    store.write([NameClaimed("ann", "Ann", "k1"), NameClaimed("robo", "Robo", "k2")])
    store.write([NameClaimed("robo", "Robo", "k2", bot=True)])
    store.write([NameClaimed("robo", "Robo", "k2", bot=False)])
    assert {(n.name_key, n.name, n.key_hash, n.bot) for n in store.claimed_names()} == {
        ("ann", "Ann", "k1", False),
        ("robo", "Robo", "k2", True),
    }


def test_admins_sanctions_and_the_audit_log_read_back(store: StoreBackend) -> None:
    """The operator's admins, the bans and mutes an admin sets or lifts, and every action in the audit log read back
    alike on both backends (moderation, issue 37); a sanction that has ended is not loaded."""
    assert store.set_admin("b0ss", "Boss", True) and not store.set_admin("b0ss", "Boss", True)
    assert store.set_admin("ann", "ann", True) and store.set_admin("ann", "ann", False)
    assert store.admins() == [("b0ss", "Boss")]
    store.write([Moderated(100.0, "Boss", "ban", "eve", "spam", {"duration_s": 60}, "name", "eve", 160.0)])
    store.write([Moderated(101.0, "Boss", "ban_address", "10.0.0.9", "flood", {}, "address", "10.0.0.9", 500.0)])
    store.write([Moderated(102.0, "Boss", "mute", "bob", "rude", {}, "mute", "bob", 140.0)])
    store.write([Moderated(103.0, "Boss", "unmute", "bob", "sorry", {}, "mute", "bob", None)])
    store.write([Moderated(104.0, "Boss", "kick", "eve", "again", {"sessions": 1})])
    assert store.sanctions(150.0) == [Sanction("address", "10.0.0.9", 500.0), Sanction("name", "eve", 160.0)]
    assert store.sanctions(200.0) == [Sanction("address", "10.0.0.9", 500.0)]
    log = store.audit()
    assert [(e["at"], e["admin"], e["action"], e["target"], e["reason"]) for e in log] == [
        (100.0, "Boss", "ban", "eve", "spam"),
        (101.0, "Boss", "ban_address", "10.0.0.9", "flood"),
        (102.0, "Boss", "mute", "bob", "rude"),
        (103.0, "Boss", "unmute", "bob", "sorry"),
        (104.0, "Boss", "kick", "eve", "again"),
    ]
    assert log[0]["details"] == {"duration_s": 60} and [e["action"] for e in store.audit(limit=2)] == ["unmute", "kick"]


def test_an_old_claim_moves_to_a_public_key_once_and_for_good(store: StoreBackend) -> None:
    """A protocol 2 claim (a key hash) moves to a public key, its key hash dropped; a later record cannot move it
    again nor bring the key hash back, and a new claim reads back with its public key."""
    store.write([NameClaimed("ann", "Ann", "k1"), NameClaimed("bea", "Bea", "", public_key="bb" * 32)])
    store.write([NameClaimed("ann", "Ann", "", public_key="aa" * 32)])
    store.write([NameClaimed("ann", "Ann", "k1"), NameClaimed("ann", "Ann", "", public_key="cc" * 32)])
    assert {(n.name_key, n.key_hash, n.public_key) for n in store.claimed_names()} == {
        ("ann", "", "aa" * 32),
        ("bea", "", "bb" * 32),
    }


def rated(seat: int, player: str, before: float, after: float, outcome: str) -> SeatRated:
    """One seat's rating change in the othello pool."""
    return SeatRated(seat, player, "othello", player, "human", (before, 350, 0.06), (after, 300, 0.06), outcome, 1.0)


def test_voiding_a_players_games_undoes_their_changes_and_refunds_their_victims(target: str, store) -> None:
    """An admin's void of a player's rated games in a window: each game leaves everyone's counts and the profile,
    the player's own change is undone, an opponent who lost points gets them back and one who gained keeps them;
    games outside the window, and games voided already, are left alone; the audit log says how many."""
    store.write(
        [
            finished(
                "R1", ["ann", "che"], ratings=(rated(0, "ann", 1500, 1450, "loss"), rated(1, "che", 1500, 1550, "win"))
            )
        ]
    )
    store.write(
        [
            finished(
                "R2", ["bo", "che"], ratings=(rated(0, "bo", 1500, 1520, "win"), rated(1, "che", 1550, 1530, "loss"))
            )
        ]
    )
    store.write(
        [
            finished(
                "R3", ["ann", "che"], ratings=(rated(0, "ann", 1450, 1440, "loss"), rated(1, "che", 1530, 1540, "win"))
            )
        ]
    )
    raw(target, "UPDATE games SET finished_at = 100 + id")  # games 1, 2, 3 finished at 101, 102, 103
    void = {"player": "che", "since": 100.0, "until": 102.5}
    store.write([Moderated(200.0, "Boss", "void", "che", "cheat engine", void)])
    store.write([Moderated(201.0, "Boss", "void", "che", "again", void)])  # voided already: nothing more
    ratings = {(r.player, r.rating, r.games, r.wins, r.losses) for r in store.ratings()}
    assert ratings == {("ann", 1490.0, 1, 0, 1), ("bo", 1520.0, 0, 0, 0), ("che", 1510.0, 1, 1, 0)}
    assert [g["game_id"] for g in store.profile("che")[1]] == [3]
    assert [e["details"]["games"] for e in store.audit()] == [2, 0]


def test_ratings_leaderboard_and_profile(store: StoreBackend) -> None:
    """Rated games update each record; the leaderboard pages by rating; a profile hides others' private games."""
    store.write(
        [
            finished(
                "R1", ["ann", "bo"], ratings=(rated(0, "ann", 1500, 1600, "win"), rated(1, "bo", 1500, 1400, "loss"))
            )
        ]
    )
    store.write(
        [
            finished(
                "R2",
                ["ann", "cy"],
                private=True,
                token_hashes=("tok-ann", "tok-cy"),
                ratings=(rated(0, "ann", 1600, 1650, "win"), rated(1, "cy", 1500, 1450, "loss")),
            )
        ]
    )
    by_player = {(r.player, r.pool): r for r in store.ratings()}
    ann = by_player["ann", "othello"]
    assert (ann.rating, ann.games, ann.wins, ann.losses) == (1650, 2, 2, 0)
    total, page = store.leaderboard("othello", 0, 2)
    assert total == 3 and [(e["rank"], e["name"], e["rating"]) for e in page] == [(1, "ann", 1650), (2, "cy", 1450)]
    assert [(e["rank"], e["name"]) for e in store.leaderboard("othello", 2, 2)[1]] == [(3, "bo")]
    assert store.leaderboard("pentago", 0, 10) == (0, [])
    ratings, recent = store.profile("ann")
    assert [(r.pool, r.games) for r in ratings] == [("othello", 2)]
    assert [(g["before"], g["after"], g["outcome"]) for g in recent] == [(1600, 1650, "win"), (1500, 1600, "win")]
    assert len(store.profile("ann", viewer="tok-bo")[1]) == 1  # the private game is not shown to others
    assert len(store.profile("ann", viewer="tok-cy")[1]) == 2  # ... but is to its players


def test_tournaments_are_rewritten_in_place_and_listed_oldest_first(store: StoreBackend) -> None:
    """A tournament's latest state replaces its earlier one; the listing keeps the latest ones, oldest first."""
    store.write([TournamentSaved("T1", {"id": "T1", "round": 1})])
    store.write([TournamentSaved("T2", {"id": "T2", "round": 1})])
    store.write([TournamentSaved("T1", {"id": "T1", "round": 2}, finished=True)])
    assert store.tournaments() == [{"id": "T1", "round": 2}, {"id": "T2", "round": 1}]
    assert store.tournaments(limit=1) == [{"id": "T1", "round": 2}, {"id": "T2", "round": 1}]  # T2 runs still
    assert store.tournaments(limit=0) == [{"id": "T2", "round": 1}]


def test_every_unfinished_tournament_comes_back_however_many_finished_after_it(store: StoreBackend) -> None:
    """After a restart an old tournament still running loads even when more than `limit` tournaments finished
    after it (only the newest 200 loaded: a flood of finished ones pushed a running tournament out for good)."""
    store.write([TournamentSaved("OLD", {"id": "OLD"})])
    store.write([TournamentSaved(f"F{n:03}", {"id": f"F{n:03}"}, finished=True) for n in range(250)])
    loaded = [t["id"] for t in store.tournaments()]
    assert loaded[0] == "OLD" and len(loaded) == 201 and loaded[-1] == "F249"


def test_a_tournaments_games_are_rows_written_one_change_at_a_time(stores: Callable[[], StoreBackend]) -> None:
    """A tournament's header is stored with only its games that changed: each is a row, replaced in place, rows past
    its game count go; the listing and a cluster's claim read the header with every game back in order."""
    store = stores()
    game = {"players": ["a", "b"], "room": None, "places": None, "forfeit": False}
    done = {**game, "room": "R1", "places": [1, 2]}
    header = {"id": "t1", "game_count": 3}
    store.write([TournamentSaved("t1", header, games=((0, game), (1, game), (2, game)), count=3)])
    store.write([TournamentSaved("t1", {**header, "round": 2}, games=((1, done),), count=3)])
    assert store.tournaments() == [{"id": "t1", "game_count": 3, "round": 2, "games": [game, done, game]}]
    store.write([TournamentSaved("t1", {"id": "t1", "game_count": 2}, games=(), count=2)])
    assert stores().claim_tournament("t1") == (1, {"id": "t1", "game_count": 2, "games": [game, done]})


def test_history_lists_filters_and_hides_private_games(store: StoreBackend) -> None:
    """list_games filters by player, game and room, newest first; private games only for their players."""
    store.write([finished("R1", ["ann", "bo"])])
    store.write([finished("R2", ["ann", "cy"], game="pentago", clock={"initial_ms": 60_000, "spent_ms": [5, 7]})])
    store.write([finished("R3", ["cy", "bo"], private=True, token_hashes=("tok-cy", "tok-bo"))])
    assert [g["game"] for g in store.list_games(player="ann")] == ["pentago", "othello"]
    assert [g["players"][0]["name"] for g in store.list_games(game="othello")] == ["cy", "ann"]
    assert len(store.list_games(player="cy", game="othello")) == 1
    assert [g["game_id"] for g in store.list_games(room="r2")] == [store.list_games(player="ann")[0]["game_id"]]
    assert len(store.list_games(limit=2)) == 2
    assert [g["players"][0]["name"] for g in store.list_games(viewer="tok-ann")] == ["ann", "ann"]
    assert len(store.list_games(viewer="tok-bo")) == 3
    newest, pentago, oldest = (g["game_id"] for g in store.list_games())
    assert store.get_game(newest, viewer="tok-ann") is None and store.get_game(newest, viewer="tok-cy") is not None
    record = store.get_game(pentago)
    assert record is not None
    assert (
        record["format"] == "gamenight-replay" and record["moves"] == ["f5", "d6"] and record["transcript"] == "f5 d6"
    )
    assert record["clock"] == {"initial_ms": 60_000, "spent_ms": [5, 7]} and record["result"]["reason"] == "resign"
    assert "clock" not in (store.get_game(oldest) or {})
    assert store.get_game(10**6) is None and store.get_game(2**63) is None and store.get_game(-1) is None


def test_claims_never_played_under_expire_and_used_ones_stay(target: str, store: StoreBackend) -> None:
    """expire_claims deletes the claims made before the cut-off whose name is in no finished game and no seat of a
    room; a newer claim, a name with a finished game and a seated name stay."""
    store.write([NameClaimed(n, n, "", public_key=f"{i:02d}" * 32) for i, n in enumerate(["ann", "bo", "cy", "dee"])])
    store.write(
        [room("DONE1"), finished("DONE1", ["ann", "zed"]), room("OPEN1"), SeatSaved("OPEN1", 0, "bo", "h", None, None)]
    )
    raw(target, "UPDATE names SET claimed_at = 1000 WHERE name <> 'dee'")
    assert store.expire_claims(2000) == ["cy"]
    assert store.expire_claims(2000) == []
    assert sorted(c.name for c in store.claimed_names()) == ["ann", "bo", "dee"]


def test_purge_removes_only_rooms_closed_long_ago(target: str, store: StoreBackend) -> None:
    """purge_closed deletes the rows of rooms closed before the cut-off; open rooms and finished games stay."""
    store.write([room("OLD01"), room("NEW01"), room("OPEN1"), finished("OLD01", ["ann", "bo"])])
    store.write([RoomClosed("OLD01"), RoomClosed("NEW01")])
    raw(target, "UPDATE rooms SET closed_at = 1000 WHERE code = 'OLD01'")
    assert store.purge_closed(2000) == 1
    assert store.purge_closed(2000) == 0
    assert [r.code for r in store.unfinished_rooms()] == ["OPEN1"]
    assert len(store.list_games(room="OLD01")) == 1
    assert store.claim_room("NEW01") is None


def test_a_failed_batch_writes_nothing(store: StoreBackend) -> None:
    """A batch with a bad record is rolled back whole: no half-written move log, and the store stays usable."""
    store.write([room("ROOM1")])
    with pytest.raises((sqlite3.Error, StoreError)):
        store.write([MoveRecorded("ROOM1", 0, 0, "f5"), MoveRecorded("ROOM1", 0, 0, "d6")])
    assert store.unfinished_rooms()[0].moves == []
    store.write([MoveRecorded("ROOM1", 0, 0, "c4")])
    assert store.unfinished_rooms()[0].moves == ["c4"]


def test_a_claim_by_another_connection_fences_the_old_owners_batch_whole(stores: Callable[[], StoreBackend]) -> None:
    """Fencing across two connections: after a claim, a batch naming the room under the old epoch stores nothing."""
    old, new = stores(), stores()
    old.write([room("ROOM1"), room("ROOM2")])
    old.write([MoveRecorded("ROOM1", 0, 0, "f5")], fences={"ROOM1": 0})
    assert new.claim_room("ROOM1") == 1
    with pytest.raises(Fenced) as refused:
        old.write(
            [MoveRecorded("ROOM2", 0, 0, "f5"), MoveRecorded("ROOM1", 0, 1, "d6")], fences={"ROOM1": 0, "ROOM2": 0}
        )
    assert (refused.value.code, refused.value.held, refused.value.current) == ("ROOM1", 0, 1)
    assert [r.moves for r in new.unfinished_rooms()] == [["f5"], []]
    new.write([MoveRecorded("ROOM1", 0, 1, "f4")], fences={"ROOM1": 1})
    assert new.claim_room("ROOM1") == 2
    restored = old.open_room("ROOM1")
    assert restored is not None and restored.moves == ["f5", "f4"]


def test_a_new_room_passes_its_fence_and_a_closed_room_cannot_be_claimed(store: StoreBackend) -> None:
    """A room not stored yet passes a fence of epoch 0; a closed or unknown room is neither claimed nor read back."""
    store.write([room("ROOM1"), MoveRecorded("ROOM1", 0, 0, "f5")], fences={"ROOM1": 0})
    store.write([RoomClosed("ROOM1")])
    assert store.claim_room("ROOM1") is None and store.claim_room("NOPE1") is None
    assert store.open_room("ROOM1") is None and store.open_room("NOPE1") is None


def test_a_tournament_claim_fences_its_old_owners_writes(stores: Callable[[], StoreBackend]) -> None:
    """A cluster's tournament: a claim raises its epoch and returns its state; the old owner's batch holding the
    old epoch is refused whole (its rooms' records too), the new owner's is stored."""
    old, new = stores(), stores()
    fence = tournament_fence("t1")
    old.write([TournamentSaved("t1", {"id": "t1", "games": 0}), room("ROOM1")], fences={fence: 0, "ROOM1": 0})
    assert new.claim_tournament("t1") == (1, {"id": "t1", "games": 0})
    with pytest.raises(Fenced) as refused:
        old.write([room("ROOM2"), TournamentSaved("t1", {"id": "t1", "games": 1})], fences={fence: 0, "ROOM1": 0})
    assert (refused.value.code, refused.value.held, refused.value.current) == (fence, 0, 1)
    assert [r.code for r in new.unfinished_rooms()] == ["ROOM1"]
    new.write([TournamentSaved("t1", {"id": "t1", "games": 2})], fences={fence: 1})
    assert old.tournaments() == [{"id": "t1", "games": 2}]
    assert new.claim_tournament("t1") == (2, {"id": "t1", "games": 2}) and new.claim_tournament("t9") is None


def test_a_room_with_a_broken_row_is_skipped_and_named(target: str, store: StoreBackend) -> None:
    """A room whose stored options are not JSON is left out of the restore and reported; the others load."""
    store.write([room("GOOD1"), room("BAD01")])
    raw(target, "UPDATE rooms SET options = 'not json' WHERE code = 'BAD01'")
    skipped: list[tuple[str, str]] = []
    assert [r.code for r in store.unfinished_rooms(skipped)] == ["GOOD1"]
    assert [code for code, _ in skipped] == ["BAD01"]
    with pytest.raises(StoreError, match="BAD01 cannot be read back"):
        store.open_room("BAD01")


def test_a_database_from_a_newer_gamenight_is_refused(target: str) -> None:
    """Opening a database whose schema is newer than this gamenight's fails with one line saying so."""
    open_store(target).close()
    if is_postgres(target):
        raw(target, "UPDATE gamenight_schema SET version = version + 1")
    else:
        raw(target, "PRAGMA user_version = 99")
    with pytest.raises(StoreError, match="newer gamenight") as refused:
        open_store(target)
    assert "\n" not in str(refused.value)


@pytest.fixture
def new_targets(target: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """RACE_ROUNDS more new, empty databases of the test's backend (SQLite files, or PostgreSQL databases)."""
    if not is_postgres(target):
        yield [str(tmp_path / f"race{i}.db") for i in range(RACE_ROUNDS)]
        return
    server: PgServer = request.getfixturevalue("pg_server")
    urls = [server.new_database() for _ in range(RACE_ROUNDS)]
    yield urls
    for url in urls:
        server.drop_database(url)


def open_together(targets: list[str], start: Any, results: Any) -> None:
    """In one racing process: for each database, wait until every racer is ready, then open the store (and close it);
    puts "" or what failed on `results`."""
    for target in targets:
        start.wait(HANG_GUARD_S)
        try:
            open_store(target).close()
            results.put("")
        except Exception as exc:
            results.put(f"{type(exc).__name__}: {exc}")


def schema(target: str) -> list[Any]:
    """A database's schema version, tables, columns and indexes (and a SQLite file's journal mode), to compare two
    databases."""
    if is_postgres(target):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            return [
                conn.execute(sql).fetchall()
                for sql in (
                    "SELECT version FROM gamenight_schema",
                    "SELECT table_name, column_name, data_type, column_default, is_nullable FROM"
                    " information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, column_name",
                    "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname",
                )
            ]
    db = sqlite3.connect(target)
    try:
        queries = ("PRAGMA user_version", "PRAGMA journal_mode", "SELECT * FROM sqlite_master ORDER BY name")
        return [db.execute(sql).fetchall() for sql in queries]
    finally:
        db.close()


def test_a_new_database_opened_by_several_processes_at_once_gets_the_schema_once(
    target: str, new_targets: list[str]
) -> None:
    """Processes started together on one new database (cluster nodes on one file, docs/cluster.md) all open it, and
    it gets the same schema as a database one process opened alone."""
    open_store(target).close()  # the reference, opened alone
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(RACERS), context.Queue()
    racers = [context.Process(target=open_together, args=(new_targets, start, results)) for _ in range(RACERS)]
    for racer in racers:
        racer.start()
    try:
        failed = [why for why in (results.get(timeout=HANG_GUARD_S) for _ in range(RACERS * RACE_ROUNDS)) if why]
    finally:
        for racer in racers:
            racer.join(HANG_GUARD_S)
    assert failed == []
    assert [schema(new) for new in new_targets] == [schema(target)] * RACE_ROUNDS


# -- PostgreSQL only ------------------------------------------------------------------------------------------


def wait_until(condition: Callable[[], bool]) -> None:
    """Wait for `condition` (polled), failing after HANG_GUARD_S."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not condition():
        if time.monotonic() > deadline:  # a hang guard, not a speed check
            pytest.fail(f"condition not reached within the {HANG_GUARD_S} s hang guard")
        time.sleep(0.01)


def waiting_for_a_lock(url: str) -> bool:
    """Whether some session of the database is waiting for a row lock now."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    return row is not None and row[0] > 0


def test_postgres_a_batch_waiting_on_a_claim_in_progress_is_fenced_after_it(pg_url: str) -> None:
    """A fenced write that meets an uncommitted claim waits for it, then is refused whole (nothing written)."""
    import psycopg

    store = open_store(pg_url)
    store.write([room("ROOM1"), room("ROOM2")])
    outcome: list[BaseException | None] = []
    with psycopg.connect(pg_url) as claimer:  # a claim in progress: the epoch raised, not yet committed
        claimer.execute("UPDATE rooms SET owner_epoch = owner_epoch + 1 WHERE code = 'ROOM1'")

        def old_owner_writes() -> None:
            try:
                store.write([MoveRecorded("ROOM2", 0, 0, "f5"), MoveRecorded("ROOM1", 0, 0, "f5")], fences={"ROOM1": 0})
                outcome.append(None)
            except BaseException as exc:
                outcome.append(exc)

        writer = threading.Thread(target=old_owner_writes)
        writer.start()
        wait_until(lambda: waiting_for_a_lock(pg_url))
        assert outcome == []
        claimer.commit()
    writer.join(HANG_GUARD_S)
    assert len(outcome) == 1 and isinstance(outcome[0], Fenced) and outcome[0].current == 1
    assert [r.moves for r in store.unfinished_rooms()] == [[], []]
    store.close()


def test_postgres_a_claim_waits_for_the_old_owners_batch_in_flight(pg_url: str) -> None:
    """A claim that meets a batch holding the room's row lock waits for its commit; that batch's moves are kept."""
    import psycopg

    store = open_store(pg_url)
    store.write([room("ROOM1")])
    claimed: list[int | None] = []
    with psycopg.connect(pg_url) as writer:  # the old owner's batch, between its fence check and its commit
        writer.execute("SELECT owner_epoch FROM rooms WHERE code = 'ROOM1' FOR UPDATE")
        writer.execute("INSERT INTO moves (room, game_no, ply, move, at) VALUES ('ROOM1', 0, 0, 'f5', 0)")
        claimer = threading.Thread(target=lambda: claimed.append(store.claim_room("ROOM1")))
        claimer.start()
        wait_until(lambda: waiting_for_a_lock(pg_url))
        assert claimed == []
        writer.commit()
    claimer.join(HANG_GUARD_S)
    assert claimed == [1]
    restored = store.open_room("ROOM1")
    assert restored is not None and restored.moves == ["f5"]
    store.close()


def test_postgres_a_lost_connection_fails_one_write_and_the_next_reconnects(pg_url: str) -> None:
    """When the database drops the connection, the write in flight raises StoreError; the next write succeeds."""
    import psycopg

    store = open_store(pg_url)
    store.write([room("ROOM1"), MoveRecorded("ROOM1", 0, 0, "f5")])
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    with pytest.raises(StoreError) as failed:
        store.write([MoveRecorded("ROOM1", 0, 1, "d6")])
    assert "\n" not in str(failed.value)
    store.write([MoveRecorded("ROOM1", 0, 1, "c5")])
    restored = store.open_room("ROOM1")
    assert restored is not None and restored.moves == ["f5", "c5"]
    store.close()


def test_postgres_errors_are_one_line_and_hide_the_password(pg_server: PgServer, pg_url: str) -> None:
    """A wrong password, an unreachable server and a bad URL each fail with one line that does not show the password."""
    from tests.pg import PASSWORD, free_port

    cases = {
        pg_url.replace(PASSWORD, "wrong-secret"): "password authentication failed",
        f"postgresql://postgres:{PASSWORD}@127.0.0.1:{free_port()}/x": "refused",
        f"postgresql://postgres:{PASSWORD}@127.0.0.1:{pg_server.port}/nosuchdb": "does not exist",
        f"postgres://post gres:{PASSWORD}@127.0.0.1/x": "bad database URL",
    }
    for url, reason in cases.items():
        with pytest.raises(StoreError, match=reason) as refused:
            open_store(url)
        message = str(refused.value)
        assert "\n" not in message and PASSWORD not in message and "wrong-secret" not in message, message


def test_postgres_nodes_starting_together_create_the_schema_once(pg_url: str) -> None:
    """Several processes opening a new database at once all get the schema (the migration is locked)."""
    errors: list[BaseException] = []
    opened: list[StoreBackend] = []

    def start() -> None:
        try:
            opened.append(open_store(pg_url))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_GUARD_S)
    assert errors == [] and len(opened) == 4
    opened[0].write([room("ROOM1")])
    assert [r.code for r in opened[3].unfinished_rooms()] == ["ROOM1"]
    for store in opened:
        store.close()


def test_the_default_sqlite_server_does_not_load_psycopg(tmp_path: Path) -> None:
    """psycopg is imported only for a postgresql:// --db: a server on SQLite runs without the cluster extra."""
    code = (
        "import sys; import gamenight.server.__main__, gamenight.server.app;"
        "from gamenight.server.store import open_store;"
        f"open_store({str(tmp_path / 'g.db')!r}).close(); print('psycopg' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_postgres_schema_has_the_tables_columns_and_indexes_of_sqlites(pg_url: str, tmp_path: Path) -> None:
    """A new PostgreSQL database gets the current version and the same tables, columns and indexes as SQLite's."""
    import psycopg

    from gamenight.server.store_pg import PG_SCHEMA_VERSION, PgStore

    store = open_store(pg_url)
    assert isinstance(store, PgStore) and store.schema_version() == PG_SCHEMA_VERSION
    store.close()
    lite = open_store(str(tmp_path / "g.db"))
    lite.close()
    db = sqlite3.connect(tmp_path / "g.db")
    tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'") if t != "sqlite_sequence"]
    lite_columns = {t: {c[1] for c in db.execute(f"PRAGMA table_info({t})")} for t in tables}
    lite_indexes = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    db.close()
    with psycopg.connect(pg_url) as conn:
        pg_columns: dict[str, set[str]] = {}
        for table, column in conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
        ):
            pg_columns.setdefault(table, set()).add(column)
        pg_indexes = {n for (n,) in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")}
    assert pg_columns.pop("gamenight_schema") == {"version"}
    assert pg_columns == lite_columns
    assert {n for n in lite_indexes if not n.startswith("sqlite_autoindex")} == {
        n for n in pg_indexes if not n.endswith("_pkey")
    }


def test_postgres_new_and_upgraded_databases_get_the_schema_gamenight_made_before(
    pg_server: PgServer, pg_url: str
) -> None:
    """A new PostgreSQL database, and ones of schema 1 and 2 upgraded, get exactly the same version, tables, columns,
    types, defaults and indexes, those of the earlier store (tests/data/store_pg_v2.sql) with the review's table
    (migration 2), moderation's (migration 3), the names' public key (migration 4) and the tournament games' table
    (migration 5) added: nodes of either release share one."""
    import psycopg

    script = OLD_PG.read_text()
    reference, upgraded = pg_server.new_database(), pg_server.new_database()
    try:
        with psycopg.connect(reference, autocommit=True) as conn:
            conn.execute(script)
        with psycopg.connect(upgraded, autocommit=True) as conn:
            conn.execute(script.split("-- version 2")[0])
        before = schema(reference)
        for target in (pg_url, reference, upgraded):
            open_store(target).close()
        assert schema(pg_url) == schema(reference) == schema(upgraded)
        tables = {"analyses", "admins", "sanctions", "voided_games", "audit"}  # migrations 2 (review), 3 (moderation)
        tables.add("tournament_games")  # migration 5: a tournament's games as rows of their own
        added = [row for row in schema(reference)[1] if row[0] in tables or row[:2] == ("names", "public_key")]
        assert [row for row in schema(reference)[1] if row not in added] == before[1] and before[0] == [(2,)]
        assert ("names", "public_key", "text", None, "YES") in added  # migration 4 (identity by signature)
    finally:
        pg_server.drop_database(reference)
        pg_server.drop_database(upgraded)
