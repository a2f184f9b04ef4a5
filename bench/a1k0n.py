"""Build a1k0n's 2010 Google AI Challenge winner (C++) with a given time per move, to play it with bench/match.py.

Usage (from the repository root; the source is not ours to ship, so it is fetched, not vendored):
    git clone https://github.com/a1k0n/tronbot /tmp/tronbot
    python -m bench.a1k0n --source /tmp/tronbot/cpp --ms 100
    python -m bench.match --game tron --a 5 --b "tron2010:bench/.build/a1k0n-100ms" --games 46 --ms 100 --jobs 2

The bot is compiled unchanged but for three `#define`s: its time per move (`TIMEOUT_USEC`, the contest's 990 ms
becomes 99% of `--ms`, as he used 99% of the contest's second), its first move's time (the contest gave 3 s; here
the same as every other move, so both sides get equal time from the first tick), and `VERBOSE` 0 (his debugging
maps on stderr cost time). It stops thinking on a SIGALRM timer at that wall-clock time, as in the contest.
Prints the built program's path.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

BUILD = Path(__file__).resolve().parent / ".build"
"""Where the built programs go (ignored by git)."""

DEFINES = {
    "#define TIMEOUT_USEC 990000": "#define TIMEOUT_USEC {usec}",
    "#define FIRSTMOVE_USEC 2950000": "#define FIRSTMOVE_USEC {usec}",
    "#define VERBOSE 2": "#define VERBOSE 0",
}
"""The lines of MyTronBot.cc changed, and what they become (`usec`: microseconds per move)."""


def patched_source(text: str, ms: int) -> str:
    """MyTronBot.cc's text with its time per move set to 99% of `ms` and its debugging output off."""
    usec = ms * 990
    for line, replacement in DEFINES.items():
        if text.count(line) != 1:
            raise ValueError(f"MyTronBot.cc does not hold {line!r} exactly once: not the source this expects")
        text = text.replace(line, replacement.format(usec=usec))
    return text


def build(source: Path, ms: int, out: Path | None = None) -> Path:
    """Compile `source`/MyTronBot.cc (with its artictbl.h) for `ms` per move, as his Makefile does; the path."""
    out = out or BUILD / f"a1k0n-{ms}ms"
    out.parent.mkdir(parents=True, exist_ok=True)
    text = patched_source((source / "MyTronBot.cc").read_text(), ms)
    with tempfile.TemporaryDirectory() as work:
        patched = Path(work) / "MyTronBot.cc"
        patched.write_text(text)
        command = ["g++", "-O3", "-funroll-loops", "-I", str(source), "-o", str(out), str(patched)]
        subprocess.run(command, check=True)
    return out


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, build, print the program's path."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True, help="the cpp/ folder of a clone of a1k0n/tronbot")
    parser.add_argument("--ms", type=int, default=100, help="time per move, in milliseconds")
    parser.add_argument("--out", type=Path, help="the program to write (default bench/.build/a1k0n-<ms>ms)")
    args = parser.parse_args(argv)
    try:
        path = build(args.source, args.ms, args.out)
    except (OSError, ValueError, subprocess.CalledProcessError) as error:
        print(f"cannot build: {error}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
