"""The client's model: lobby bookkeeping, option summaries, room plans, results, and the local boards' helpers."""

from __future__ import annotations

import random

from gamenight.client.model import (
    AI,
    BOT,
    ME,
    OPEN,
    Lobby,
    RoomPlan,
    RoomSession,
    SeatPlan,
    describe_event,
    describe_result,
    headline,
    options_summary,
    quick_game_plan,
)
from gamenight.client.widgets.pentago import QUADRANTS, turn_rows, turned_cell
from gamenight.client.widgets.tron import TronGrid
from gamenight.protocol.messages import AddAi, Event, Join, RoomInfo, State
from gamenight.protocol.vocab import GameDescription, Result, Role, RoomStatus, RoomSummary
from gamenight.server.games.othello import Othello
from gamenight.server.games.pentago import Pentago, parse_notation
from gamenight.server.games.tron import EAST, NORTH, SOUTH, WEST, Tron
from tests.client.recorded import OTHELLO_REASONS, game_plain, room_info, seat, wire


def _info(code: str, status: str = "waiting", **options) -> RoomSummary:
    """A room summary with two seats, as a `room` message carries it."""
    seats = [seat(0, "black", "human", "ann"), seat(1, "white")]
    message = room_info(code, status=status, seats=seats, options=options)
    assert isinstance(message, RoomInfo)
    return message.summary


def _games(*games, **extra) -> list[GameDescription]:
    """The games' descriptions as the welcome brings them."""
    return [GameDescription.from_plain(game_plain(g, **extra.get(g.name, {}))) for g in games]


def test_lobby_follows_pushed_rooms():
    """Pushed `room` messages add and change rooms; status "closed" removes the row."""
    lobby = Lobby()
    lobby.update(_info("AAAAA"))
    lobby.update(_info("BBBBB"))
    lobby.update(_info("AAAAA", status="playing"))
    assert lobby.rooms["AAAAA"].status == "playing" and set(lobby.rooms) == {"AAAAA", "BBBBB"}
    lobby.update(_info("BBBBB", status="closed"))
    assert set(lobby.rooms) == {"AAAAA"}


def test_options_summary_shows_only_changes():
    """The lobby shows options that differ from their defaults by their labels (never the server-drawn seed)."""
    lobby = Lobby()
    lobby.set_games(_games(Othello(), Tron()))
    lobby.update(_info("AAAAA", size=10, first="black", ai_ms=1000))
    assert options_summary(lobby.rooms["AAAAA"], lobby.games["othello"]) == "Board size 10"
    lobby.update(room_info("T", game="tron", options={"players": 3, "seed": 99, "tick_ms": 150}, seats=[]).summary)
    assert options_summary(lobby.rooms["T"], lobby.games["tron"]) == "Riders 3"


def test_seat_count_follows_the_players_option():
    """The create form offers one seat per player of Tron, two for the others."""
    lobby = Lobby()
    lobby.set_games(_games(Othello(), Tron()))
    assert lobby.games["othello"].seat_count({}) == 2
    assert lobby.games["tron"].seat_count({"players": 4}) == 4


def test_plan_joins_before_seating_ais():
    """Creating a room sits me down first, then seats each AI or bot in its own seat."""
    plan = RoomPlan(
        "tron", {}, False, (SeatPlan(AI, level=2), SeatPlan(ME), SeatPlan(BOT, bot="chaser"), SeatPlan(OPEN))
    )
    assert plan.follow_up("ROOM1") == [
        Join(room="ROOM1", role=Role.PLAYER, seat=1),
        AddAi(room="ROOM1", seat=0, level=2),
        AddAi(room="ROOM1", seat=2, bot="chaser"),
    ]
    watching = RoomPlan("othello", {}, False, (SeatPlan(AI, level=1), SeatPlan(AI, level=5)))
    assert watching.follow_up("R")[0] == Join(room="R", role=Role.SPECTATOR)


def test_quick_game_is_me_against_level_three():
    """The `n` fast path: default Othello, me first, AI level 3 second."""
    assert quick_game_plan().follow_up("R") == [
        Join(room="R", role=Role.PLAYER, seat=0),
        AddAi(room="R", seat=1, level=3),
    ]


def test_result_lines():
    """Results name the winner, the score and why (in the game's words); resignations say who resigned."""
    (othello,) = _games(Othello(), othello={"reasons": OTHELLO_REASONS})
    session = RoomSession("R", Role.PLAYER, 0, description=othello)
    session.summary = Lobby().update(_info("R"))
    assert describe_result(Result.of((0,), "discs", (40, 24)), session) == "black (you) wins 40-24 (most discs)"
    assert describe_result(Result.of((), "discs", (32, 32)), session) == "Draw 32-32: equal discs"
    assert describe_result(Result.of((1,), "resign", loser=0), session) == "black (you) resigned; white wins"
    assert headline(Result.of((1,), "resign"), session) == "You lost"
    assert headline(Result.of((0, 1), "crash"), session) == "Shared win"


