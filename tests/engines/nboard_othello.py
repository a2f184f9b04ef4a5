"""An NBoard Othello engine: `nboard 2`, `ping`/`pong`, `set game` with a GGF record, `go` answered by
`=== move/eval/time` after a status line; it plays the first legal square of the position the record reaches."""

from __future__ import annotations

import re
import sys

from gamenight.server.games.othello import Othello

GAME = Othello()
MOVE = re.compile(r"([BW])\[([^\]]*)\]")


def position(record: str):
    """The state a GGF record reaches (gamenight's standard start: the record's BO is checked for size only).

    As a real NBoard engine, it needs every pass in the record: a move by the wrong colour, or a pass missing or
    where none was forced, is a broken record, and the engine stops with exit code 4."""
    board = re.search(r"BO\[(\d+) ", record)
    state = GAME.initial_state({"size": int(board.group(1)) if board else 8})
    owed: int | None = None  # the seat the rules passed for: the record must say so next
    for colour, move in MOVE.findall(record.split("]", 1)[1] if "BO[" in record else record):
        seat = "BW".index(colour)
        square = move.split("/")[0].strip().lower()
        if square == "pa":
            if owed != seat:
                broken(f"{colour}[PA] where no pass was forced")
            owed = None
            continue
        if owed is not None or seat != state.turn:
            broken(f"{colour}[{square}] out of turn (a pass missing?)")
        state = GAME.apply(state, {state.turn: GAME.parse_move(state, square)})
        owed = state.passed
    if owed is not None:
        broken("the record ends without the pass the position forced")
    return state


def broken(why: str) -> None:
    """Stop as a confused engine would: a message on stderr and exit code 4."""
    print(f"broken record: {why}", file=sys.stderr, flush=True)
    sys.exit(4)


def main() -> None:
    """Answer NBoard commands on stdin until it closes."""
    state = GAME.initial_state({})
    for line in sys.stdin:
        command = line.strip()
        if command.startswith("ping"):
            print(f"pong {command.split()[1]}", flush=True)
        elif command.startswith("set game "):
            state = position(command[len("set game ") :].split("BO[", 1)[1])
        elif command == "go":
            legal = GAME.legal_moves(state, state.turn)
            print("status thinking", flush=True)
            square = GAME.format_move(state, legal[0]).upper() if legal else "PA"
            print(f"=== {square}/0.0/0.01", flush=True)


if __name__ == "__main__":
    main()
