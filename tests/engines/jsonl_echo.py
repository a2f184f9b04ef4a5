"""A JSON-lines engine that plays the first legal move and writes what each turn gave it (its time, its clock, the
number of moves so far) to stderr, one line per turn, for tests to read from the bot's engine log."""

from __future__ import annotations

import json
import sys


def main() -> None:
    """Answer every turn on stdin with its first legal move."""
    for line in sys.stdin:
        turn = json.loads(line)
        print(
            json.dumps({"time_ms": turn["time_ms"], "clock_ms": turn["clock_ms"], "moves": len(turn["moves"])}),
            file=sys.stderr,
            flush=True,
        )
        print(turn["legal"][0], flush=True)


if __name__ == "__main__":
    main()
