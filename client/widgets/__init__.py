"""Widgets of the client: one board per kind of game, and the panels around them."""
