"""Run the real server with a thread that writes where its memory is, every 2 s (bench/soak.py `--breakdown`).

    python bench/memprobe.py OUT.jsonl [server arguments ...]

Starts `gamenight.server`'s own `main` with the given arguments in this process, and a daemon thread appending one
JSON line to OUT.jsonl every `EVERY_S` seconds:

- `rss_kib`: the process's resident memory (/proc/self/status);
- `sqlite_kib`: what SQLite holds from the C heap (`sqlite3_memory_used`: its page caches, schema, statements);
- `malloc_used_kib` / `malloc_free_kib`: glibc's heap in use (`uordblks` + `hblkhd`, SQLite's share included)
  and free but kept by the allocator (`fordblks`; `mallinfo2`);
- `blocks`: Python's allocated memory blocks (`sys.getallocatedblocks`), which counts live objects.

Every `TYPES_EVERY_S` seconds it also appends to OUT.jsonl's sibling OUT.types.jsonl the count of the objects the
garbage collector tracks, by type (the 40 commonest): what grows between two of those lines is what is kept.

What is left of the RSS beyond the C heap is pymalloc's arenas (small Python objects), the code and the stacks.
Only libc and SQLite as shared libraries are read (ctypes): glibc's `mallinfo2` (2.33+) and the system's
libsqlite3, which is the one Python's `sqlite3` module is linked to on Debian. A field whose function is missing
is left out.
"""

from __future__ import annotations

import collections
import ctypes
import ctypes.util
import gc
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

EVERY_S = 2.0
TYPES_EVERY_S = 60.0
TYPES_SHOWN = 150


class MallInfo2(ctypes.Structure):
    """glibc's `struct mallinfo2` (every field a size_t)."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def _library(name: str) -> ctypes.CDLL | None:
    """A shared library by its short name, or None."""
    found = ctypes.util.find_library(name)
    try:
        return ctypes.CDLL(found or f"lib{name}.so")
    except OSError:
        return None


def sampler(out: Path) -> None:
    """Append a sample to `out` every EVERY_S seconds, for as long as the process runs."""
    libc, sqlite = _library("c"), _library("sqlite3")
    mallinfo = getattr(libc, "mallinfo2", None)
    if mallinfo is not None:
        mallinfo.restype = MallInfo2
    memory_used = getattr(sqlite, "sqlite3_memory_used", None)
    if memory_used is not None:
        memory_used.restype = ctypes.c_int64
    started = last_types = time.monotonic()
    types = out.with_suffix(".types.jsonl")
    while True:
        if time.monotonic() - last_types >= TYPES_EVERY_S:
            last_types = time.monotonic()
            with types.open("a") as file:
                file.write(json.dumps({"t": round(last_types - started, 1), "types": type_counts()}) + "\n")
        sample: dict[str, Any] = {"t": round(time.monotonic() - started, 1), "blocks": sys.getallocatedblocks()}
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                sample["rss_kib"] = int(line.split()[1])
        if memory_used is not None:
            sample["sqlite_kib"] = memory_used() // 1024
        if mallinfo is not None:
            info = mallinfo()
            sample["malloc_used_kib"] = (info.uordblks + info.hblkhd) // 1024
            sample["malloc_free_kib"] = info.fordblks // 1024
        with out.open("a") as file:
            file.write(json.dumps(sample) + "\n")
        time.sleep(EVERY_S)


def type_counts() -> dict[str, int]:
    """The commonest types among the objects the garbage collector tracks, with their counts (the server freezes
    what it made at start-up, `gc.freeze`, so these are the objects made since); and, as "rooms by status", the
    rooms among them by their status (a closed room still alive is kept by something)."""
    found = gc.get_objects()
    counts = collections.Counter(f"{type(item).__module__}.{type(item).__qualname__}" for item in found)
    shown: dict[str, Any] = dict(counts.most_common(TYPES_SHOWN))
    rooms = collections.Counter(
        str(getattr(item, "status", "?"))
        for item in found
        if type(item).__module__ == "gamenight.server.room" and type(item).__name__ == "Room"
    )
    shown["rooms by status"] = dict(rooms)
    return shown


def main() -> int:
    """Start the sampler, then the server with the rest of the command line."""
    out = Path(sys.argv[1])
    threading.Thread(target=sampler, args=(out,), daemon=True).start()
    from gamenight.server.__main__ import main as server_main

    return server_main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
