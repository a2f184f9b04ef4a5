"""The Tron AI as it was before issue 18 (commit 8c7afd3), the "previous level 5" of bench/match.py, read from git.

Played with `python -m bench.match --game tron --a 5 --b prev5`: level 5 of that revision (player `prev5`, or
`prevN` for its level N). Only for measuring progress; the server never imports it.

Until issue 38 this file was an 814-line copy of that revision's server/ai/tron_ai.py. Now the revision's file
itself is read from the repository's history (`git show 8c7afd3:server/ai/tron_ai.py`) and run as a module of its
own, unchanged: the copy differed from it only in its docstring, in type annotations (for mypy) and in
`limits_for(...).time_ms or 1`, which changes nothing (today's `time_limit_ms` is never below 1). Like the copy, it
imports today's `server.ai.levels`, `server.ai.search` and `server.games.tron`, whose interfaces it still fits
(tests/bench/test_match.py plays a move with it). A checkout without that history (a tarball, a shallow clone) or
a machine without git cannot play `prevN`: loading it then raises `BaselineMissing`, saying which.
"""

from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

REVISION = "8c7afd3"
"""The commit whose Tron AI is the baseline: the last before issue 18's level 5."""
SOURCE = "server/ai/tron_ai.py"
"""Its path in that commit."""
ROOT = Path(__file__).resolve().parent.parent
"""The repository whose history holds the revision (this file's checkout)."""


class BaselineMissing(RuntimeError):
    """The baseline cannot be loaded: git is not installed, or the checkout's history does not hold the revision."""


def source(revision: str = REVISION) -> str:
    """The text of `SOURCE` at `revision`, from the history of the checkout this file is in."""
    command = ["git", "-C", str(ROOT), "show", f"{revision}:{SOURCE}"]
    try:
        shown = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except FileNotFoundError as error:
        raise BaselineMissing(
            f"prevN runs the Tron AI of commit {revision}, read with git: git is not installed"
        ) from error
    if shown.returncode != 0:
        raise BaselineMissing(
            f"prevN runs the Tron AI of commit {revision}, read from git history, which {ROOT} does not hold"
            f" (a tarball or a shallow clone; fetch the history first): {shown.stderr.strip()}"
        )
    return shown.stdout


@cache
def load(revision: str = REVISION) -> ModuleType:
    """`SOURCE` at `revision` run as a module (once a process), registered in sys.modules while it runs (its
    dataclasses look their module up there)."""
    name = f"bench.tron_baseline_{revision}"
    origin = f"git:{revision}:{SOURCE}"
    spec = importlib.util.spec_from_loader(name, loader=None, origin=origin)
    assert spec is not None  # spec_from_loader only gives None for a loader without a spec
    module = importlib.util.module_from_spec(spec)
    code = compile(source(revision), origin, "exec")
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
