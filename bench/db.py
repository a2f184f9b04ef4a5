"""How much a stored move costs the event loop: the store write the server makes before each broadcast.

    python bench/db.py [--moves 5000] [--repeat 3] [--batch 1] [--fenced] [--backends sqlite,postgresql] [--pg URL]
                       [--no-fsync] [--async-commit]

Writes MoveRecorded batches (`--batch` moves per transaction; 1 is one move per loop turn, as under light load)
to each backend and prints the median microseconds per batch commit with p99, and the implied moves per second:
SQLite on a WAL file in a temporary folder, and PostgreSQL (`--pg URL`, or else a temporary server started as the
tests start one, tests/pg.py: initdb, loopback TCP, fsync on unless --no-fsync). `--fenced` passes each batch's
rooms as fences (the cluster path: the rows are locked FOR UPDATE in the transaction). The backends alternate
run by run, so their ratio is measured under the same load; each figure is the median of `--repeat` runs.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gamenight.server.records import MoveRecorded, RoomClosed, RoomSaved, StoreBackend
from gamenight.server.store import open_store

ROOMS = 100


def run(store: StoreBackend, moves: int, batch: int, fenced: bool) -> list[float]:
    """Write `moves` moves in transactions of `batch`; return each commit's duration in microseconds."""
    prefix = secrets.token_hex(3).upper()  # a shared database may hold an earlier run's rooms
    codes = [f"B{prefix}{i}" for i in range(ROOMS)]
    store.write([RoomSaved(code, "othello", {}, {}, "x", False) for code in codes])
    times = []
    for start in range(0, moves, batch):
        records = [MoveRecorded(codes[n % ROOMS], 0, n // ROOMS, "d3") for n in range(start, min(moves, start + batch))]
        fences = {record.code: 0 for record in records} if fenced else None
        began = time.perf_counter()
        store.write(list(records), fences=fences)
        times.append((time.perf_counter() - began) * 1e6)
    store.write([RoomClosed(code) for code in codes])
    store.purge_closed(time.time() + 1)
    return times


@contextmanager
def sqlite_target() -> Iterator[Callable[[], str]]:
    """A new SQLite file per run, in a temporary folder."""
    with tempfile.TemporaryDirectory() as folder:
        runs = iter(range(1_000_000))
        yield lambda: str(Path(folder) / f"bench{next(runs)}.db")


@contextmanager
def pg_target(url: str | None, fsync: bool, needed: bool, async_commit: bool) -> Iterator[Callable[[], str]]:
    """The given PostgreSQL database, or a new database per run on a temporary server."""
    if url is not None or not needed:
        yield lambda: url or ""
        return
    from tests.pg import PgServer, find_bin_dir

    bin_dir = find_bin_dir()
    if bin_dir is None:
        sys.exit("bench/db.py: no initdb/postgres found; pass --pg URL or --backends sqlite")
    server = PgServer(bin_dir, fsync=fsync).start()
    query = "?options=-c%20synchronous_commit%3Doff" if async_commit else ""
    try:
        yield lambda: server.new_database() + query
    finally:
        server.stop()


def main() -> None:
    """Print the median and p99 cost per batch commit for each backend, and their ratio."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--moves", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch", type=int, default=1, help="moves per transaction (default 1)")
    parser.add_argument("--fenced", action="store_true", help="fence every batch's rooms (the cluster path)")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--pg", default=None, help="a PostgreSQL URL to use instead of a temporary server")
    parser.add_argument("--no-fsync", action="store_true", help="the temporary PostgreSQL runs with fsync=off")
    parser.add_argument(
        "--async-commit",
        action="store_true",
        help="the store sets synchronous_commit=off (in its URL: ?options=-c%%20synchronous_commit%%3Doff)",
    )
    args = parser.parse_args()
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    medians: dict[str, list[float]] = {b: [] for b in backends}
    p99s: dict[str, list[float]] = {b: [] for b in backends}
    with (
        sqlite_target() as sqlite_next,
        pg_target(args.pg, not args.no_fsync, "postgresql" in backends, args.async_commit) as pg_next,
    ):
        targets = {"sqlite": sqlite_next, "postgresql": pg_next}
        for _ in range(args.repeat):
            for backend in backends:  # alternating: both backends see the same load
                store = open_store(targets[backend]())
                try:
                    times = sorted(run(store, args.moves, args.batch, args.fenced))
                finally:
                    store.close()
                medians[backend].append(statistics.median(times))
                p99s[backend].append(times[int(0.99 * len(times))])
    mode = (
        f"batches of {args.batch}"
        + (", fenced" if args.fenced else "")
        + (", async commit" if args.async_commit else "")
    )
    for backend in backends:
        median = statistics.median(medians[backend])
        print(
            f"{backend:10s} stored batch ({mode}): median {median:.1f} us, p99 {statistics.median(p99s[backend]):.1f}"
            f" us (median of {args.repeat} runs of {args.moves} moves); ~{args.batch * 1e6 / median:,.0f} moves/s"
        )
    if len(backends) == 2:
        a, b = (statistics.median(medians[x]) for x in backends)
        print(f"{backends[1]} / {backends[0]}: {b / a:.1f}x the median commit latency")


if __name__ == "__main__":
    main()
