"""Tests of the terminal client."""
