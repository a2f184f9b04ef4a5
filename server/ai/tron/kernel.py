"""Tron AI: the optional compiled kernel (`_tronkernel`), loaded once at import unless `GAMENIGHT_PURE_AI=1`."""

from __future__ import annotations

import os
from types import NotImplementedType
from typing import Protocol

from gamenight.server.ai.search import WIN
from gamenight.server.ai.tron import params
from gamenight.server.ai.tron.grid import Direction, Index, Mask

# -- the optional compiled kernel (issue 18, session 8) --------------------------------------------------------


class _Kernel(Protocol):
    """`_tronkernel` (server/ai/_tronkernel.c): level 5's leaf evaluation and, since session 10, its whole contact
    search in C, with exactly the results of the pure-Python functions of this package.

    Each function returns NotImplemented for a board it does not handle (wider than 61 squares); the pure code
    then runs."""

    CELL: int
    APART: int
    APART_CELL: int
    WIN: int
    DOOMED: int

    def split(
        self, free: Mask, stride: int, first: Index, second: Index, first_ahead: bool
    ) -> tuple[Mask, Mask, bool] | NotImplementedType: ...
    def chamber_value(
        self, territory: Mask, free: Mask, stride: int, head: Index, edge: int
    ) -> int | NotImplementedType: ...
    def chamber_fill(self, free: Mask, stride: int, head: Index) -> int | NotImplementedType: ...
    def chain_fill(self, free: Mask, stride: int, head: Index) -> int | NotImplementedType: ...
    def room_after(self, free: Mask, stride: int, head: Index) -> int | NotImplementedType: ...
    def greedy_ride(
        self, free: Mask, stride: int, head: Index, deadline: float
    ) -> tuple[list[Index], bool] | NotImplementedType: ...
    def territory_score(
        self,
        stride: int,
        free: Mask,
        first: Index,
        second: Index,
        first_ahead: bool,
        draw: int,
        edge: int,
        chains: bool,
    ) -> int | NotImplementedType: ...
    def contact_search(
        self,
        free: Mask,
        stride: int,
        ours: Index,
        theirs: Index,
        draw_penalty: int,
        edge: int,
        chains: bool,
        deadline: float,
        max_depth: int,
        reduction: int = ...,
        pinned_deadline: float = ...,
        tie_draw: int = ...,
    ) -> tuple[Direction, int, int, int, tuple[Direction, ...]] | NotImplementedType: ...


def _load_kernel() -> _Kernel | None:
    """The compiled kernel, unless `GAMENIGHT_PURE_AI=1` turns it off, it was not built (no C compiler at install
    time) or its weights are not `params`' own."""
    if os.environ.get("GAMENIGHT_PURE_AI") == "1":
        return None
    try:
        from gamenight.server.ai import _tronkernel
    except ImportError:
        return None
    kernel: _Kernel = _tronkernel
    if (kernel.CELL, kernel.APART, kernel.APART_CELL, kernel.WIN, kernel.DOOMED) != (
        params.CELL,
        params.APART,
        params.APART_CELL,
        WIN,
        params.DOOMED,
    ):
        return None
    return kernel


KERNEL = _load_kernel()
"""The compiled kernel in use, or None: the pure-Python code (read once, at import; `GAMENIGHT_PURE_AI=1` turns it
off). `_split`, `chamber_value` (parity off), `chamber_fill`, `chain_fill` and `territory_score` (chambers on,
parity off, no close-split rides: level 5's leaves) hand their work to it, all reading it here (`kernel.KERNEL`):
tests set it to None on this module for the pure path."""
