"""The client state as a reducer, driven by recorded server message sequences (no Textual, no server)."""

from __future__ import annotations

from gamenight.client.model import describe_result
from gamenight.client.state import ClientState
from gamenight.protocol.messages import GameRecord, Games, ListGames, Sync
from gamenight.protocol.vocab import Result, Role, RoomStatus
from tests.client.recorded import (
    OTHELLO_REASONS,
    games,
    othello_moved,
    othello_state,
    room,
    room_info,
    seat,
    welcome,
    wire,
)

CODE = "K7QXM"


def play(state: ClientState, messages) -> list:
    """Apply each message in order; the Changes of each."""
    return [state.apply(m) for m in messages]


def seated_othello(reasons: bool = True) -> tuple[ClientState, list]:
    """A recorded game: welcome, my room created, joined as black, the AI seated, its start, my move, the
    AI's move with its search figures, then black wins on discs."""
    state = ClientState("ann")
    game_list = games(othello={"reasons": OTHELLO_REASONS}) if reasons else games()
    seated = [seat(0, "black", "human", "ann"), seat(1, "white", "ai", "AI level 3", level=3)]
    changes = play(
        state,
        [
            welcome(game_list=game_list),
            room_info(CODE),
            wire("joined", room=CODE, **{"as": "player"}, seat=0, id=2),
            room_info(CODE, status="playing", seats=seated),
            othello_state(CODE, 1, []),
            othello_moved(CODE, 2, ["f5"], mine=False),
            othello_moved(CODE, 3, ["f5", "d6"], ai={"depth": 6, "nodes": 9}),
            othello_state(
                CODE,
                4,
                ["f5", "d6"],
                to_move=None,
                status="finished",
                result={"winners": [0], "winner": 0, "reason": "discs", "scores": [40, 24], "loser": 0},
                events=[
                    {
                        "kind": "game_over",
                        "data": {"winners": [0], "winner": 0, "reason": "discs", "scores": [40, 24]},
                    }
                ],
            ),
        ],
    )
    return state, changes


def test_a_recorded_game_builds_the_lobby_the_room_and_its_log():
    """Welcome, room, joined, states and moves leave the state a player sees: the room, its seat,
    the latest position, the AI's figures, and a log that ends with the result in the game's words."""
    state, changes = seated_othello()
    assert set(state.lobby.games) == {"othello", "pentago", "tron"} and CODE in state.lobby.rooms
    room_ = state.room
    assert room_ is not None and room_.code == CODE and room_.role == Role.PLAYER and room_.seat == 0
    assert room_.state is not None and room_.state.moves == ["f5", "d6"] and room_.seq == 4
    assert room_.ai_info[1] == {"depth": 6, "nodes": 9} and room_.last_ai_seat == 1
    assert [line.text for line in room_.log] == ["Game over: black (you) wins 40-24 (most discs)"]
    assert changes[0].lobby and changes[0].token == "token-1"
    assert changes[2].entered is room_  # joined: the app opens the room's screen
    assert changes[4].board and changes[6].board
    assert changes[-1].result == Result.of((0,), "discs", (40, 24)) and changes[-1].log


def _two_moves_in(messages_after_start) -> ClientState:
    """A client seated as black in an Othello room whose game started, then `messages_after_start`."""
    state = ClientState("ann")
    play(
        state,
        [
            welcome(),
            room_info(CODE),
            wire("joined", room=CODE, **{"as": "player"}, seat=0, id=2),
            othello_state(CODE, 1, []),
            *messages_after_start,
        ],
    )
    return state


def test_moved_messages_fold_into_the_full_state_a_snapshot_would_give():
    """Two `moved`s leave the room's state equal to the server's full state after them (view, legal, moves)."""
    state = _two_moves_in([othello_moved(CODE, 2, ["f5"], mine=False), othello_moved(CODE, 3, ["f5", "d6"])])
    snapshot = othello_state(CODE, 3, ["f5", "d6"])
    room_ = state.room
    assert room_ is not None and room_.state is not None and room_.seq == 3
    for name in ("seq", "view", "to_move", "legal", "moves", "last_move", "status"):
        assert getattr(room_.state, name) == getattr(snapshot, name), name


