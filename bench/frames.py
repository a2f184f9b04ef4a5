"""Frames and bytes per move per member, without sockets: random games played through the server's own lobby.

    python bench/frames.py [othello pentago connect4 ...]

Two players and a spectator sit in a room of each game named; every move of 20 seeded random games is sent
through `Lobby.handle` and the frames it addresses to each member (lobby `room` pushes left out) are encoded
with the protocol's codec and counted: "mover" is the seat that just moved, "other" the seat that moves next,
"spectator" a watcher. The same script runs against older trees (it uses only the lobby and the codec), which is
how docs/performance.md compares protocol 1 with protocol 2. No timing: the figures are exact for the seed.
"""

from __future__ import annotations

import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gamenight.protocol import PROTOCOL_VERSION, encode
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


if __name__ == "__main__":
    for name in sys.argv[1:] or ["othello", "pentago", "connect4"]:
        run(name)
