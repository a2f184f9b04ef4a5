"""The Tron AI as it was before issue 18 (commit 8c7afd3), the "previous level 5" of bench/match.py, kept as data.

Played with `python -m bench.match --game tron --a 5 --b prev5`: level 5 of that revision (player `prev5`, or
`prevN` for its level N). Only for measuring progress; the server never imports it.

Until issue 38 this file was an 814-line copy of that revision's server/ai/tron_ai.py, kept up as code (typed,
linted). Now the revision's file itself is kept as data, byte for byte (`git show 8c7afd3:server/ai/tron_ai.py >
bench/data/tron_ai_8c7afd3.py.txt`; tests/bench/test_match.py checks it against the history when the checkout has
it), and run as a module of its own, unchanged: the copy differed from it only in its docstring, in type
annotations (for mypy) and in `limits_for(...).time_ms or 1`, which changes nothing (today's `time_limit_ms` is
never below 1). Like the copy, it imports today's `server.ai.levels`, `server.ai.search` and `server.games.tron`,
whose interfaces it still fits (tests/bench/test_match.py plays a move with it). Data rather than a read from git
history, so that a checkout without that history (a tarball, a shallow clone, CI's copy) plays it too.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

REVISION = "8c7afd3"
"""The commit whose Tron AI is the baseline: the last before issue 18's level 5."""
SOURCE = "server/ai/tron_ai.py"
"""Its path in that commit."""
DATA = Path(__file__).resolve().parent / "data" / f"tron_ai_{REVISION}.py.txt"
"""That file as it was in that commit."""


@cache
def load() -> ModuleType:
    """The revision's `SOURCE` run as a module (once a process), registered in sys.modules while it runs (its
    dataclasses look their module up there)."""
    name = f"bench.tron_baseline_{REVISION}"
    origin = f"{REVISION}:{SOURCE}"
    spec = importlib.util.spec_from_loader(name, loader=None, origin=origin)
    assert spec is not None  # spec_from_loader only gives None for a loader without a spec
    module = importlib.util.module_from_spec(spec)
    code = compile(DATA.read_text(), origin, "exec")
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def choose(
    state: Any, seat: int, *, level: int | None, bot: str | None, budget_ms: int, rng: random.Random
) -> tuple[int, dict[str, Any]]:
    """The baseline's direction for `seat` (a level's search or a named bot) and what it found, as its `choose`."""
    move, found = load().choose(state, seat, level=level, bot=bot, budget_ms=budget_ms, rng=rng)
    return move, found
