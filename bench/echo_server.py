"""A bare websockets server that answers the load generator's frames like gamenight does, without the game.

    python bench/echo_server.py [--port 0] [--game othello] [--raw]

It is the baseline of `bench/load.py --baseline`: the same client code path, the same frames and the same
fan-out (every move is answered, as by protocol 2, with one `moved` of typical size to each player: the one to
move next gets the variant with `legal`), but no rules, rooms, lobby, rate limits or persistence. The frames
are built once per room from a real mid-game move, so each move costs only the library: one recv, one msgpack
parse (`protocol.codec.parse`), two writes. A game "ends" after a typical number of moves (one more `moved`,
then a final `state`) and restarts when both players ask for a rematch, as on the real server.

`--raw` is the baseline of `bench/load.py --raw-baseline`: one frame per round trip. Each move is answered
with one `moved` to its sender only, saying it is the sender's turn again, so every client plays on its own
at its own pace with the same client code: the most a websockets server and these clients can do.

Prints `echo-server listening on ws://HOST:PORT` as its first line, like `python -m gamenight.server`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

# Run from a checkout without installing: the repository root holds the `server` and `protocol` packages.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gamenight.protocol import MAX_FRAME, PROTOCOL_VERSION, encode
from gamenight.protocol.codec import parse
from gamenight.protocol.messages import Joined, Moved, RoomInfo, State, Welcome
from gamenight.protocol.vocab import EventNote
from gamenight.server.__main__ import until_signalled
from gamenight.server.games import GAMES

# Moves in a typical game of each turn-based game (random play), and the ply whose state is "typical":
# the state's move list grows through the game, so the middle one has the average size.
GAME_LENGTH = {"othello": 60, "pentago": 24}
SEATS = 2


@dataclass(frozen=True, slots=True)
class Typical:
    """A mid-game move of a game, as the pieces of a `state` and of a `moved` message."""

    game: str
    view: dict[str, Any]
    legal: list[str]
    moves: list[str]
    cells: list[list[Any]]
    changed: dict[str, Any]


def typical_position(game_name: str, seed: int = 1) -> Typical:
    """Play random moves to mid-game and keep what a `state` would carry there and what its last move changed."""
    game = GAMES[game_name]
    rng = random.Random(seed)
    state = game.initial_state(game.validate_options({}))
    moves: list[str] = []
    before = state
    while len(moves) < GAME_LENGTH[game_name] // 2:
        (seat,) = game.to_move(state)
        move = rng.choice(game.legal_moves(state, seat))
        moves.append(game.format_move(state, move))
        before, state = state, game.apply(state, {seat: move})
    (seat,) = game.to_move(state)
    legal = [game.format_move(state, m) for m in game.legal_moves(state, seat)]
    changes = game.changes(before, state)
    return Typical(game_name, game.view(state), legal, moves, changes.cells, changes.keys)


@dataclass(slots=True)
class EchoRoom:
    """A pair of connections and the frames they are sent, built once when the room opens."""

    code: str
    frames: dict[str, bytes]
    members: list[ServerConnection] = field(default_factory=list)
    played: int = 0
    votes: set[int] = field(default_factory=set)


def room_frames(code: str, typical: Typical) -> dict[str, bytes]:
    """Every frame a room sends: "start0"/"start1" (a game's first state, seat 0 to move, with `legal` for the
    seat it is sent to), "moved{seat}" (seat's move, to the mover), "next{seat}" (seat's move, to the other seat,
    with `legal`), "last{seat}" and "over"; in raw mode "solo{seat}" (the first state, seat to move) and
    "again{seat}" (seat's move, seat to move again)."""
    seq = len(typical.moves) + 1

    def moved(seat: int, to_move: list[int], legal: list[str], events: tuple[EventNote, ...] = ()) -> bytes:
        return encode(
            Moved(
                room=code,
                seq=seq,
                seat=seat,
                move=typical.moves[-1],
                cells=typical.cells,
                view=typical.changed,
                to_move=to_move,
                legal=legal,
                events=events,
            )
        )

    frames = {}
    for seat in range(SEATS):
        frames[f"start{seat}"] = encode(
            State(
                room=code,
                seq=1,
                game=typical.game,
                status="playing",
                view=typical.view,
                to_move=[0],
                legal=typical.legal if seat == 0 else [],
            )
        )
        frames[f"solo{seat}"] = encode(
            State(
                room=code,
                seq=1,
                game=typical.game,
                status="playing",
                view=typical.view,
                to_move=[seat],
                legal=typical.legal,
            )
        )
        frames[f"moved{seat}"] = moved(seat, [1 - seat], [])
        frames[f"next{seat}"] = moved(seat, [1 - seat], typical.legal)
        frames[f"again{seat}"] = moved(seat, [seat], typical.legal)
        frames[f"last{seat}"] = moved(seat, [], [], (EventNote("game_over", {"winners": [0], "reason": "end"}),))
    frames["over"] = encode(
        State(
            room=code,
            seq=seq,
            game=typical.game,
            status="finished",
            view=typical.view,
            last_move=typical.moves[-1],
            moves=typical.moves,
            result={"winners": [0], "reason": "end"},
        )
    )
    return frames


class EchoServer:
    """Routes each frame by its `type` only: hello, create_room, join, move and rematch are answered."""

    def __init__(self, typical: Typical, raw: bool = False) -> None:
        self.typical = typical
        self.raw = raw
        self.rooms: dict[str, EchoRoom] = {}
        self.room_of: dict[ServerConnection, EchoRoom] = {}
        self.codes = (f"E{n:04d}" for n in itertools.count())  # five characters, like real room codes

    async def handler(self, ws: ServerConnection) -> None:
        """One connection: answer every frame until it closes."""
        try:
            with contextlib.suppress(ConnectionClosed):  # a client gone without a close frame is no news here
                async for frame in ws:
                    self.receive(ws, parse(frame))
        finally:
            self.room_of.pop(ws, None)

    def receive(self, ws: ServerConnection, raw: dict[str, Any]) -> None:
        """Answer one parsed frame."""
        kind = raw.get("type")
        if kind == "move":
            self.move(ws)
        elif kind == "hello":
            broadcast(
                [ws],
                encode(Welcome(protocol=PROTOCOL_VERSION, session="echo", server="echo", games=[], id=raw.get("id"))),
            )
        elif kind == "create_room":
            self.create(ws, raw)
        elif kind == "join":
            self.join(ws, raw)
        elif kind == "rematch":
            self.rematch(ws)

    def create(self, ws: ServerConnection, raw: dict[str, Any]) -> None:
        """Open a room and reply with its summary."""
        code = next(self.codes)
        self.rooms[code] = EchoRoom(code, room_frames(code, self.typical))
        broadcast(
            [ws],
            encode(
                RoomInfo(
                    room=code,
                    game=self.typical.game,
                    options={},
                    seats=[],
                    spectators=0,
                    status="waiting",
                    id=raw.get("id"),
                )
            ),
        )

    def join(self, ws: ServerConnection, raw: dict[str, Any]) -> None:
        """Seat the connection; the second one starts the game."""
        room = self.rooms[raw["room"]]
        room.members.append(ws)
        self.room_of[ws] = room
        broadcast([ws], encode(Joined(room=room.code, role="player", seat=len(room.members) - 1, id=raw.get("id"))))
        if len(room.members) == SEATS:
            self.start(room)

    def start(self, room: EchoRoom) -> None:
        """A game's first state to each player (raw mode: every player to move, each on its own)."""
        for seat, member in enumerate(room.members):
            broadcast([member], room.frames[f"solo{seat}" if self.raw else f"start{seat}"])

    def move(self, ws: ServerConnection) -> None:
        """One `moved` to each player (raw mode: to the mover only, its turn again), the final state at the end."""
        room = self.room_of[ws]
        seat = room.members.index(ws)
        if self.raw:
            broadcast([ws], room.frames[f"again{seat}"])
            return
        room.played += 1
        if room.played >= GAME_LENGTH[self.typical.game]:
            broadcast(room.members, room.frames[f"last{seat}"])
            broadcast(room.members, room.frames["over"])
            return
        broadcast([ws], room.frames[f"moved{seat}"])
        broadcast([room.members[1 - seat]], room.frames[f"next{seat}"])

    def rematch(self, ws: ServerConnection) -> None:
        """Once both asked, rotate the seats and start again, as the real server does."""
        room = self.room_of[ws]
        room.votes.add(room.members.index(ws))
        if len(room.votes) == SEATS:
            room.members.reverse()
            room.played, room.votes = 0, set()
            self.start(room)


async def serve_until_signalled(host: str, port: int, game: str, raw: bool = False) -> None:
    """Serve until SIGINT/SIGTERM, printing the bound address first."""
    echo = EchoServer(typical_position(game), raw)
    # The same connection settings as the game server, so the library does the same work.
    async with serve(
        echo.handler, host, port, compression=None, max_size=MAX_FRAME, ping_interval=20.0, ping_timeout=20.0
    ) as server:
        bound = server.sockets[0].getsockname()[1]
        print(f"echo-server listening on ws://{host}:{bound}", flush=True)
        await until_signalled()


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--game", choices=sorted(GAME_LENGTH), default="othello")
    parser.add_argument("--raw", action="store_true", help="one frame per round trip: answer the mover only")
    args = parser.parse_args(argv)
    asyncio.run(serve_until_signalled(args.host, args.port, args.game, args.raw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