def test_rematch_counts_as_a_new_game_but_a_resumed_pause_does_not():
    """A state after "finished" starts a new game; one after "paused" does not, but it counts down again."""
    session = RoomSession("R", Role.PLAYER, 0)

    def state(status: str, seq: int, tick: int = 5) -> State:
        return State(room="R", seq=seq, game="tron", status=RoomStatus(status), view={"tick": tick}, next_tick_ms=3000)

    assert session.apply_state(state("playing", 1, tick=0)) and session.countdown_ms == 3000
    assert not session.apply_state(state("paused", 2))
    assert not session.apply_state(state("playing", 3)) and session.countdown_ms == 3000
    assert session.apply_state(state("finished", 4)) is False
    assert session.apply_state(state("playing", 5, tick=0)) and session.games_started == 2


def test_pentago_preview_turns_like_the_server():
    """The client's turn preview matches the server's rules for every quadrant and direction."""
    game = Pentago()
    rng = random.Random(3)
    for _ in range(40):
        state = game.initial_state({})
        for _ in range(rng.randrange(2, 12)):
            if game.outcome(state) is not None:
                break
            state = game.apply(state, {state.turn: rng.choice(game.legal_moves(state, state.turn))})
        if game.outcome(state) is not None:
            continue
        rows = game.view(state)["board"]
        cell = next(c for c in range(36) if rows[c // 6][c % 6] == ".")
        for quadrant in QUADRANTS:
            for direction in ("cw", "ccw"):
                name = "abcdef"[cell % 6] + str(cell // 6 + 1)
                move = parse_notation(f"{name} {quadrant} {direction}")
                if move not in game.legal_moves(state, state.turn):
                    continue
                after = game.view(game.apply(state, {state.turn: move}))["board"]
                placed = [
                    r if i != cell // 6 else r[: cell % 6] + "BW"[state.turn] + r[cell % 6 + 1 :]
                    for i, r in enumerate(rows)
                ]
                q = QUADRANTS.index(quadrant)
                assert turn_rows(placed, q, direction == "cw") == after
                row, col = turned_cell(cell // 6, cell % 6, q, direction == "cw")
                assert after[row][col] == "BW"[state.turn]


def test_tron_grid_follows_deltas_like_full_states():
    """Applying tick deltas to the client's grid gives the same arena as the full state would."""
    game = Tron()
    state = game.initial_state(game.validate_options({"width": 16, "height": 12, "seed": 7}))
    grid = TronGrid.from_view(game.view(state))
    for joint in ((WEST, EAST), (WEST, EAST), (SOUTH, NORTH), (SOUTH, NORTH), (WEST, EAST)):
        after = game.apply(state, dict(enumerate(joint)))
        changed = grid.apply(game.delta(state, after))
        assert changed and all(0 <= x < grid.width and 0 <= y < grid.height for x, y in changed)
        state = after
    full = TronGrid.from_view(game.view(state))
    assert grid.cells == full.cells and grid.heads == full.heads and grid.dirs == [WEST, EAST]


def test_a_rider_who_drops_out_is_named_in_the_log():
    """In multi-rider Tron a resignation or forfeit gets a log line saying that rider drops out."""
    session = RoomSession("R", Role.SPECTATOR, None)
    resigned = wire("event", room="R", kind="retired", seq=3, data={"seat": 1, "reason": "resign"})
    forfeited = wire("event", room="R", kind="retired", seq=4, data={"seat": 2, "reason": "forfeit"})
    assert isinstance(resigned, Event) and isinstance(forfeited, Event)
    assert describe_event(resigned, session) == "seat 2 resigns and drops out"
    assert describe_event(forfeited, session) == "seat 3 forfeits and drops out"


def test_a_rated_game_against_your_own_bot_says_why_it_is_not_rated_in_the_log():
    """The server's `unrated` event at a rated game's start gets a log line with its reason, kept as it was written
    (the game screen's log draws every line as plain text, so a bot named like markup stays a name)."""
    session = RoomSession("R", Role.PLAYER, 0)
    reason = "[b]rhino plays from ann's address: a game against your own bot is not rated"
    unrated = wire("event", room="R", kind="unrated", seq=1, data={"reason": reason})
    assert isinstance(unrated, Event)
    assert describe_event(unrated, session) == "This game is not rated: " + reason
