"""Fixtures of the cluster tests: a real redis-server (skipped with a reason only if the binary is missing)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.redisproc import REDIS_SERVER, RedisProcess


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisProcess]:
    """A redis-server on a free port in a temporary folder, killed after the test."""
    if not os.access(REDIS_SERVER, os.X_OK):
        pytest.skip("redis-server is not installed (apt-get install redis-server); CI installs it")
    proc = RedisProcess(tmp_path / "redis").start()
    try:
        yield proc
    finally:
        proc.stop()