def test_a_moved_that_skips_ahead_asks_for_a_sync():
    """A `moved` whose seq is not the next one is not folded: the client asks for the full state once."""
    state = ClientState("ann")
    changes = play(
        state,
        [
            welcome(),
            room_info(CODE),
            wire("joined", room=CODE, **{"as": "player"}, seat=0, id=2),
            othello_state(CODE, 1, []),
            othello_moved(CODE, 3, ["f5", "d6"]),
            othello_moved(CODE, 4, ["f5", "d6", "c3"], mine=False),
        ],
    )
    assert [type(r) for r in changes[-2].requests] == [Sync] and changes[-2].requests[0].seq == 1
    assert not changes[-1].requests, "one sync until its state arrives"
    assert state.room is not None and state.room.seq == 1 and state.room.state.moves == []


def test_result_reasons_come_from_the_game_and_fall_back_to_the_word():
    """A reason the game describes reads in its words (win and draw texts); an undescribed one shows as
    the raw word, since the client keeps no table of reasons."""
    described, _ = seated_othello(reasons=True)
    bare, _ = seated_othello(reasons=False)
    draw = Result.of((), "discs", (32, 32))
    assert describe_result(draw, described.room) == "Draw 32-32: equal discs"
    assert describe_result(draw, bare.room) == "Draw 32-32: discs"
    assert describe_result(Result.of((0,), "discs", (40, 24)), bare.room) == "black (you) wins 40-24 (discs)"
    resigned = Result.of((1,), "resign", loser=0)
    assert describe_result(resigned, described.room) == "black (you) resigned; white (AI level 3) wins"


def test_a_tick_that_skips_ahead_asks_for_a_sync():
    """A tick right after the state shown is handed on; one that skips ahead asks for a sync once."""
    state = ClientState("ann")
    tron_state = wire("state", room="T", seq=5, game="tron", status="playing", view={"tick": 3}, to_move=[0, 1])
    play(state, [welcome(), wire("joined", room="T", **{"as": "player"}, seat=0, id=1), tron_state])
    delta = {"tick": 4, "heads": [], "alive": []}
    next_tick = state.apply(wire("tick", room="T", seq=6, delta=delta))
    assert next_tick.tick is not None and state.room.seq == 6
    gap = state.apply(wire("tick", room="T", seq=9, delta=delta))
    assert gap.tick is None and gap.requests == [Sync(room="T", seq=6)] and state.room.syncing
    again = state.apply(wire("tick", room="T", seq=10, delta=delta))
    assert again.requests == []  # one sync is enough


def test_reconnect_welcome_restores_the_room():
    """A second welcome while in a room asks the app to get the room back; a new session loses host rights."""
    state = ClientState("ann")
    play(state, [welcome(), room_info(CODE)])
    state.created(state.lobby.rooms[CODE])
    play(state, [wire("joined", room=CODE, **{"as": "player"}, seat=0, id=3)])
    assert state.room.host
    assert state.apply(welcome(session="s1")).restore is True
    assert state.room.host
    assert state.apply(welcome(session="s2")).restore is False
    assert not state.room.host


def test_a_closed_room_takes_you_back_with_a_notice():
    """The `room` push saying "closed" ends your room: back to the lobby, with a notice; the row goes too."""
    state = ClientState("ann")
    play(state, [welcome([room(CODE)]), wire("joined", room=CODE, **{"as": "spectator"}, id=1)])
    changes = state.apply(room_info(CODE, status="closed"))
    assert changes.closed and state.room is None and CODE not in state.lobby.rooms
    assert [n.text for n in changes.notices] == [f"Room {CODE} was closed"]


def test_left_reply_closes_the_room():
    """The `left` reply to leaving takes you back to the lobby."""
    state = ClientState("ann")
    play(state, [welcome([room(CODE)]), wire("joined", room=CODE, **{"as": "player"}, seat=1, id=1)])
    assert state.apply(wire("left", room=CODE, id=2)).closed and state.room is None


