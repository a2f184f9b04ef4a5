"""The host's processes from Linux's /proc, for tests that check which helper processes a server starts and leaves."""

from __future__ import annotations

import time
from pathlib import Path

HANG_S = 60.0
"""How long a wait for processes to appear or end lasts before it is called a hang (not a speed target)."""

HAS_PROC = Path("/proc/self/stat").exists()


def living() -> dict[int, tuple[int, int]]:
    """Every living process (zombies left out): pid -> (its parent's pid, its process group)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, parent, group = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue  # the process ended while we looked
        if state != "Z":
            found[int(stat.parent.name)] = (int(parent), int(group))
    return found


def grandchildren(pid: int) -> set[int]:
    """The living children of `pid`'s children: a server's AI and history workers (children of its forkserver)."""
    processes = living()
    children = {child for child, (parent, _) in processes.items() if parent == pid}
    return {child for child, (parent, _) in processes.items() if parent in children}


def in_group(group: int) -> set[int]:
    """The living processes of process group `group` (what a terminal's Ctrl+C reaches)."""
    return {pid for pid, (_, their_group) in living().items() if their_group == group}


def wait_for_grandchildren(pid: int, count: int) -> set[int]:
    """Wait until `pid` has at least `count` grandchildren (failing after HANG_S) and return them."""
    deadline = time.monotonic() + HANG_S
    while len(found := grandchildren(pid)) < count:
        assert time.monotonic() < deadline, f"only {len(found)} of {count} workers started"
        time.sleep(0.02)
    return found


def wait_group_gone(group: int) -> set[int]:
    """Wait until no process of `group` lives (at most HANG_S); returns those still alive then (empty: all gone)."""
    deadline = time.monotonic() + HANG_S
    while (left := in_group(group)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
