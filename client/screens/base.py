"""The base of the client's full screens: the client state they draw, handed down when they are made."""

from __future__ import annotations

from textual.screen import Screen

from gamenight.client.state import ClientState


class GameNightScreen(Screen[None]):
    """A screen of the gamenight app. It reads `model` (never changes it) and redraws on `ModelChanged`;
    what the user does is posted up as one of `client.messages`' requests."""

    def __init__(self, model: ClientState) -> None:
        super().__init__()
        self.model = model
