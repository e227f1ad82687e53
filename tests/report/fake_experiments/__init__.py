"""Experiments that exist only for the report tests."""
