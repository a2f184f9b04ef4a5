"""What one game end of a tournament costs in bytes stored, bytes pushed and CPU time, as the tournament grows
(issue 37).

    python bench/tournament_cost.py [--sizes 100,1000,10000] [--window 15]

Drives the server's real `TournamentHost` in a real `Lobby` (sans-I/O: no sockets, no AI worker, time from a
`ManualClock`): an arena of four AI levels, its game cap (`AI_ARENA_GAMES`) lifted to the largest size, watched by
one session. The host opens each game's room; the bench ends the oldest game at once (seat 0 or 1 wins, drawn from
a seeded generator) through `TournamentHost.finished`, as the lobby does when a game ends, which scores it, pairs
the free AIs again and opens their rooms. For each game end it counts:

- stored: the JSON the store writes for the outbox's `TournamentSaved` records (the header and each game row);
- pushed: the msgpack of every `tournament` / `tournament_update` in the outbox, once per session it goes to;
- CPU: the process time `TournamentHost.finished` took (scoring, storing, pushing, the sweep that pairs and opens
  the next games), in microseconds.

"old" is what the code before game rows and updates wrote and sent for the same game end: the whole state
(`Tournament.plain()`, still there) once per record, and the whole `tournament` message (`TournamentHost.info`)
once per recipient of a push (measured outside the CPU time). Printed: the medians over the `--window` game ends
that end at each size.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gamenight.protocol import PROTOCOL_VERSION, encode  # noqa: E402
from gamenight.protocol.messages import CreateTournament, Hello, TournamentInfo, TournamentUpdate  # noqa: E402
from gamenight.protocol.vocab import Result  # noqa: E402
from gamenight.server import tournament_host  # noqa: E402
from gamenight.server.lobby import Lobby  # noqa: E402
from gamenight.server.outbox import Outbox  # noqa: E402
from gamenight.server.records import TournamentSaved  # noqa: E402
from gamenight.server.tournament_host import Tournament  # noqa: E402
from tests.manual_clock import ManualClock  # noqa: E402

ENTRANTS = ["AI level 1", "AI level 2", "AI level 3", "AI level 4"]
OPTIONS = {"ai_ms": 50, "ai_pace_ms": 0}


@dataclass(frozen=True, slots=True)
class Cost:
    """One game end's bytes: stored and pushed now, and what the old code stored and pushed for it; its CPU time."""

    games: int  # games the tournament has after it
    stored: int
    pushed: int
    old_stored: int
    old_pushed: int
    cpu_us: int  # process time of `TournamentHost.finished`, microseconds


def stored_bytes(out: Outbox) -> int:
    """The JSON the store writes for the outbox's tournament records (header and game rows)."""
    records = [r for r in out.records if isinstance(r, TournamentSaved)]
    return sum(len(json.dumps(r.data)) + sum(len(json.dumps(g)) for _, g in r.games) for r in records)


def pushed_bytes(out: Outbox) -> int:
    """The msgpack of the outbox's tournament pushes, once per session each goes to."""
    return sum(
        len(encode(s.message)) * len(s.to)
        for s in out.sends
        if isinstance(s.message, TournamentInfo | TournamentUpdate)
    )


def old_bytes(host: tournament_host.TournamentHost, t: Tournament, out: Outbox) -> tuple[int, int]:
    """What the old code stored (the whole state per record) and pushed (the whole tournament per recipient)."""
    records = sum(1 for r in out.records if isinstance(r, TournamentSaved))
    recipients = sum(len(s.to) for s in out.sends if isinstance(s.message, TournamentInfo | TournamentUpdate))
    return records * len(json.dumps(t.plain())), recipients * len(encode(host.info(t)))


class Arena:
    """A lobby running one arena of AIs, watched by one session, whose games the bench ends one by one."""

    def __init__(self, games: int, seed: int = 1) -> None:
        tournament_host.AI_ARENA_GAMES = games
        self.clock = ManualClock()
        self.lobby = Lobby()
        self.host = self.lobby.tournaments
        self.host.clock = self.clock.now  # the arena's end is far off whatever the bench's speed
        self.rng = random.Random(seed)
        self.records: list[TournamentSaved] = []  # every tournament record written, in order
        hello = Hello(protocol=PROTOCOL_VERSION, name="host")
        self.client, _ = self.lobby.sessions.open(hello, "127.0.0.1", Outbox())
        self.client.claimed = True  # (a claim is a key's signature of a connection's nonce: no connection here)
        request = CreateTournament(game="connect4", kind="arena", players=ENTRANTS, duration_s=1800, options=OPTIONS)
        out = self.host.create(self.client, request, self.clock.now())
        self.keep(out)
        (self.t,) = self.host.tournaments.values()

    def keep(self, out: Outbox) -> None:
        """Keep the outbox's tournament records (what a store would have been handed)."""
        self.records.extend(r for r in out.records if isinstance(r, TournamentSaved))

    def end_one(self, measure_old: bool) -> Cost | None:
        """End the oldest game in progress (None once the arena is over) and count what that cost."""
        if not self.host.by_room:
            return None
        code = next(iter(self.host.by_room))
        room = self.lobby.directory.rooms[code]
        winner = self.rng.randrange(2)
        self.clock.advance(0.1)  # 10,000 games in 1,000 s: within the arena's 1,800
        result = Result(winners=(winner,), reason="resign", winner=winner)
        started = time.process_time()
        out = self.host.finished(room, result, self.clock.now())
        cpu_us = round((time.process_time() - started) * 1e6)
        self.lobby.directory.rooms.pop(code)  # the room is done with (only its code is kept, in the game)
        self.keep(out)
        old = old_bytes(self.host, self.t, out) if measure_old else (0, 0)
        return Cost(len(self.t.games), stored_bytes(out), pushed_bytes(out), *old, cpu_us)


def costs(sizes: list[int], window: int, seed: int = 1) -> dict[int, list[Cost]]:
    """The costs of the `window` game ends up to each size, in one arena run to the largest."""
    arena = Arena(max(sizes), seed)
    found: dict[int, list[Cost]] = {size: [] for size in sizes}
    ended = 0
    while ended < max(sizes):
        sampled = [size for size in sizes if size - window < ended + 1 <= size]
        cost = arena.end_one(measure_old=bool(sampled))
        if cost is None:
            break
        ended += 1
        for size in sampled:
            found[size].append(cost)
    return found


def median(values: list[int]) -> int:
    """The median, rounded to a unit (a byte, a microsecond)."""
    return round(statistics.median(values)) if values else 0


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, run the arena, print a line per size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000", help="game counts to report at (comma-separated)")
    parser.add_argument("--window", type=int, default=15, help="game ends per size the medians are taken over")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    for size, found in costs(sizes, args.window).items():
        line: dict[str, Any] = {
            "stored": median([c.stored for c in found]),
            "pushed": median([c.pushed for c in found]),
            "old_stored": median([c.old_stored for c in found]),
            "old_pushed": median([c.old_pushed for c in found]),
            "cpu_us": median([c.cpu_us for c in found]),
        }
        print(
            f"{size} games: per game end stored {line['stored']} B, pushed {line['pushed']} B"
            f" (old: stored {line['old_stored']} B, pushed {line['old_pushed']} B), CPU {line['cpu_us']} us;"
            f" medians of {len(found)}"
        )


if __name__ == "__main__":
    main()
