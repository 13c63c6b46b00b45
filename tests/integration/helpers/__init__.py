"""Helpers for hayate's integration tests."""
