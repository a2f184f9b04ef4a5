"""The base of the client's full screens: typed access to the app they belong to."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import Screen

if TYPE_CHECKING:
    from gamenight.client.app import GameNightApp


class GameNightScreen(Screen[None]):
    """A screen of the gamenight app; `gamenight` is `app` with its real type, for the type checker."""

    @property
    def gamenight(self) -> GameNightApp:
        """The app, typed."""
        return self.app  # type: ignore[return-value]
