"""The TUI's screens: setup, advice, live sweep, results, sessions, and the modals."""
