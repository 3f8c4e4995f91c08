"""The Textual terminal UI: the only package allowed to import textual."""
