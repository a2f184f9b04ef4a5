"""The footer's keys, redrawn only when they change.

Textual's Footer rebuilds every key widget (each with its styles) on each `refresh_bindings()`, and the game screen
and its board ask for one on every state they show: a dozen rebuilds a move, most of the client's CPU per move
in the web front door (bench/web_bench.py; docs/performance.md). `refresh_keys` asks only when what the footer
would show — each key's binding, node and whether it is enabled, as `Screen.active_bindings` gives them — differs
from what it last asked the footer to show on that screen. Textual's own refreshes (focus moving, a screen
pushed) still go straight to the footer.
"""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from textual.dom import DOMNode
from textual.screen import Screen

_shown: WeakKeyDictionary[Screen[Any], tuple[object, ...]] = WeakKeyDictionary()


def _keys(screen: Screen[Any]) -> tuple[object, ...]:
    """What the footer shows on `screen` now (its active bindings, in order)."""
    return tuple(
        (key, id(active.node), active.binding, active.enabled, active.tooltip)
        for key, active in screen.active_bindings.items()
    )


def refresh_keys(node: DOMNode) -> None:
    """`node.refresh_bindings()`, skipped when the keys the footer would show on its screen have not changed."""
    if not node.is_attached:
        return
    screen = node.screen
    keys = _keys(screen)
    if _shown.get(screen) != keys:
        _shown[screen] = keys
        screen.refresh_bindings()