def test_errors_become_notices_unless_quiet():
    """An error reply becomes a notice titled by its code, except a quiet one its requester handles."""
    state = ClientState("ann")
    error = wire("error", code="unknown_room", message="no room ZZZZZ", id=4)
    loud = state.apply(error)
    assert [(n.text, n.severity, n.title) for n in loud.notices] == [("no room ZZZZZ", "error", "unknown room")]
    assert state.apply(error, quiet=True).notices == []


def test_history_keeps_only_the_list_asked_for_last():
    """A `games` reply fills the history only if it answers the latest list_games; older ones are dropped."""
    state = ClientState("ann")
    entry = {
        "game_id": 7,
        "game": "othello",
        "finished_at": 0,
        "players": [{"seat": 0, "label": "black", "name": "ann", "ai": False}],
        "result": {"winners": [0], "winner": 0, "reason": "discs", "scores": [33, 31]},
    }
    state.asked_history(ListGames(limit=5), 1)
    state.asked_history(ListGames(game="othello", limit=5), 2)
    assert not state.apply(Games(games=[entry], id=1)).history and not state.history.loaded
    assert state.apply(Games(games=[entry], id=2)).history and state.history.loaded
    assert [e.game_id for e in state.history.entries] == [7]


def test_the_record_asked_for_opens_the_replay():
    """A `game` reply opens the replay only when it answers the get_game the history sent."""
    state = ClientState("ann")
    record = GameRecord(record={"game": "othello", "moves": []}, frames=[], id=3)
    assert state.apply(record).record is None
    state.asked_replay(3)
    assert state.apply(record).record is record


def test_a_replayed_finish_is_announced_once_the_sync_state_arrives():
    """After a reconnect, a game that ended while away is announced from the state the sync brings."""
    state, _ = seated_othello()
    state.room.apply_state(othello_state(CODE, 3, ["f5", "d6"]))  # back to playing, as before the drop
    assert state.syncing() == Sync(room=CODE, seq=3)
    finished = othello_state(
        CODE,
        5,
        ["f5", "d6"],
        to_move=None,
        status="finished",
        result={"winners": [1], "winner": 1, "reason": "forfeit", "loser": 0},
    )
    changes = state.apply(finished)
    assert changes.result is not None and changes.result.reason == "forfeit"
    assert state.room.status == RoomStatus.FINISHED


def test_a_pass_is_logged_and_announced():
    """A seat with no move passes: the log says who, and a notice tells it at once."""
    state, _ = seated_othello()
    state.room.apply_state(othello_state(CODE, 3, ["f5", "d6"]))
    changes = state.apply(wire("event", room=CODE, kind="pass", seq=5, data={"seat": 1}))
    assert state.room.log[-1].text == "white (AI level 3) has no move and passes"
    assert [n.text for n in changes.notices] == ["white (AI level 3) has no move and passes"] and changes.log


def test_chat_lines_go_to_the_log_once_even_when_replayed():
    """Chat is logged as "name: text"; the same event replayed by a sync is not logged twice."""
    state, _ = seated_othello()
    chat = wire("event", room=CODE, kind="chat", seq=3, data={"name": "bob", "text": "hi"})
    state.apply(chat)
    state.syncing()
    assert not state.apply(chat).log
    assert [line.text for line in state.room.log].count("bob: hi") == 1


def test_a_game_over_without_a_readable_result_is_still_logged():
    """A game_over event whose data is not a result logs "Game over" and announces nothing, rather than failing."""
    state, _ = seated_othello()
    state.room.apply_state(othello_state(CODE, 3, ["f5", "d6"]))
    changes = state.apply(wire("event", room=CODE, kind="game_over", seq=6, data={"why": "?"}))
    assert state.room.log[-1].text == "Game over" and changes.result is None


def test_recorded_othello_reasons_are_the_servers() -> None:
    """The reason texts the recorded games use are the ones the real server describes Othello with."""
    (othello, *_) = games(reasons=True)
    assert [{k: v for k, v in r.items() if v is not None} for r in othello["reasons"]] == OTHELLO_REASONS
