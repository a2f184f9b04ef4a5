"""A JSON-lines engine that plays the first legal move and writes what each turn gave it (its time, its clock, the
number of moves so far) to stderr, one line per turn, for tests to read from the bot's engine log.
`--sleep-ms N` makes it think N ms before every answer."""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    """Answer every turn on stdin with its first legal move."""
    sleep_ms = int(sys.argv[sys.argv.index("--sleep-ms") + 1]) if "--sleep-ms" in sys.argv else 0
    for line in sys.stdin:
        turn = json.loads(line)
        time.sleep(sleep_ms / 1000)
        print(
            json.dumps({"time_ms": turn["time_ms"], "clock_ms": turn["clock_ms"], "moves": len(turn["moves"])}),
            file=sys.stderr,
            flush=True,
        )
        print(turn["legal"][0], flush=True)


if __name__ == "__main__":
    main()
