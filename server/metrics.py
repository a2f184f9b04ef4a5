"""What a running server measures about itself, served as JSON on `GET /metrics` when enabled.

Tick lateness (how long after its scheduled time each live-game tick ran) and event-loop lag (how
late a 10 ms sleep wakes) are the two numbers that say whether the loop keeps up; bench/load.py
reads them. Samples are kept in bounded rings so a long run costs no more memory than a short one.
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import time
from collections import deque
from typing import Any

RING = 20_000
PROBE_S = 0.010


def percentiles(samples: list[float] | deque[float]) -> dict[str, float | int]:
    """p50 / p90 / p99 / max of samples (in ms), and how many there were."""
    values = sorted(samples)
    if not values:
        return {"n": 0}

    def at(q: float) -> float:
        return round(values[min(len(values) - 1, int(q * len(values)))], 3)

    return {
        "n": len(values),
        "p50": at(0.50),
        "p90": at(0.90),
        "p99": at(0.99),
        "max": round(values[-1], 3),
        "mean": round(statistics.fmean(values), 3),
    }


class Metrics:
    """Counters and latency rings of one server process."""

    def __init__(self) -> None:
        self.tick_late_ms: deque[float] = deque(maxlen=RING)
        self.loop_lag_ms: deque[float] = deque(maxlen=RING)
        self.started = time.monotonic()

    def tick_late(self, ms: float) -> None:
        """Record one tick's lateness."""
        self.tick_late_ms.append(ms)

    def reset(self) -> None:
        """Forget the samples so far (a load run calls this when its warm-up ends)."""
        self.tick_late_ms.clear()
        self.loop_lag_ms.clear()

    async def probe_loop(self) -> None:
        """Forever: sleep 10 ms and record how late the wake-up was."""
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(PROBE_S)
            self.loop_lag_ms.append((loop.time() - before - PROBE_S) * 1000)

    def snapshot(self, **counts: Any) -> dict[str, Any]:
        """Everything, as a JSON-able map."""
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return {
            **counts,
            "pid": os.getpid(),
            "uptime_s": round(time.monotonic() - self.started, 3),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "rss_kib": _rss_kib(),
            "tick_late_ms": percentiles(self.tick_late_ms),
            "loop_lag_ms": percentiles(self.loop_lag_ms),
        }


def _rss_kib() -> int:
    """Current resident set size in KiB (Linux /proc; peak RSS elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
