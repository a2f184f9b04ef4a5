"""Small engines speaking each protocol of the engine adapter faithfully, for its tests (each runs as a script)."""
