"""Reusable widgets of the specadvisor TUI, each with its own DEFAULT_CSS."""
