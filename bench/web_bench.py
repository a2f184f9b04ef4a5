"""The web front door's cost (issue 35): time from opening the page to the lobby, memory and idle CPU per session.

Usage (from the repository root, with the web and test extras and Debian's chromium):
    python -m bench.web_bench --tabs 10 --idle 20

Starts `gamenight-server --web 0` (a fresh database and data folder in a temporary folder), then opens `--tabs`
browser tabs one after the other in headless chromium, each in a context of its own (a new visitor: the name
prompt over the lobby), and times each from `goto` until the lobby's greeting line ("room(s) open") has reached the
tab's terminal. With every tab open and nothing pressed, it samples each client process's memory (RSS, and PSS,
which shares the common pages out) and, over `--idle` seconds, the CPU time of the clients and of the server.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

CHROMIUM = "/usr/bin/chromium"
LOBBY_TEXT = b"room(s) open"
TICKS = os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    """The server's web client processes (its children running gamenight.client)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid and b"gamenight.client" in command:
            found.append(int(stat.parent.name))
    return found


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def memory_kib(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of a process in KiB."""
    values = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("Rss", "Pss"):
            values[name] = int(rest.split()[0])
    return values["Rss"], values["Pss"]


async def open_tab(browser: Any, url: str) -> tuple[Any, float]:
    """A tab in a new context (a new visitor) and the seconds from opening the page to the lobby on its screen."""
    context = await browser.new_context(viewport={"width": 1200, "height": 800})
    page = await context.new_page()
    output = bytearray()
    shown = asyncio.Event()

    def received(payload: bytes | str) -> None:
        if isinstance(payload, bytes):
            output.extend(payload)
            if LOBBY_TEXT in output:
                shown.set()

    page.on("websocket", lambda socket: socket.on("framereceived", received))
    started = time.perf_counter()
    await page.goto(url)
    await asyncio.wait_for(shown.wait(), 120)
    return context, time.perf_counter() - started


async def measure(tabs: int, idle_s: float) -> dict[str, Any]:
    """Run the server, open the tabs, and measure."""
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "gamenight.server", "--port", "0", "--db", f"{folder}/games.db"]
        command += ["--log-level", "warning", "--ai-workers", "1", "--web", "0"]
        command += ["--web-sessions", str(tabs), "--web-per-address", str(tabs)]
        environment = dict(os.environ, XDG_DATA_HOME=f"{folder}/data")
        server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=environment)
        assert server.stdout is not None
        server.stdout.readline()
        port = server.stdout.readline().strip().rstrip("/").rsplit(":", 1)[1]
        url = f"http://127.0.0.1:{port}/"
        try:
            async with async_playwright() as driver:
                browser = await driver.chromium.launch(executable_path=CHROMIUM, headless=True)
                contexts, times = [], []
                for _ in range(tabs):
                    context, seconds = await open_tab(browser, url)
                    contexts.append(context)
                    times.append(seconds)
                clients = children(server.pid)
                await asyncio.sleep(2.0)  # let the last tab's start-up settle before the idle window
                memory = [memory_kib(pid) for pid in clients]
                before = {pid: cpu_seconds(pid) for pid in [*clients, server.pid]}
                await asyncio.sleep(idle_s)
                used = {pid: cpu_seconds(pid) - spent for pid, spent in before.items()}
                await browser.close()
        finally:
            server.terminate()
            server.wait(timeout=60)
    client_cpu = [used[pid] / idle_s * 100 for pid in clients]
    return {
        "tabs": tabs,
        "page_to_lobby_s": {
            "p50": round(statistics.median(times), 2),
            "max": round(max(times), 2),
            "first": round(times[0], 2),
            "all": [round(t, 2) for t in times],
        },
        "client_processes": len(clients),
        "rss_mib_per_session": round(statistics.mean(r for r, _ in memory) / 1024, 1),
        "pss_mib_per_session": round(statistics.mean(p for _, p in memory) / 1024, 1),
        "idle_cpu_percent_per_session": round(statistics.mean(client_cpu), 2),
        "idle_cpu_percent_server": round(used[server.pid] / idle_s * 100, 2),
        "idle_window_s": idle_s,
    }


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(prog="bench.web_bench", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tabs", type=int, default=10, help="browser tabs, opened one after the other (default 10)")
    parser.add_argument("--idle", type=float, default=20.0, help="seconds of the idle CPU window (default 20)")
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(measure(args.tabs, args.idle)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
