"""How much a stored move costs the event loop: the SQLite write the server makes before each broadcast.

    python bench/db.py [--moves 5000] [--repeat 5]

Writes MoveRecorded batches (one per move, as the server does: one transaction each) to a WAL database in a
temporary folder and prints the median microseconds per move, with p99 and the implied moves per second.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gamenight.server.store import MoveRecorded, RoomSaved, Store


def run(moves: int) -> list[float]:
    """Write `moves` single-move transactions; return each one's duration in microseconds."""
    with tempfile.TemporaryDirectory() as folder:
        store = Store(str(Path(folder) / "bench.db"))
        store.write([RoomSaved(f"R{i}", "othello", {}, {}, "x", False) for i in range(100)])
        times = []
        for ply in range(moves):
            record = MoveRecorded(f"R{ply % 100}", 1, ply // 100, "d3")
            start = time.perf_counter()
            store.write([record])
            times.append((time.perf_counter() - start) * 1e6)
        store.close()
    return times


def main() -> None:
    """Print the median and p99 cost per stored move over several runs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    medians, p99s = [], []
    for _ in range(args.repeat):
        times = sorted(run(args.moves))
        medians.append(statistics.median(times))
        p99s.append(times[int(0.99 * len(times))])
    median = statistics.median(medians)
    print(
        f"stored move: median {median:.1f} us, p99 {statistics.median(p99s):.1f} us "
        f"(median of {args.repeat} runs of {args.moves}); ~{1e6 / median:,.0f} moves/s on one core"
    )


if __name__ == "__main__":
    main()
