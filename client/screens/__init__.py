"""Screens of the client: lobby, room creation, the game, and the small dialogs."""
