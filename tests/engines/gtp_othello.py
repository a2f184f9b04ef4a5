"""A GTP Othello engine as GRhino's gtp-rhino answers: its own board, `play`, `genmove` (the first legal square,
or `pass`), `undo`-free. Flags make it misbehave: `--slow-ms N` before its first genmove answer, `--crash-after N`
genmoves, `--illegal` (answers a square that is taken), `--noise` (writes to stderr)."""

from __future__ import annotations

import argparse
import sys
import time

from gamenight.server.games.othello import Othello

GAME = Othello()


def main() -> None:
    """Answer GTP commands on stdin until `quit`."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--slow-ms", type=int, default=0)
    parser.add_argument("--crash-after", type=int, default=0)
    parser.add_argument("--illegal", action="store_true")
    parser.add_argument("--noise", action="store_true")
    args = parser.parse_args()
    state, size, genmoves = GAME.initial_state({}), 8, 0
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if args.noise:
            print(f"thinking about {line.strip()}", file=sys.stderr, flush=True)
        command, answer = words[0], ""
        if command == "quit":
            print("=\n", flush=True)
            return
        if command == "boardsize":
            size = int(words[1])
        elif command == "clear_board":
            state = GAME.initial_state({"size": size})
        elif command == "play":
            if words[2] != "pass":
                state = GAME.apply(state, {state.turn: GAME.parse_move(state, words[2])})
        elif command == "genmove":
            genmoves += 1
            if args.crash_after and genmoves > args.crash_after:
                sys.exit(3)
            if args.slow_ms and genmoves == 1:
                time.sleep(args.slow_ms / 1000)
            legal = GAME.legal_moves(state, state.turn)
            if args.illegal:
                answer = "D4"
            elif legal:
                move = legal[0]
                answer = GAME.format_move(state, move).upper()
                state = GAME.apply(state, {state.turn: move})
            else:
                answer = "PASS"
        elif command not in ("time_left", "name", "protocol_version"):
            print(f"? unknown command {command}\n", flush=True)
            continue
        print(f"= {answer}\n", flush=True)


if __name__ == "__main__":
    main()
