"""Waiting for something that takes a moment, with a hang guard (never a speed assertion)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

HANG_S = 60.0  # hang guard for conditions that take a moment (never a speed assertion)


async def eventually(check: Callable[[], Awaitable[bool]], what: str, every: float = 0.05) -> None:
    """Wait until `check()` is true, failing the test after HANG_S."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_S
    while not await check():
        if loop.time() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(every)
