"""Frames and bytes per move per member, without sockets: random games played through the server's own lobby.

    python bench/frames.py [othello pentago connect4 ...]
    python bench/frames.py --cpu [othello pentago connect4 ...]

Two players and a spectator sit in a room of each game named; every move of 20 seeded random games is sent
through `Lobby.handle` and the frames it addresses to each member (lobby `room` pushes left out) are encoded
with the protocol's codec and counted: "mover" is the seat that just moved, "other" the seat that moves next,
"spectator" a watcher. The same script runs against older trees (it uses only the lobby and the codec), which is
how docs/performance.md compares protocol 1 with protocol 2. No timing: the figures are exact for the seed.

`--cpu` measures instead the server's CPU time per move for reading the request, deciding it and encoding what
it sends (`decode` of the `move` frame, `Lobby.handle`, `encode` of each message; no sockets, no disk): the least
of 5 runs of 60 games, in process CPU time, so other work on the machine inflates it less than wall-clock figures.
To compare two trees, run this script with each tree's Python environment (it imports only `gamenight`).
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gamenight.protocol import PROTOCOL_VERSION, decode, encode
from gamenight.protocol.messages import CreateRoom, Hello, Join, MakeMove
from gamenight.server.lobby import Lobby


def run(game: str, games: int = 20) -> None:
    """Print the per-member figures of `games` random games of `game`."""
    rng = random.Random(1)
    frames: dict[str, list[int]] = {"mover": [], "other": [], "spectator": []}
    sizes: dict[str, list[int]] = {"mover": [], "other": [], "spectator": []}
    for _ in range(games):
        lobby = Lobby()
        s = [lobby.hello(Hello(protocol=PROTOCOL_VERSION, name=n), 0.0)[0].session for n in ("a", "b", "c")]
        out = lobby.handle(s[0], CreateRoom(game=game, id=1), 0.0)
        code = next(x.message for x in out.sends if x.message.id == 1).room  # type: ignore[attr-defined]
        lobby.handle(s[2], Join(room=code, role="spectator"), 0.0)
        lobby.handle(s[0], Join(room=code, seat=0), 0.0)
        lobby.handle(s[1], Join(room=code, seat=1), 0.0)
        room = lobby.rooms[code]
        while room.status == "playing":
            (seat,) = room.game.to_move(room.state)
            mover = s[seat]
            legal = room.game.legal_notation(room.state, seat)
            out = lobby.handle(mover, MakeMove(room=code, move=rng.choice(legal), seq=room.seq), 1.0)
            other = s[1 - seat]
            for who, sess in (("mover", mover), ("other", other), ("spectator", s[2])):
                msgs = [x.message for x in out.sends if sess in x.to and x.message.type != "room"]
                frames[who].append(len(msgs))
                sizes[who].append(sum(len(encode(m)) for m in msgs))
    for who in frames:
        print(
            f"{game} {who}: frames/move {statistics.mean(frames[who]):.2f}, bytes/move mean "
            f"{statistics.mean(sizes[who]):.0f} median {statistics.median(sizes[who]):.0f} max {max(sizes[who])}"
        )


def cpu_per_move(game: str, games: int = 60) -> float:
    """Microseconds of CPU per move spent decoding the request, in `Lobby.handle` and encoding its messages, over
    `games` random games."""
    rng = random.Random(2)
    spent, moves = 0.0, 0
    for _ in range(games):
        lobby = Lobby()
        sessions = [lobby.hello(Hello(protocol=PROTOCOL_VERSION, name=n), 0.0)[0].session for n in ("a", "b")]
        out = lobby.handle(sessions[0], CreateRoom(game=game, id=1), 0.0)
        code = next(x.message for x in out.sends if x.message.id == 1).room  # type: ignore[attr-defined]
        lobby.handle(sessions[0], Join(room=code, seat=0), 0.0)
        lobby.handle(sessions[1], Join(room=code, seat=1), 0.0)
        room = lobby.rooms[code]
        while room.status == "playing":
            (seat,) = room.game.to_move(room.state)
            move = rng.choice(room.game.legal_notation(room.state, seat))
            frame = encode(MakeMove(room=code, move=move, seq=room.seq, id=moves))
            started = time.process_time()
            out = lobby.handle(sessions[seat], decode(frame), 1.0)
            for send in out.sends:
                encode(send.message)
            spent += time.process_time() - started
            moves += 1
    return spent / moves * 1e6


if __name__ == "__main__":
    args = sys.argv[1:]
    names = [a for a in args if a != "--cpu"] or ["othello", "pentago", "connect4"]
    for name in names:
        if "--cpu" in args:
            print(f"{name}: {min(cpu_per_move(name) for _ in range(5)):.1f} us CPU per move (least of 5 runs)")
        else:
            run(name)
